"""The one table of inference engines: for each engine name, how its backend is made, how its
``engine_params`` are checked and which constraint kinds it enforces (known before any model loads).

Adding an engine is an entry here and an adapter module beside this one; nothing else lists engines.
Oumi's other engine names were mapped to these when the config loaded (:mod:`jurist.config.inference`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jurist.backends import hf_reward, openai, transformers, vllm, vllm_params
from jurist.backends.base import Backend, ConstraintKind
from jurist.config.inference import InferenceConfig
from jurist.config.types import InferenceEngine


@dataclass(frozen=True)
class EngineEntry:
    """One engine: ``create`` makes its backend; ``check_params`` validates ``engine_params`` (None: the
    engine takes none); ``constraint_kinds`` lists what it enforces, in its order of preference;
    ``label_scores`` turns ``engine_params`` into those of an engine that scores labels (None: unchanged)."""

    create: Callable[[InferenceConfig], Backend]
    check_params: Callable[[Mapping[str, Any]], object] | None
    constraint_kinds: Callable[[InferenceConfig], tuple[ConstraintKind, ...]]
    label_scores: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None


def _native(config: InferenceConfig) -> Backend:
    """NATIVE: a sequence-classification model gets the reward backend, anything else the causal LM's."""
    if hf_reward.is_sequence_classifier(config):
        return hf_reward.TransformersRewardBackend(config)
    return transformers.TransformersBackend(config)


def _remote(config: InferenceConfig) -> Backend:
    """An OpenAI-compatible server, checked to answer at all."""
    backend = openai.OpenAIBackend(config)
    backend.probe()
    return backend


def _remote_kinds(config: InferenceConfig) -> tuple[ConstraintKind, ...]:
    return openai.remote_constraint_kinds(config.engine)


ENGINES: Mapping[InferenceEngine, EngineEntry] = MappingProxyType(
    {
        InferenceEngine.VLLM: EngineEntry(
            vllm.VLLMBackend,
            vllm_params.engine_params,
            lambda _c: vllm.CONSTRAINT_KINDS,
            vllm_params.for_label_scores,
        ),
        InferenceEngine.NATIVE: EngineEntry(
            _native, transformers.engine_params, lambda _c: transformers.CONSTRAINT_KINDS
        ),
        InferenceEngine.REMOTE_VLLM: EngineEntry(_remote, None, _remote_kinds),
        InferenceEngine.OPENAI: EngineEntry(_remote, None, _remote_kinds),
    }
)
