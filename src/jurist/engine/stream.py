"""Judging a stream of chunks with one group of judges on one backend, results in input order.

Two schedules, the same results:

* **continuous** (a backend that can :meth:`~jurist.backends.base.StreamingBackend.stream`): a
  :class:`Feed` plans chunks ahead (at most ``max_open`` at a time) and hands their requests to the backend
  while earlier ones still decode, so the engine never waits for a chunk's slowest row. Answers come back in
  any order; a chunk is yielded once all its rows have their output, and chunks are yielded in order.
* **chunked** (any other backend, and judges that score labels or rewards, which have no decode tail):
  each chunk is
  planned, answered round by round (:func:`~jurist.engine.dispatch.run_plan`) and yielded in turn.

If a stream fails as a whole, the requests it had taken and not answered are answered one batch at a time
instead, where a failing batch is split until the failing requests are found
(:func:`~jurist.engine.dispatch.generate`); the stream then resumes.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from jurist.backends.base import Backend, StreamingBackend
from jurist.backends.engine_death import stop_if_dead
from jurist.engine.dispatch import generate, run_plan
from jurist.engine.lazy import LazyBackend
from jurist.engine.plan import ChunkPlan, RowTask, chunk_row_ids, plan_chunk
from jurist.engine.window import MAX_OPEN_CHUNKS, RequestWindow
from jurist.errors import JuristError
from jurist.io.sources import Chunk
from jurist.judges.base import Step
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.records import Answer, ConstraintKind, GenerationRequest

logger = logging.getLogger("jurist")

Outputs = dict[str, list[JudgeOutput]]


@dataclass
class Tally:
    """Requests sent to the model so far (a resumed run sends none for its committed rows)."""

    requests: int = 0


def judge_chunks(
    judges: Sequence[Judge],
    backend: Backend,
    chunks: Iterator[Chunk],
    id_column: str | None,
    *,
    max_open: int = MAX_OPEN_CHUNKS,
    tally: Tally | None = None,
) -> Iterator[tuple[Chunk, Outputs]]:
    """Every chunk with its outputs (per judge, in row order), in input order.

    Chunks are planned one by one until one needs the model; a backend that loads lazily loads then, and if
    it streams, that chunk and the rest go through the continuous schedule.
    """
    kinds = backend.constraint_kinds
    tally = tally if tally is not None else Tally()
    prefill_only = any(not j.kind.generates for j in judges)
    for chunk in chunks:
        ids = chunk_row_ids(chunk, id_column)
        plan = plan_chunk(judges, chunk.rows(), ids, chunk.errors, kinds)
        if plan.tasks and not prefill_only:
            real = backend.real() if isinstance(backend, LazyBackend) else backend
            if isinstance(real, StreamingBackend):
                rest = itertools.chain([chunk], chunks)
                yield from _continuous(judges, real, rest, id_column, kinds, max_open, tally)
                return
        yield chunk, run_plan(backend, plan, tally)


@dataclass
class _Open:
    """A chunk being judged: its plan, and how many of its tasks still wait for answers."""

    chunk: Chunk
    plan: ChunkPlan
    pending: int


@dataclass
class _Waiting:
    """One task's step, waiting for the answers to its requests."""

    state: _Open
    task: RowTask
    answers: list[Answer | None]
    missing: int


class Feed:
    """Plans chunks ahead, gives out their requests, takes answers back, yields finished chunks in order."""

    def __init__(
        self,
        judges: Sequence[Judge],
        chunks: Iterator[Chunk],
        id_column: str | None,
        kinds: Sequence[ConstraintKind],
        max_open: int = MAX_OPEN_CHUNKS,
        tally: Tally | None = None,
    ) -> None:
        self._tally = tally if tally is not None else Tally()
        self._judges = judges
        self._chunks = chunks
        self._id_column = id_column
        self._kinds = kinds
        self._window: RequestWindow[_Open, tuple[_Waiting, int]] = RequestWindow(max_open)
        self.outstanding: dict[int, GenerationRequest] = {}  # taken, not yet answered
        self.events = 0  # chunks opened, answers taken back, chunks finished: how the stream moves on
        self._done = False

    @property
    def exhausted(self) -> bool:
        """No chunk is open and none is left to read."""
        return self._done and not self._window.open

    def take(self, n: int) -> list[tuple[int, GenerationRequest]]:
        """Up to ``n`` requests, opening new chunks as needed (at most ``max_open`` open at once)."""
        out = self._window.take(n, self._open_next)
        self.outstanding.update(out)
        self._tally.requests += len(out)
        return out

    def _open_next(self) -> bool:
        if self._done:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self._done = True
            return False
        ids = chunk_row_ids(chunk, self._id_column)
        plan = plan_chunk(self._judges, chunk.rows(), ids, chunk.errors, self._kinds)
        state = _Open(chunk, plan, len(plan.tasks))
        self._window.open.append(state)
        self.events += 1
        for task in plan.tasks:
            self._enqueue(state, task, front=False)
        return True

    def _enqueue(self, state: _Open, task: RowTask, *, front: bool) -> None:
        requests = task.step.requests
        if not requests:  # a step that needs no model call finishes at once
            self._settle(state, task, task.step.finish([]))
            return
        waiting = _Waiting(state, task, [None] * len(requests), len(requests))
        items: list[tuple[tuple[_Waiting, int], GenerationRequest]] = []
        for slot, request in enumerate(requests):
            if not isinstance(request, GenerationRequest):
                raise TypeError(
                    f"a streamed step can only send generation requests, not {type(request).__name__}"
                )
            items.append(((waiting, slot), request))
        self._window.put(items, front=front)  # follow-up steps go first, so their rows finish sooner

    def answer(self, key: int, answer: Answer) -> None:
        """The answer to a request taken earlier."""
        self.outstanding.pop(key, None)
        self.events += 1
        waiting, slot = self._window.slot(key)
        waiting.answers[slot] = answer
        waiting.missing -= 1
        if waiting.missing == 0:
            answers = [a for a in waiting.answers if a is not None]
            self._settle(waiting.state, waiting.task, waiting.task.step.finish(answers))

    def _settle(self, state: _Open, task: RowTask, result: JudgeOutput | Step) -> None:
        if isinstance(result, Step):
            self._enqueue(state, RowTask(task.judge, task.index, result), front=True)
            return
        state.plan.outputs[task.judge.name][task.index] = result
        state.pending -= 1

    def ready(self) -> Iterator[tuple[Chunk, Outputs]]:
        """The chunks at the head of the stream whose rows all have their output."""
        for state in self._window.finished(lambda s: s.pending == 0):
            self.events += 1
            yield state.chunk, state.plan.results()


def _continuous(
    judges: Sequence[Judge],
    backend: StreamingBackend,
    chunks: Iterator[Chunk],
    id_column: str | None,
    kinds: Sequence[ConstraintKind],
    max_open: int,
    tally: Tally,
) -> Iterator[tuple[Chunk, Outputs]]:
    feed = Feed(judges, chunks, id_column, kinds, max_open, tally)
    while not feed.exhausted:
        before = feed.events
        try:
            for key, answer in backend.stream(feed):
                feed.answer(key, answer)
                yield from feed.ready()
        except JuristError:
            raise
        except Exception as exc:
            stop_if_dead(exc)  # an engine that died: stop, do not fall back to batches
            logger.exception(
                "the stream failed; answering its %d outstanding requests in batches", len(feed.outstanding)
            )
            outstanding = list(feed.outstanding.items())
            answers = generate(backend, [request for _, request in outstanding])  # type: ignore[arg-type]
            for (key, _), answer in zip(outstanding, answers, strict=True):
                feed.answer(key, answer)
        yield from feed.ready()
        # a stream that only found the end of the input moved nothing, and that is fine
        if feed.events == before and not feed.exhausted:
            raise RuntimeError("the stream stopped with rows still waiting for answers")
