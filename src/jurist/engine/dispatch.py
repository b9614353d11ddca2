"""Dispatch: a chunk's pending rows -> one backend call per round -> each row's output.

Every round sends the requests of every pending row of the chunk in one call per request kind
(generation requests to ``generate``, label requests to ``score_labels``, reward requests to
``score_rewards``) and feeds each row's step its
answers, in request order. A step that needs more (a judge with several model calls per row) stays for the
next round. When a call raises (or answers with the wrong count), it is split until the failing requests are
found: only they get ``backend_error`` with the exception's text; nothing else is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from jurist.backends.base import Backend, LabelScorer, RewardScorer
from jurist.backends.engine_death import stop_if_dead
from jurist.engine.plan import ChunkPlan, RowTask
from jurist.errors import JuristError
from jurist.judges.base import Answer, Step
from jurist.judges.outputs import JudgeOutput
from jurist.judges.parts import Request
from jurist.records import (
    Completion,
    GenerationRequest,
    LabelRequest,
    LabelScores,
    RewardRequest,
    RewardScores,
)

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
    """Generation requests go to ``generate``, label requests to ``score_labels``, each kind in one call;
    the answers come back in request order."""
    generation = [i for i, r in enumerate(requests) if isinstance(r, GenerationRequest)]
    labels = [i for i, r in enumerate(requests) if isinstance(r, LabelRequest)]
    rewards = [i for i, r in enumerate(requests) if isinstance(r, RewardRequest)]
    answers: list[Answer | None] = [None] * len(requests)
    if generation:
        batch = [requests[i] for i in generation]
        for i, completion in zip(generation, generate(backend, batch), strict=True):  # type: ignore[arg-type]
            answers[i] = completion
    if labels:
        batch = [requests[i] for i in labels]
        for i, scored in zip(labels, score(backend, batch), strict=True):  # type: ignore[arg-type]
            answers[i] = scored
    if rewards:
        batch = [requests[i] for i in rewards]
        for i, rewarded in zip(rewards, reward(backend, batch), strict=True):  # type: ignore[arg-type]
            answers[i] = rewarded
    return [a for a in answers if a is not None]


def score(backend: Backend, requests: Sequence[LabelRequest]) -> list[LabelScores]:
    """Label scores for every request (``error`` ones when the backend cannot score labels, or for the
    requests a failing call is narrowed down to)."""
    if not isinstance(backend, LabelScorer):
        message = (
            f"backend {type(backend).__name__} cannot score labels; "
            "LOGPROBS and PROBE scoring need engine VLLM or NATIVE"
        )
        return [LabelScores(None, "error", error=message) for _ in requests]
    scorer = backend

    def call(batch: Sequence[LabelRequest]) -> list[LabelScores]:
        return scorer.score_labels(batch)

    def failed(message: str) -> LabelScores:
        return LabelScores(None, "error", error=message)

    return isolated(call, requests, failed, f"backend {backend.model_id} label scoring")


def reward(backend: Backend, requests: Sequence[RewardRequest]) -> list[RewardScores]:
    """Reward scores for every request (``error`` ones when the backend runs no sequence classifier, or
    for the requests a failing call is narrowed down to)."""
    if not isinstance(backend, RewardScorer):
        message = f"backend {type(backend).__name__} runs no reward model or classifier"
        return [RewardScores(None, "error", error=message) for _ in requests]
    scorer = backend

    def call(batch: Sequence[RewardRequest]) -> list[RewardScores]:
        return scorer.score_rewards(batch)

    def failed(message: str) -> RewardScores:
        return RewardScores(None, "error", error=message)

    return isolated(call, requests, failed, f"backend {backend.model_id} reward scoring")


def generate(backend: Backend, requests: Sequence[GenerationRequest]) -> list[Completion]:
    """One completion per request (``error`` ones for the requests a failing call is narrowed down to)."""

    def failed(message: str) -> Completion:
        return Completion("", "error", error=message)

    return isolated(backend.generate, requests, failed, f"backend {backend.model_id}")


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
