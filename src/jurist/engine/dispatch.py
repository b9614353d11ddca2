"""Dispatch: a chunk's pending rows -> one backend call per round -> each row's output.

Every round sends the requests of every pending row of the chunk in one call per request kind
(generation requests to ``generate``, label requests to ``score_labels``) and feeds each row's step its
answers, in request order. A step that needs more (a judge with several model calls per row) stays for the
next round. A backend that raises, or answers with the wrong count, fails the requests of that call with
the exception's text; nothing else is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from jurist.backends.base import (
    Backend,
    Completion,
    GenerationRequest,
    LabelRequest,
    LabelScorer,
    LabelScores,
)
from jurist.engine.plan import ChunkPlan, RowTask
from jurist.judges.base import Answer, Step
from jurist.judges.outputs import JudgeOutput
from jurist.judges.parts import Request

logger = logging.getLogger("jurist")


def run_plan(backend: Backend, plan: ChunkPlan) -> dict[str, list[JudgeOutput]]:
    """Answer every task of a chunk plan, round after round; the outputs by judge, in row order."""
    pending = list(plan.tasks)
    while pending:
        requests = [request for task in pending for request in task.step.requests]
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
    answers: list[Answer | None] = [None] * len(requests)
    if generation:
        batch = [requests[i] for i in generation]
        for i, completion in zip(generation, generate(backend, batch), strict=True):  # type: ignore[arg-type]
            answers[i] = completion
    if labels:
        batch = [requests[i] for i in labels]
        for i, scored in zip(labels, score(backend, batch), strict=True):  # type: ignore[arg-type]
            answers[i] = scored
    return [a for a in answers if a is not None]


def score(backend: Backend, requests: Sequence[LabelRequest]) -> list[LabelScores]:
    """Label scores for every request (``error`` ones when the backend cannot score labels or fails)."""
    if not isinstance(backend, LabelScorer):
        message = f"backend {type(backend).__name__} cannot score labels; LOGPROBS scoring needs engine VLLM"
        return [LabelScores(None, "error", error=message) for _ in requests]
    try:
        scored = backend.score_labels(requests)
    except Exception as exc:
        logger.exception("backend %s failed to score %d label requests", backend.model_id, len(requests))
        return [LabelScores(None, "error", error=f"{type(exc).__name__}: {exc}") for _ in requests]
    if len(scored) != len(requests):
        message = f"backend returned {len(scored)} label scores for {len(requests)} requests"
        return [LabelScores(None, "error", error=message) for _ in requests]
    return scored


def generate(backend: Backend, requests: Sequence[GenerationRequest]) -> list[Completion]:
    """One completion per request (``error`` ones when the backend fails as a whole)."""
    if not requests:
        return []
    try:
        completions = backend.generate(requests)
    except Exception as exc:  # the engine failed as a whole: every request of the call gets the error
        logger.exception("backend %s failed on a batch of %d requests", backend.model_id, len(requests))
        message = f"{type(exc).__name__}: {exc}"
        return [Completion("", "error", error=message) for _ in requests]
    if len(completions) != len(requests):
        message = f"backend returned {len(completions)} completions for {len(requests)} requests"
        return [Completion("", "error", error=message) for _ in requests]
    return completions
