"""A backend factory for data-parallel worker processes (imported by name in each): the scripted backend,
whose process dies (``os._exit``, as an engine killed by the kernel would) after serving the number of
requests its environment's ``JURIST_TEST_DIE_AFTER`` says."""

from __future__ import annotations

from scripted_runs import answer

from jurist import ScriptedBackend
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from mortal import dying


def mortal() -> Backend:
    return ScriptedBackend(dying(answer))


def mortal_for(config: InferenceConfig) -> Backend:
    """:func:`mortal` as an ``Engine(backend_factory=...)`` (Ray actors call it with the judge's config)."""
    return mortal()
