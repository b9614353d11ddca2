"""Data parallel with the host work in the workers: N engine processes, each judging whole chunks or units.

A run on ``data_parallel`` N engine processes (:class:`~jurist.launch.Placement`) whose judges share one
model starts N ``spawn`` workers (:class:`HostPool`). Each builds the run's
:class:`~jurist.engine.core.Engine` from its spec (the judges and options) with a backend from the picklable
factory, on its share of the GPUs or cores (:func:`~jurist.backends.parallel.pool.placements`), and loads
its model once. The parent reads the input and cuts it into the run's chunks, hands each to the least loaded
worker, and commits the chunks' parts in input order (:class:`HostParallelBatches`); a worker renders,
plans, answers (streaming across the chunks it holds when its engine streams), parses, scores and assembles
each chunk's Arrow batch, writes it as a staged part of the run's result store (Parquet encoding included:
:class:`~jurist.io.parts.PartWriter`), and sends back its name with the chunk's summary counts; the parent
renames it into place (:meth:`~jurist.io.parts.ResultStore.commit_staged`). So the host work grows with the
workers instead of going through one process, which at small-model speeds cannot keep eight GPUs fed. In a
run over a dataset's units (:class:`~jurist.engine.corpus.CorpusRun`), the pool is its executor
(:meth:`HostPool.judge_units`): a worker reads each unit from storage, judges it and writes its shard
(:func:`~jurist.engine.units.judge_unit`), and the parent sees only the unit's entry.

The output, its order, the fingerprint and resume are a one-process run's: the same chunks, judged by the
same code, committed in order (a run can start here and resume in one process, or the other way round).
The parent keeps at most ``depth`` chunks per worker out (``max_open_chunks`` + 1: the chunks a worker's
stream keeps open and the next one), and at most ``depth`` x workers from the oldest chunk not yet committed
on, so a slow worker never makes the finished chunks pile up.

Failures: a worker that cannot load its model fails the start, naming it; a worker whose run raises
(its engine cannot go on) stops the run with its message; a worker process that dies stops the run naming
it (committed chunks are kept: a rerun resumes), or with ``on_worker_death="continue"`` its chunks go to the
workers left. The request-level pool (:class:`~jurist.backends.parallel.pool.DataParallelBackend`, only
requests cross the pipe) still serves a panel of several models, a cascade, ``--retry-failed`` and
``--repair``.
"""

from __future__ import annotations

import atexit
import multiprocessing
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import pyarrow as pa

from jurist.backends.base import Backend
from jurist.backends.parallel.pool import (
    START_TIMEOUT_S,
    OnWorkerDeath,
    placements,
    receive_ready,
    split_config,
    where,
    worker_exited,
)
from jurist.backends.parallel.worker import place
from jurist.config.inference import InferenceConfig
from jurist.engine.plan import group_by_backend
from jurist.engine.run import BatchSource, RunContext
from jurist.engine.spec import RunSpec
from jurist.engine.summary import RunSummary
from jurist.engine.units import UnitJob, UnitResult, judge_unit, load
from jurist.errors import BackendError
from jurist.io.parts import PartWriter, StagedPart
from jurist.io.raw_chunks import RawChunk, can_cut_raw, raw_chunks
from jurist.io.records import RecordTyper
from jurist.io.sources import Batch, Chunk, JsonlSource, RowSource
from jurist.io.units import Unit
from jurist.judges.judge import Judge

Piece = Chunk | RawChunk  # what the parent sends: a chunk, or a JSONL file's lines for the worker to parse
END = ("end",)  # the parent's message that ends a pass: the worker's input stops there
CLOSE = ("close",)


def splits_by_chunk(judges: list[Judge]) -> bool:
    """Whether a run of these judges can put whole chunks on each worker: their models are one (a panel of
    several models runs the models one after another over every row, which needs the request-level pool)."""
    return len(group_by_backend([j for j in judges if j.needs_model])) <= 1


@dataclass(frozen=True)
class OneEngine:
    """A worker's backend factory: ``create`` of the config less its own ``engine_params.data_parallel``
    (the run's placement says how many workers there are, and each runs one engine, not a pool of its own)."""

    create: Callable[[InferenceConfig], Backend]

    def __call__(self, config: InferenceConfig) -> Backend:
        return self.create(split_config(config)[0])


@dataclass(frozen=True)
class WorkerJob:
    """What a worker builds its engine from: the run's spec (judges and options; its rows are not read) and
    the factory of its backend (a picklable ``(InferenceConfig) -> Backend``)."""

    spec: RunSpec
    factory: Callable[[InferenceConfig], Backend]


# ------------------------------------------------------------------------------------------- worker


class _Pass(RowSource):
    """One pass of a worker: the chunks the parent sends, up to its ``END``."""

    def __init__(self, schema: pa.Schema, source: str, inbox: queue.Queue[Any]) -> None:
        self.schema, self.source, self.inbox, self.total = schema, source, inbox, None
        self.typer = RecordTyper(source, schema)  # for JSONL lines sent unparsed

    def batches(self) -> Iterator[Batch]:
        for chunk in self.chunks(0):
            yield Batch(chunk.table, chunk.errors, chunk.numbers, chunk.records)

    def chunks(self, size: int, skip: int = 0) -> Iterator[Chunk]:
        while (message := self.inbox.get())[0] == "chunk":
            chunk = message[1]
            yield chunk.parse(self.typer) if isinstance(chunk, RawChunk) else chunk
        if message == CLOSE:  # the parent stopped the run: the worker's loop closes
            self.inbox.put(message)


def host_worker_main(inbox: Connection, outbox: Connection, job: WorkerJob, env: dict[str, str]) -> None:
    """A worker process: place itself, build the run's engine and load its model, then judge the chunks of
    each pass (``("begin", schema, source)``, chunks, ``END``) until told to close."""
    from jurist.engine.core import Engine

    # Ctrl-C and a closed terminal reach every process of the group: the parent decides, and stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    place(env)
    try:
        engine = Engine.from_spec(job.spec, backend_factory=job.factory)
        load(engine)
    except BaseException as exc:  # the parent reports it, naming this worker
        outbox.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    outbox.send(("ready", None))
    messages: queue.Queue[Any] = queue.Queue()  # drained from the pipe at once: the parent never blocks

    def receive() -> None:
        while True:
            try:
                message = inbox.recv()
            except EOFError:
                message = CLOSE
            messages.put(message)
            if message == CLOSE:
                return

    threading.Thread(target=receive, daemon=True).start()
    try:
        while (message := messages.get()) != CLOSE:
            if message[0] == "begin":
                _judge_pass(engine, _Pass(message[1], message[2], messages), message[3], outbox)
            elif message[0] == "unit":  # a unit of a dataset run: read, judged and written here
                outbox.send(("unit-done", judge_unit(engine, message[1], message[2])))
    except BaseException as exc:
        outbox.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        engine.close()


def _judge_pass(engine: Any, source: _Pass, writer: PartWriter, outbox: Connection) -> None:
    """Judge one pass's chunks; each is written as a staged part and goes back as ``("done", start, staged
    part, counts)`` as it finishes, then ``("idle", models described)``."""
    kept = engine.panel.agreement_columns() if engine.panel is not None else []
    sent = engine.tally.requests
    for chunk, batch, outputs, models in engine.assembled(source):
        staged = writer.stage(batch, chunk.start, batch.select(kept) if kept else None)
        counts = RunSummary()
        counts.add(outputs, models)
        counts.requests, sent = engine.tally.requests - sent, engine.tally.requests
        outbox.send(("done", chunk.start, staged, counts))
    outbox.send(("idle", engine.describe_models()))


# ------------------------------------------------------------------------------------------- parent


@dataclass
class _Worker:
    number: int
    process: Any  # multiprocessing.Process (spawn context)
    inbox: Connection  # parent -> worker
    outbox: Connection  # worker -> parent
    env: dict[str, str]
    held: dict[Any, Any] = field(default_factory=dict)  # sent, not yet back: chunks by start, units by name
    passes: int = 0  # passes begun and not yet ended by an "idle"
    described: dict[str, Any] = field(default_factory=dict)

    outgoing: queue.Queue[Any] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        # sends go through a thread: the parent never waits on a busy worker's pipe, so it keeps reading
        # what the workers send back (a worker blocked on its own send would never read)
        self.sender = threading.Thread(target=self._send_all, daemon=True)
        self.sender.start()

    def _send_all(self) -> None:
        while (message := self.outgoing.get()) is not None:
            try:
                self.inbox.send(message)
            except OSError:  # the worker is gone: its sentinel tells the parent
                return

    def send(self, message: Any) -> None:
        """Queue a message for the worker (sent in order, without waiting)."""
        self.outgoing.put(message)

    def stop_sending(self) -> None:
        """Send what is queued, then let the sending thread end."""
        self.outgoing.put(None)

    @property
    def name(self) -> str:
        return f"data-parallel worker {self.number} ({where(self.env)})"


class HostPool:
    """``workers`` processes, each with the run's engine (see the module): started by :meth:`start`, fed
    chunks by :meth:`judge` or units by :meth:`judge_units`, stopped by :meth:`close`. ``envs``: each
    worker's extra environment (default: an equal share of the GPUs or cores each)."""

    def __init__(
        self,
        job: WorkerJob,
        workers: int,
        *,
        on_worker_death: OnWorkerDeath = "stop",
        envs: list[dict[str, str]] | None = None,
    ) -> None:
        self.job, self.on_death = job, on_worker_death
        self.envs = envs if envs is not None else placements(workers)
        self.depth = job.spec.options.max_open_chunks + 1
        self.workers: list[_Worker] = []  # the live ones
        self._started: list[_Worker] = []

    def start(self) -> float:
        """Start the workers (once) and wait until each has loaded its model; the seconds that took (0 when
        they were already up). A worker that fails to load raises :class:`BackendError` naming it."""
        if self._started:
            return 0.0
        began = time.perf_counter()
        context = multiprocessing.get_context("spawn")
        atexit.register(self.close)
        for number, env in enumerate(self.envs):
            to_worker, inbox = context.Pipe(duplex=False)
            outbox, from_worker = context.Pipe(duplex=False)
            args = (to_worker, from_worker, self.job, env)
            process = context.Process(target=host_worker_main, args=args)
            process.start()
            to_worker.close()
            from_worker.close()
            self._started.append(_Worker(number, process, inbox, outbox, env))
        self.workers = list(self._started)
        try:
            for worker in self.workers:
                if not worker.outbox.poll(START_TIMEOUT_S):
                    raise BackendError(f"{worker.name} did not start in {START_TIMEOUT_S:.0f} s")
                try:
                    kind, payload = worker.outbox.recv()
                except EOFError:
                    code = worker.process.join(5) or worker.process.exitcode
                    raise BackendError(f"{worker.name} exited (code {code}) while starting") from None
                if kind != "ready":
                    raise BackendError(f"{worker.name}: {payload}")
        except BaseException:
            self.close()
            raise
        return time.perf_counter() - began

    def judge(self, run: RunContext, chunks: Iterator[Piece]) -> Iterator[StagedPart]:
        """Every chunk's staged part, in input order, judged by the workers; their counts go into ``run``'s
        summary and progress line. A run that stops early (an error, a signal) stops the workers."""
        finished_normally = False
        try:
            yield from self._judge(run, chunks)
            finished_normally = True
        finally:
            if not finished_normally:
                self.close(wait_s=5.0)

    def _judge(self, run: RunContext, chunks: Iterator[Piece]) -> Iterator[StagedPart]:
        begin = ("begin", run.source.schema, run.source.source, run.store.writer)
        for worker in self.workers:
            worker.send(begin)
            worker.passes += 1
        order: deque[int] = deque()  # starts of the chunks out, in input order
        finished: dict[int, tuple[StagedPart, RunSummary]] = {}
        spare: list[Piece] = []  # a dead worker's chunks, to send again
        exhausted = False
        while True:
            # the finished chunks at the head of the input first: they free room for the next ones (handing
            # out before would leave every worker idle and waiting, the room taken by chunks done but not
            # yet committed)
            while order and order[0] in finished:
                staged, counts = finished.pop(order.popleft())
                self._count(run, counts)  # in input order: a status's first error is the first row's
                yield staged
            while True:  # hand out chunks, least loaded worker first
                worker = min(self.workers, key=lambda w: len(w.held))
                if len(worker.held) >= self.depth:
                    break
                if spare:
                    chunk = spare.pop(0)
                    if exhausted:  # its pass has ended: this chunk is a pass of its own
                        worker.send(begin)
                        worker.passes += 1
                elif exhausted or len(order) >= self.depth * len(self.workers):
                    break
                else:
                    next_chunk = next(chunks, None)
                    if next_chunk is None:
                        exhausted = True
                        for each in self.workers:
                            each.send(END)
                        break
                    chunk = next_chunk
                    order.append(chunk.start)
                worker.held[chunk.start] = chunk
                worker.send(("chunk", chunk))
                if exhausted:
                    worker.send(END)
            if exhausted and not order and not any(w.passes for w in self.workers):
                return
            for worker, message in self._receive(spare):
                if message[0] == "done":
                    _, start, staged, counts = message
                    worker.held.pop(start, None)
                    finished[start] = (staged, counts)
                elif message[0] == "idle":
                    worker.passes -= 1
                    worker.described = message[1]
                elif message[0] == "failed":
                    raise BackendError(
                        f"{worker.name}: {message[1]}; the chunks committed so far are kept: rerun the same "
                        "command to resume"
                    )

    @staticmethod
    def _count(run: RunContext, counts: RunSummary) -> None:
        """A chunk's counts into the run's summary and progress line."""
        run.summary.merge(counts)
        if run.progress is not None:
            run.progress.add(counts.rows, counts.statuses())

    def judge_units(self, job: UnitJob, units: Sequence[Unit]) -> Iterator[UnitResult]:
        """Each unit's result as a worker finishes it (any order): a unit at a time per worker, the next one
        sent as one comes back, so that at most one unit per worker is in flight. A worker that dies stops
        the run, or with ``on_worker_death`` ``continue`` its unit goes to another."""
        pending: list[Any] = list(units)
        finished_normally = False
        try:
            while pending or any(w.held for w in self.workers):
                for worker in self.workers:
                    if not worker.held and pending:
                        unit = pending.pop(0)
                        worker.held[unit.name] = unit
                        worker.send(("unit", job, unit))
                for worker, message in self._receive(pending):
                    if message[0] == "unit-done":
                        result: UnitResult = message[1]
                        worker.held.pop(result.name, None)
                        worker.described = worker.described or result.described
                        yield result
                    elif message[0] == "failed":
                        raise BackendError(
                            f"{worker.name}: {message[1]}; the units committed so far are kept: rerun the "
                            "same command to resume"
                        )
            finished_normally = True
        finally:
            if not finished_normally:
                self.close(wait_s=5.0)

    def _receive(self, spare: list[Any]) -> list[tuple[_Worker, tuple[Any, ...]]]:
        """The messages ready now (waiting for at least one). A worker process that dies stops the run, or
        with ``on_worker_death`` ``continue`` leaves the pool, its chunks put in ``spare`` for the others
        (unless it was the last)."""
        out, exited = receive_ready(self.workers, lambda w: w.outbox, lambda w: w.process)
        for worker in exited:
            worker_exited(worker.name, worker.process.exitcode, self.on_death, self.workers, self._started)
            self.workers.remove(worker)
            spare.extend(sorted(worker.held.values(), key=lambda c: getattr(c, "start", 0)))
            worker.held.clear()
        return out

    def described(self) -> dict[str, Any]:
        """What each judge ran on, as the first worker's engine describes it, with the workers' count and
        places."""
        first = next((w.described for w in self._started if w.described), {})
        places = [where(w.env) for w in self._started]
        return {
            name: {**model, "data_parallel": len(self._started), "workers": places}
            for name, model in first.items()
        }

    def close(self, wait_s: float = 60.0) -> None:
        """Stop the workers (each closes its engine), waiting ``wait_s`` for each before it is terminated."""
        atexit.unregister(self.close)
        started, self._started, self.workers = self._started, [], []
        for worker in started:
            if worker.process.is_alive():
                worker.send(CLOSE)
            worker.stop_sending()
        for worker in started:
            worker.process.join(wait_s)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(10)
            worker.sender.join(5)  # done, or failing now that the worker is gone
            worker.inbox.close()
            worker.outbox.close()


class HostParallelBatches(BatchSource):
    """A run's batches judged by a :class:`HostPool` (see the module), committed in input order. The pool
    starts with the first run (its start and model loads count as the run's load time) and stays up for
    another run of the same launch until :meth:`close`."""

    def __init__(self, pool: HostPool) -> None:
        self.pool = pool

    def batches(self, run: RunContext) -> Iterator[pa.RecordBatch | StagedPart]:
        run.summary.load_seconds += self.pool.start()
        size, source, skip = run.engine.chunk_size, run.source, run.store.rows
        # a JSONL file's lines go out unparsed: the workers parse them (one process would not keep up)
        chunks: Iterator[Piece]
        if isinstance(source, JsonlSource) and can_cut_raw(source):
            chunks = raw_chunks(source, size, skip)
        else:
            chunks = source.chunks(size, skip)
        return self.pool.judge(run, chunks)

    def models(self, run: RunContext) -> dict[str, Any]:
        return self.pool.described()

    def close(self) -> None:
        self.pool.close()
