"""jurist: a local-model judging engine.

Judges are Oumi-style configs (YAML or Python); :class:`Engine` renders one prompt per (row, judge),
constrains each answer with the judge's output schema, runs every prompt of a chunk through one batched
inference call and returns one Arrow row per input row. :func:`launch` is the front door the command line
uses for runs into a results file that survives a crash (a :class:`RunSpec`: judges, rows, options, a
cascade; placed by a :class:`Placement`: data-parallel engines, Ray). :class:`LLMJudge` is scikit-plots'
RAG judge and :class:`LLM` its model wrapper, with scikit-plots' names (:mod:`jurist.scikitplots.llm_judge`).

    >>> from jurist import Engine, ScriptedBackend
    >>> backend = ScriptedBackend(['{"explanation": "ok", "judgment": "Yes"}'], cycle=True)
    >>> engine = Engine("graded/truthfulness", backend)
    >>> engine.run([{"request": "2+2?", "response": "4"}])["truthfulness.judgment"].to_pylist()
    ['Yes']
"""

from __future__ import annotations

from jurist._version import __version__
from jurist.api import JudgeConfig, RubricJudge, SimpleJudge
from jurist.backends import Backend, Completion, GenerationRequest, Message, ScriptedBackend, create_backend
from jurist.config.inference import InferenceConfig
from jurist.config.loading import list_builtin_judges, load_judge_config
from jurist.config.models import Criterion, JudgeParams, RubricJudgeParams
from jurist.config.types import Aggregation, InferenceEngine, JudgmentType, ResponseFormat
from jurist.conversation import EvalJudge, JudgeVerdict, VerdictCache, judge_conversations
from jurist.engine.core import Engine
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import BackendError, ConfigError, InputError, JuristError
from jurist.io.readers import InputData, read_input
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.jury import llm_jury, llm_jury_pairwise
from jurist.launch import Launch, Placement, launch
from jurist.scikitplots.evaluate import evaluate_answers
from jurist.scikitplots.llm_judge import LLM, LLMJudge, make_llm
from jurist.scikitplots.results import JudgementError, JudgeResult

__all__ = [
    "LLM",
    "Aggregation",
    "Backend",
    "BackendError",
    "Completion",
    "ConfigError",
    "Criterion",
    "Engine",
    "EvalJudge",
    "GenerationRequest",
    "InferenceConfig",
    "InferenceEngine",
    "InputData",
    "InputError",
    "Judge",
    "JudgeConfig",
    "JudgeOutput",
    "JudgeParams",
    "JudgeResult",
    "JudgeVerdict",
    "JudgementError",
    "JudgmentType",
    "JuristError",
    "LLMJudge",
    "Launch",
    "Message",
    "Placement",
    "ResponseFormat",
    "RubricJudge",
    "RubricJudgeParams",
    "RunOptions",
    "RunSpec",
    "RunSummary",
    "ScriptedBackend",
    "Selection",
    "SimpleJudge",
    "VerdictCache",
    "__version__",
    "create_backend",
    "evaluate_answers",
    "judge_conversations",
    "launch",
    "list_builtin_judges",
    "llm_jury",
    "llm_jury_pairwise",
    "load_judge_config",
    "make_llm",
    "read_input",
]
