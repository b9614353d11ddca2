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
from jurist.records import Capability, Completion, Constraint, ConstraintKind, GenerationRequest, Message

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "Constraint",
    "GenerationRequest",
    "Message",
    "ScriptedBackend",
    "check_capability",
    "check_engine_params",
    "constraint_kinds",
    "create_backend",
    "engines_with",
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


def engines_with(capability: Capability) -> list[str]:
    """The engines that can do ``capability`` (:data:`~jurist.backends.registry.ENGINES`), by name."""
    return [engine.value for engine, entry in ENGINES.items() if capability in entry.capabilities]


def check_capability(config: InferenceConfig, capability: Capability | None, needed: str) -> None:
    """Refuse (a :class:`~jurist.errors.ConfigError` naming the engines that can) an engine that cannot do
    ``capability``; ``needed`` says who needs it, e.g. ``judge_params.scoring PROBE reads the model's hidden
    states``."""
    if capability is None:
        return
    engine = parallel.split_config(config)[0].engine
    if capability not in _entry(config).capabilities:
        able = engines_with(capability)
        raise ConfigError(
            f"{needed}: it needs engine {' or '.join(able)}, not {engine.value}",
            field="inference_config.engine",
        )


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
