"""Answers from a process that dies (``os._exit(9)``, as an engine killed by the kernel would) after serving
the number of requests its environment's ``JURIST_TEST_DIE_AFTER`` says (unset: never): for the worker
processes and Ray actors of the fault tests, each reading its own environment."""

from __future__ import annotations

import os
from collections.abc import Callable

from jurist.records import GenerationRequest


def dying(answer: Callable[[GenerationRequest], str]) -> Callable[[GenerationRequest], str]:
    """``answer``, in a process that dies after ``JURIST_TEST_DIE_AFTER`` requests."""
    left = int(os.environ.get("JURIST_TEST_DIE_AFTER", "0")) or None
    served = 0

    def respond(request: GenerationRequest) -> str:
        nonlocal served
        served += 1
        if left is not None and served > left:
            os._exit(9)
        return answer(request)

    return respond
