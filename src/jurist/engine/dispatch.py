"""Dispatch: a chunk's pending rows -> one backend call per round -> each row's output.

Every round sends the requests of every pending row of the chunk in one call per request type (each type
names the backend method that answers it: generation requests to ``generate``, label requests to
``score_labels``, reward requests to ``score_rewards``, state requests to ``hidden_states``) and feeds each
row's step its answers, in request order. A step that needs more (a judge with several model calls per row)
stays for the next round. When a call raises (or answers with the wrong count), it is split until the
failing requests are found: only they get ``backend_error`` with the exception's text; nothing else is
lost. A backend without the method a request type needs answers each such request with an error saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from jurist.backends.base import Backend, call
from jurist.backends.engine_death import stop_if_dead
from jurist.engine.plan import ChunkPlan, RowTask
from jurist.errors import JuristError
from jurist.judges.base import Step
from jurist.judges.outputs import JudgeOutput
from jurist.records import FAILED, REQUEST_TYPES, Answer, Completion, GenerationRequest, Request

logger = logging.getLogger("jurist")
R = TypeVar("R")
A = TypeVar("A")


def run_plan(backend: Backend, plan: ChunkPlan, tally: Any = None) -> dict[str, list[JudgeOutput]]:
    """Answer every task of a chunk plan, round after round; the outputs by judge, in row order.
    ``tally.requests`` (when given) counts the requests sent."""
    pending = list(plan.tasks)
    while pending:
        requests = [request for task in pending for request in task.step.requests]
        if tally is not None:
            tally.requests += len(requests)
        answers = answer(backend, requests)
        waiting: list[RowTask] = []
        position = 0
        for task in pending:
            count = len(task.step.requests)
            result = task.step.finish(answers[position : position + count])
            position += count
            if isinstance(result, Step):
                waiting.append(RowTask(task.judge, task.index, result))
            else:
                plan.outputs[task.judge.name][task.index] = result
        pending = waiting
    return plan.results()


def answer(backend: Backend, requests: Sequence[Request]) -> list[Answer]:
    """Each request type's requests in one call to the backend method that answers them (a failing call
    narrowed down: :func:`isolated`); the answers come back in request order."""
    answers: list[Answer | None] = [None] * len(requests)
    for kind in REQUEST_TYPES:
        chosen = [i for i, r in enumerate(requests) if type(r) is kind]
        if not chosen:
            continue

        def send(batch: Sequence[Request], kind: type[Request] = kind) -> list[Answer]:
            return call(backend, kind, batch)

        what = f"backend {backend.model_id}" + ("" if kind.method == "generate" else f" ({kind.action})")
        for i, found in zip(
            chosen, isolated(send, [requests[i] for i in chosen], FAILED[kind], what), strict=True
        ):
            answers[i] = found
    return [a for a in answers if a is not None]


def generate(backend: Backend, requests: Sequence[GenerationRequest]) -> list[Completion]:
    """One completion per request (``error`` ones for the requests a failing call is narrowed down to)."""
    return answer(backend, requests)  # type: ignore[return-value]


def isolated(
    call: Callable[[Sequence[R]], list[A]],
    requests: Sequence[R],
    failed: Callable[[str], A],
    what: str,
    depth: int = 0,
) -> list[A]:
    """``call(requests)``, with one answer per request whatever happens: a call that raises (or answers with
    the wrong count) is split in halves and each half tried again, down to single requests, so only the
    requests that fail on their own get ``failed(<the exception's text>)``. A
    :class:`~jurist.errors.JuristError` (the backend cannot run at all) is raised, not recorded per request.
    """
    if not requests:
        return []
    try:
        answers = call(requests)
        problem = (
            None if len(answers) == len(requests) else f"{len(answers)} answers for {len(requests)} requests"
        )
    except JuristError:  # the backend cannot run at all (not installed, no model, no server): the run stops
        raise
    except Exception as exc:
        stop_if_dead(exc)  # an engine that died fails every request: stop instead of recording each
        problem = f"{type(exc).__name__}: {exc}"
        if depth == 0:
            logger.warning(
                "%s failed on a batch of %d requests: %s", what, len(requests), problem, exc_info=True
            )
    if problem is None:
        return answers
    if len(requests) == 1:
        return [failed(problem)]
    middle = len(requests) // 2
    return [
        *isolated(call, requests[:middle], failed, what, depth + 1),
        *isolated(call, requests[middle:], failed, what, depth + 1),
    ]
