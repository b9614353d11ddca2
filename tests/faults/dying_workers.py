"""A backend factory for data-parallel worker processes (imported by name in each): the scripted backend,
whose process dies (``os._exit``, as an engine killed by the kernel would) after serving the number of
requests its environment's ``JURIST_TEST_DIE_AFTER`` says."""

from __future__ import annotations

import os

from scripted_runs import answer

from jurist import ScriptedBackend
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.records import GenerationRequest


def mortal() -> Backend:
    left = int(os.environ.get("JURIST_TEST_DIE_AFTER", "0")) or None
    served = 0

    def respond(request: GenerationRequest) -> str:
        nonlocal served
        served += 1
        if left is not None and served > left:
            os._exit(9)
        return answer(request)

    return ScriptedBackend(respond)


def mortal_for(config: InferenceConfig) -> Backend:
    """:func:`mortal` as an ``Engine(backend_factory=...)`` (Ray actors call it with the judge's config)."""
    return mortal()
