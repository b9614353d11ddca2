"""Judge configs: types (:mod:`.types`), the pydantic models (:mod:`.models`, :mod:`.inference`), Oumi's
value rules (:mod:`.rules`) and loading (:mod:`.loading`: YAML, built-ins, overrides, error messages).

This package re-exports the public names; modules inside jurist import the submodules directly.
"""

from jurist.config.inference import GenerationParams, InferenceConfig, ModelParams, RemoteParams
from jurist.config.loading import (
    BUILTIN_PREFIX,
    apply_overrides,
    builtin_judges_dir,
    config_to_yaml,
    format_validation_error,
    iter_text_fields,
    list_builtin_judges,
    load_judge_config,
    parse_cli_overrides,
    parse_override_value,
)
from jurist.config.models import (
    Criterion,
    JudgeConfig,
    JudgeParams,
    PairLabels,
    PairwiseJudgeParams,
    RubricJudgeParams,
)
from jurist.config.types import (
    IDENTIFIER,
    Aggregation,
    InferenceEngine,
    JudgmentType,
    ResponseFormat,
    ScoringMode,
)

__all__ = [
    "BUILTIN_PREFIX",
    "IDENTIFIER",
    "Aggregation",
    "Criterion",
    "GenerationParams",
    "InferenceConfig",
    "InferenceEngine",
    "JudgeConfig",
    "JudgeParams",
    "JudgmentType",
    "ModelParams",
    "PairLabels",
    "PairwiseJudgeParams",
    "RemoteParams",
    "ResponseFormat",
    "RubricJudgeParams",
    "ScoringMode",
    "apply_overrides",
    "builtin_judges_dir",
    "config_to_yaml",
    "format_validation_error",
    "iter_text_fields",
    "list_builtin_judges",
    "load_judge_config",
    "parse_cli_overrides",
    "parse_override_value",
]
