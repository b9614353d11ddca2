"""The one table of inference engines: for each engine name, how its backend is made, how its
``engine_params`` are checked, which constraint kinds it enforces, what it can do besides generating (its
capabilities: label scores, hidden states, reward models) and how its grammar backend compiles a constraint
(all known before any model loads).

Adding an engine is an entry here and an adapter module beside this one; nothing else lists engines.
Oumi's other engine names were mapped to these when the config loaded (:mod:`jurist.config.inference`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jurist.backends import grammar_check
from jurist.backends.base import Backend
from jurist.backends.hf import backend as transformers
from jurist.backends.hf import params as hf_params
from jurist.backends.hf import reward as hf_reward
from jurist.backends.remote import openai
from jurist.backends.vllm import backend as vllm
from jurist.backends.vllm import params as vllm_params
from jurist.config.inference import InferenceConfig
from jurist.config.types import InferenceEngine
from jurist.records import Capability, Constraint, ConstraintKind

Compile = Callable[[Constraint], str | None]
"""A grammar backend's check of a constraint: None when it compiles, else why not."""


@dataclass(frozen=True)
class GrammarCheck:
    """How an engine's grammar backend compiles constraints: its name for people (``label``), the
    constraint kinds the engine takes, and the check itself."""

    label: str
    kinds: tuple[ConstraintKind, ...]
    compile: Compile


@dataclass(frozen=True)
class EngineEntry:
    """One engine: ``create`` makes its backend; ``check_params`` validates ``engine_params`` (None: the
    engine takes none); ``constraint_kinds`` lists what it enforces, in its order of preference;
    ``capabilities``: what its backends can do besides generating (a judge whose scoring mode needs another
    is refused before any model loads); ``grammar`` says how the engine's grammar backend compiles a
    constraint (None: nothing to check here, as for a remote server, or the engine's libraries are not
    installed)."""

    create: Callable[[InferenceConfig], Backend]
    check_params: Callable[[Mapping[str, Any]], object] | None
    constraint_kinds: Callable[[InferenceConfig], tuple[ConstraintKind, ...]]
    capabilities: frozenset[Capability] = frozenset()
    grammar: Callable[[InferenceConfig], GrammarCheck | None] | None = None


def _native(config: InferenceConfig) -> Backend:
    """NATIVE: a sequence-classification model gets the reward backend, anything else the causal LM's."""
    if hf_reward.is_sequence_classifier(config):
        return hf_reward.TransformersRewardBackend(config)
    return transformers.TransformersBackend(config)


def _remote(config: InferenceConfig) -> Backend:
    """An OpenAI-compatible server, checked to answer at all."""
    backend = openai.OpenAIBackend(config)
    backend.check_reachable()
    return backend


def _remote_kinds(config: InferenceConfig) -> tuple[ConstraintKind, ...]:
    return openai.remote_constraint_kinds(config.engine)


def _vllm_grammar(config: InferenceConfig) -> GrammarCheck | None:
    """vLLM's structured-output backend (``engine_params.structured_outputs_backend``)."""
    # is vLLM there at all? (found, not imported: importing vLLM takes seconds, and guidance needs none of it)
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("llguidance") is None:
        return None
    name = vllm_params.engine_params(config.engine_params).structured_outputs_backend
    name = name or vllm_params.DEFAULT_STRUCTURED_BACKEND
    return GrammarCheck(
        f"vLLM's {name} structured-output backend",
        vllm.CONSTRAINT_KINDS,
        lambda c: grammar_check.vllm_problem(c, name),
    )


def _native_grammar(config: InferenceConfig) -> GrammarCheck | None:
    """outlines-core, which engine NATIVE builds its token masks with."""
    try:
        import outlines_core  # noqa: F401
    except ImportError:
        return None
    return GrammarCheck(
        "outlines-core (engine NATIVE)", transformers.CONSTRAINT_KINDS, grammar_check.outlines_core_problem
    )


LOCAL: frozenset[Capability] = frozenset({"label_scores", "hidden_states", "rewards"})
"""What an engine that runs the model in this process can do: its weights and states are at hand."""

ENGINES: Mapping[InferenceEngine, EngineEntry] = MappingProxyType(
    {
        InferenceEngine.VLLM: EngineEntry(
            vllm.VLLMBackend,
            vllm_params.engine_params,
            lambda _c: vllm.CONSTRAINT_KINDS,
            LOCAL,
            _vllm_grammar,
        ),
        InferenceEngine.NATIVE: EngineEntry(
            _native,
            hf_params.engine_params,
            lambda _c: transformers.CONSTRAINT_KINDS,
            LOCAL,
            _native_grammar,
        ),
        InferenceEngine.REMOTE_VLLM: EngineEntry(_remote, None, _remote_kinds),
        InferenceEngine.OPENAI: EngineEntry(_remote, None, _remote_kinds),
    }
)
