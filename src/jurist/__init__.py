"""jurist: a local-model judging engine.

Judges are Oumi-style configs (YAML or Python); :class:`Engine` renders one prompt per (row, judge),
constrains each answer with the judge's output schema, runs every prompt of a chunk through one batched
inference call and returns one Arrow row per input row.

    >>> from jurist import Engine, ScriptedBackend
    >>> backend = ScriptedBackend(['{"explanation": "ok", "judgment": "Yes"}'], cycle=True)
    >>> engine = Engine("generic/truthfulness", backend)
    >>> engine.run([{"request": "2+2?", "response": "4"}])["truthfulness.judgment"].to_pylist()
    ['Yes']
"""

from __future__ import annotations

from jurist.api import RubricJudge, SimpleJudge
from jurist.backends import Backend, Completion, GenerationRequest, Message, ScriptedBackend, create_backend
from jurist.config import (
    Aggregation,
    Criterion,
    InferenceConfig,
    InferenceEngine,
    JudgeConfig,
    JudgeParams,
    JudgmentType,
    ResponseFormat,
    RubricJudgeParams,
    list_builtin_judges,
    load_judge_config,
)
from jurist.engine import Engine, RunSummary
from jurist.errors import BackendError, ConfigError, InputError, JuristError
from jurist.io import InputData, read_input
from jurist.judge import Judge
from jurist.results import JudgeOutput

__version__ = "0.1.0"

__all__ = [
    "Aggregation",
    "Backend",
    "BackendError",
    "Completion",
    "ConfigError",
    "Criterion",
    "Engine",
    "GenerationRequest",
    "InferenceConfig",
    "InferenceEngine",
    "InputData",
    "InputError",
    "Judge",
    "JudgeConfig",
    "JudgeOutput",
    "JudgeParams",
    "JudgmentType",
    "JuristError",
    "Message",
    "ResponseFormat",
    "RubricJudge",
    "RubricJudgeParams",
    "RunSummary",
    "ScriptedBackend",
    "SimpleJudge",
    "__version__",
    "create_backend",
    "list_builtin_judges",
    "load_judge_config",
    "read_input",
]
