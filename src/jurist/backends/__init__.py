"""Backends: one adapter per inference engine, all behind :class:`~jurist.backends.base.Backend`.

Engine modules import their heavy dependencies (vllm, torch, transformers) only when a backend is
created, so importing jurist stays fast on machines without them.
"""

from __future__ import annotations

from jurist.backends.base import Backend, Completion, Constraint, GenerationRequest, Message
from jurist.backends.scripted import ScriptedBackend
from jurist.config import InferenceConfig, InferenceEngine
from jurist.errors import BackendError

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "Constraint",
    "GenerationRequest",
    "Message",
    "ScriptedBackend",
    "create_backend",
]


def create_backend(config: InferenceConfig) -> Backend:
    """The backend an inference config asks for (``engine``: VLLM, NATIVE, REMOTE_VLLM or OPENAI)."""
    engine = config.engine
    if engine is InferenceEngine.VLLM:
        from jurist.backends.vllm import VLLMBackend

        backend: Backend = VLLMBackend(config)
        return backend
    if engine is InferenceEngine.NATIVE:
        from jurist.backends.transformers import TransformersBackend

        backend = TransformersBackend(config)
        return backend
    if engine in (InferenceEngine.REMOTE_VLLM, InferenceEngine.OPENAI):
        from jurist.backends.openai import OpenAIBackend

        backend = OpenAIBackend(config)
        return backend
    raise BackendError(
        f"unknown inference engine {engine!r}; known: {', '.join(e.value for e in InferenceEngine)}"
    )
