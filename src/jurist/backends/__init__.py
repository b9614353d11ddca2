"""Backends: one adapter per inference engine, all behind :class:`~jurist.backends.base.Backend`.

Engine modules import their heavy dependencies (vllm, torch, transformers, outlines_core) only inside the
functions that use them, so importing any backend module stays fast on machines without them.
"""

from __future__ import annotations

from jurist.backends.base import Backend
from jurist.backends.parallel import pool as parallel
from jurist.backends.registry import ENGINES, EngineEntry
from jurist.backends.scripted import ScriptedBackend
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError, ConfigError
from jurist.records import Completion, Constraint, ConstraintKind, GenerationRequest, Message

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "Constraint",
    "GenerationRequest",
    "Message",
    "ScriptedBackend",
    "check_engine_params",
    "constraint_kinds",
    "create_backend",
    "for_label_scores",
]


def check_engine_params(config: InferenceConfig) -> None:
    """Validate ``engine_params`` for the configured engine, before any model loads (a
    :class:`~jurist.errors.ConfigError` names the key). Remote engines take none."""
    config = parallel.split_config(config)[0]  # jurist's data_parallel (worker processes), for any engine
    check = _entry(config).check_params
    if check is not None:
        check(config.engine_params)
    elif config.engine_params:
        keys = ", ".join(config.engine_params)
        raise ConfigError(
            f"engine {config.engine.value} runs no local engine; engine_params ({keys}) do not apply",
            field="inference_config.engine_params",
        )


def constraint_kinds(config: InferenceConfig) -> tuple[ConstraintKind, ...]:
    """The constraint kinds the configured engine enforces, in its order of preference, known before any
    model loads."""
    return _entry(config).constraint_kinds(config)


def for_label_scores(config: InferenceConfig) -> InferenceConfig:
    """The config of an engine that a judge reading label probabilities runs on: on engine VLLM the lm_head
    in float32 unless ``engine_params.head_dtype`` says otherwise (NATIVE projects label scores in float32
    by itself; remote engines are not told)."""
    change = _entry(config).label_scores
    if change is None:
        return config
    return config.model_copy(update={"engine_params": change(config.engine_params)})


def create_backend(config: InferenceConfig) -> Backend:
    """The backend an inference config asks for (``engine``: VLLM, NATIVE, REMOTE_VLLM or OPENAI; see
    :data:`~jurist.backends.registry.ENGINES`); on NATIVE a sequence-classification model gets the reward
    backend; a remote server is checked to answer at all. ``engine_params.data_parallel: N`` runs N engine
    processes (:mod:`jurist.backends.parallel.pool`). Oumi's other engine names were mapped when the config
    loaded (ANTHROPIC and the other hosted APIs, REMOTE and SGLANG run on OPENAI; LLAMACPP, GOOGLE_VERTEX and
    BEDROCK are refused there, naming why)."""
    if parallel.DATA_PARALLEL_KEY in config.engine_params:
        inner, workers = parallel.split_config(config)
        if workers > 1:
            return parallel.DataParallelBackend.from_config(config, create_backend)
        config = inner
    return _entry(config).create(config)


def _entry(config: InferenceConfig) -> EngineEntry:
    entry = ENGINES.get(config.engine)
    if entry is None:
        known = ", ".join(e.value for e in ENGINES)
        raise BackendError(f"unknown inference engine {config.engine!r}; known: {known}")
    return entry
