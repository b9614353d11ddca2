"""Backends: one adapter per inference engine, all behind :class:`~jurist.backends.base.Backend`.

Engine modules import their heavy dependencies (vllm, torch, transformers, outlines_core) only inside the
functions that use them, so importing any backend module stays fast on machines without them.
"""

from __future__ import annotations

from jurist.backends import hf_reward, parallel, transformers, vllm
from jurist.backends.base import (
    ALL_CONSTRAINT_KINDS,
    Backend,
    Completion,
    Constraint,
    ConstraintKind,
    GenerationRequest,
    Message,
)
from jurist.backends.openai import OpenAIBackend
from jurist.backends.scripted import ScriptedBackend
from jurist.config.inference import InferenceConfig
from jurist.config.types import InferenceEngine
from jurist.errors import BackendError, ConfigError

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
]


def check_engine_params(config: InferenceConfig) -> None:
    """Validate ``engine_params`` for the configured engine, before any model loads (a
    :class:`~jurist.errors.ConfigError` names the key). Remote engines take none."""
    config = parallel.split_config(config)[0]  # jurist's data_parallel (worker processes), for any engine
    if config.engine is InferenceEngine.VLLM:
        vllm.engine_params(config.engine_params)
    elif config.engine is InferenceEngine.NATIVE:
        transformers.engine_params(config.engine_params)
    elif config.engine_params:
        keys = ", ".join(config.engine_params)
        raise ConfigError(
            f"engine {config.engine.value} runs no local engine; engine_params ({keys}) do not apply",
            field="inference_config.engine_params",
        )


def constraint_kinds(config: InferenceConfig) -> tuple[ConstraintKind, ...]:
    """The constraint kinds the configured engine enforces, in its order of preference, known before any
    model loads."""
    if config.engine is InferenceEngine.OPENAI:
        return ("json_schema",)
    return ALL_CONSTRAINT_KINDS


def create_backend(config: InferenceConfig) -> Backend:
    """The backend an inference config asks for (``engine``: VLLM, NATIVE, REMOTE_VLLM or OPENAI); on NATIVE a
    sequence-classification model gets the reward backend; a remote server is checked to answer at all.
    ``engine_params.data_parallel: N`` runs N engine processes (:mod:`jurist.backends.parallel`).
    Oumi's other engine names were mapped when the config loaded (ANTHROPIC and the other hosted APIs, REMOTE
    and SGLANG run on OPENAI; LLAMACPP, GOOGLE_VERTEX and BEDROCK are refused there, naming why)."""
    if parallel.DATA_PARALLEL_KEY in config.engine_params:
        inner, workers = parallel.split_config(config)
        if workers > 1:
            return parallel.DataParallelBackend.from_config(config, create_backend)
        config = inner
    engine = config.engine
    backend: Backend
    if engine is InferenceEngine.VLLM:
        backend = vllm.VLLMBackend(config)
    elif engine is InferenceEngine.NATIVE and hf_reward.is_sequence_classifier(config):
        backend = hf_reward.TransformersRewardBackend(config)
    elif engine is InferenceEngine.NATIVE:
        backend = transformers.TransformersBackend(config)
    elif engine in (InferenceEngine.REMOTE_VLLM, InferenceEngine.OPENAI):
        remote = OpenAIBackend(config)
        remote.probe()
        backend = remote
    else:
        raise BackendError(
            f"unknown inference engine {engine!r}; known: {', '.join(e.value for e in InferenceEngine)}"
        )
    return backend
