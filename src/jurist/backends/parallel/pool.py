"""Data parallel on one box: N engine processes behind one streaming backend.

:class:`DataParallelBackend` starts N worker processes (``spawn``), each hosting a real backend made by a
picklable factory (for a config: :class:`ConfigFactory`, i.e. ``create_backend`` of that config), and spreads
requests over them. It is a :class:`~jurist.backends.base.StreamingBackend`: the engine's feed plans chunks
ahead, this backend keeps every worker's window full (a worker whose engine streams, such as vLLM, streams
too; the others answer batch by batch) and yields each answer as it comes. Planning, parsing, assembly,
input order and resume stay in the calling process, unchanged; a worker only ever sees requests.

Placement: on GPUs, the visible ones are split evenly between the workers through ``CUDA_VISIBLE_DEVICES``
(8 GPUs, 4 workers: 2 each, for an engine whose tensor-parallel size is 2: ``engine_params`` pass through to
every worker's engine unchanged); on CPU the cores are split the same way (each process pinned to its share).

Why not vLLM's own data parallelism: offline, vLLM's data parallel is one ``LLM`` per rank started by a
launcher, each given its own slice of the prompts (no load balancing inside the engine), and the ranks of a
MoE model step in lockstep. For the dense judge models jurist runs, one independent engine per device fed
from one queue is the same thing with dynamic balancing (a rank with long answers takes fewer rows), works for
every engine (NATIVE, and vLLM's CPU build), and keeps one writer, one order and one resume point. vLLM's own
data/expert parallel stays reachable through ``engine_params.extra`` for MoE models.

Failures: a worker that cannot load its model fails the backend's start (:class:`BackendError`, naming the
worker); a batch that raises in a worker makes the stream raise, and the engine then answers the outstanding
requests through :meth:`DataParallelBackend.generate`, which narrows a failure down like any backend call; a
worker process that dies stops the run (:class:`BackendError` naming it): committed chunks are kept, a rerun
resumes; with ``on_worker_death="continue"`` its requests in flight go to the workers left instead.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import multiprocessing
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Literal, TypeVar

from jurist.backends.base import Backend, Forwarding, RequestFeed
from jurist.backends.parallel.worker import worker_main
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError, ConfigError
from jurist.records import Answer, Completion, ConstraintKind, GenerationRequest, Request

logger = logging.getLogger("jurist")

DATA_PARALLEL_KEY = "data_parallel"  # engine_params key: worker processes (jurist's, not vLLM's)
START_TIMEOUT_S = 3600.0
# requests handed to one worker at a time: adjacent requests (one row's orders, rows sharing a judge's
# prefix) stay together, and a small chunk still reaches every worker
RUN = 16


# ------------------------------------------------------------------------------------------ factory


@dataclass(frozen=True)
class ConfigFactory:
    """A picklable backend factory: ``create(config)`` in the worker (``create``: a module-level function,
    such as :func:`jurist.backends.create_backend`)."""

    config: InferenceConfig
    create: Callable[[InferenceConfig], Backend]

    def __call__(self) -> Backend:
        return self.create(self.config)


def split_config(config: InferenceConfig) -> tuple[InferenceConfig, int]:
    """The config without jurist's ``engine_params.data_parallel``, and that worker count (1 when unset)."""
    params = dict(config.engine_params)
    value = params.pop(DATA_PARALLEL_KEY, 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{DATA_PARALLEL_KEY}: engine processes, a whole number of at least 1 (got {value!r})",
            field="inference_config.engine_params",
        )
    return config.model_copy(update={"engine_params": params}), value


# ---------------------------------------------------------------------------------------- placement


def visible_gpus() -> list[str]:
    """The GPUs this process may use: ``CUDA_VISIBLE_DEVICES`` when set, else what ``nvidia-smi -L`` lists
    (no torch import)."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    if given is not None:
        return [d.strip() for d in given.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(listed.stdout.splitlines()) if line.startswith("GPU ")]


def placements(workers: int, gpus: Sequence[str] | None = None) -> list[dict[str, str]]:
    """The environment of each worker: an equal share of the visible GPUs, or on a box without GPUs an equal
    share of the cores (``JURIST_CPU_CORES``, read by the worker to pin itself)."""
    devices = list(visible_gpus() if gpus is None else gpus)
    if devices:
        if workers > len(devices):
            raise ConfigError(
                f"data parallel {workers} needs a GPU per engine; "
                f"{len(devices)} visible ({', '.join(devices)})",
                field="inference_config.engine_params",
            )
        share = len(devices) // workers
        return [
            {"CUDA_VISIBLE_DEVICES": ",".join(devices[w * share : (w + 1) * share])} for w in range(workers)
        ]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) < workers:
        return [{} for _ in range(workers)]
    share = len(cores) // workers
    return [
        {
            "JURIST_CPU_CORES": ",".join(str(c) for c in cores[w * share : (w + 1) * share]),
            "OMP_NUM_THREADS": str(share),
        }
        for w in range(workers)
    ]


# ------------------------------------------------------------------------------------------- parent


@dataclass
class _Worker:
    process: Any  # multiprocessing.Process (spawn context)
    conn: Connection
    env: dict[str, str]
    number: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    inflight: int = 0
    sent: dict[int, GenerationRequest] = field(default_factory=dict)  # streamed, not answered yet

    @property
    def name(self) -> str:
        return f"data-parallel worker {self.number} ({where(self.env)})"


OnWorkerDeath = Literal["stop", "continue"]


class DataParallelBackend(Forwarding):
    """``workers`` engine processes, each running ``factory()``; one streaming backend to the engine.

    ``envs``: each worker's extra environment (default: :func:`placements`, an equal share of the GPUs or of
    the cores each). Workers load their models in parallel; the constructor returns when every one is ready,
    or raises :class:`BackendError` naming the first that failed. ``on_worker_death``: a worker process that
    dies mid-run stops the run (``stop``, a :class:`BackendError` naming it), or (``continue``) its requests
    go to the workers left, and the run stops only when none is left.
    """

    def __init__(
        self,
        factory: Callable[[], Backend],
        workers: int,
        *,
        envs: Sequence[dict[str, str]] | None = None,
        on_worker_death: OnWorkerDeath = "stop",
    ) -> None:
        if workers < 1:
            raise ConfigError(f"data parallel needs at least 1 worker, got {workers}")
        envs = list(envs) if envs is not None else placements(workers)
        if len(envs) != workers:
            raise ConfigError(f"{len(envs)} worker environments for {workers} workers")
        context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []  # the live ones
        self._started: list[_Worker] = []
        self._on_death = on_worker_death
        self._orphans: list[tuple[int, GenerationRequest]] = []  # streamed to a worker that died
        self._epoch = 0
        self._calls = itertools.count()
        self._closed = False
        # not daemonic: a worker's engine may start processes of its own (vLLM on GPUs); closed at exit
        atexit.register(self.close)
        for number, env in enumerate(envs):
            parent, child = context.Pipe()
            process = context.Process(target=worker_main, args=(child, factory, env))
            process.start()
            child.close()
            self._workers.append(_Worker(process, parent, env, number))
        self._started = list(self._workers)
        try:
            for number, worker in enumerate(self._workers):
                if not worker.conn.poll(START_TIMEOUT_S):
                    raise BackendError(
                        f"data-parallel worker {number} did not start in {START_TIMEOUT_S:.0f} s"
                    )
                try:
                    kind, payload = worker.conn.recv()
                except EOFError:
                    code = worker.process.join(5) or worker.process.exitcode
                    raise BackendError(
                        f"data-parallel worker {number} exited (code {code}) while starting"
                    ) from None
                if kind != "ready":
                    raise BackendError(f"data-parallel worker {number} ({where(worker.env)}): {payload}")
                worker.info = payload
        except BaseException:
            self.close()
            raise
        first = self._workers[0].info
        self._model_id: str = first["model_id"]
        self._kinds: tuple[ConstraintKind, ...] = tuple(first["constraint_kinds"])

    @classmethod
    def from_config(
        cls,
        config: InferenceConfig,
        create: Callable[[InferenceConfig], Backend],
        workers: int | None = None,
        on_worker_death: OnWorkerDeath = "stop",
    ) -> DataParallelBackend:
        """Workers running ``create(config)`` (``config`` less ``engine_params.data_parallel``, which gives
        the worker count unless ``workers`` does)."""
        inner, configured = split_config(config)
        return cls(ConfigFactory(inner, create), workers or configured, on_worker_death=on_worker_death)

    # ------------------------------------------------------------------------------------ protocol
    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]:
        return self._kinds

    @property
    def workers(self) -> int:
        return len(self._workers)

    def describe(self) -> dict[str, Any]:
        """The first worker's model as loaded, and where each worker runs."""
        return {
            **self._workers[0].info.get("describe", {}),
            "data_parallel": len(self._workers),
            "workers": [where(w.env) for w in self._workers],
        }

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]:
        """Keep every worker's window full from ``feed``, least loaded first, in runs of adjacent requests
        (rows sharing a judge's prefix stay on one engine); yield answers as workers send them."""
        self._epoch += 1
        epoch = self._epoch
        self._orphans = []
        for worker in self._workers:
            worker.inflight = 0
            worker.sent.clear()
        try:
            while True:
                took = self._fill(feed, epoch)
                if not any(w.inflight for w in self._workers):
                    if not took:
                        return
                    continue
                for worker, message in self._receive():
                    if message[0] == "died":  # on_worker_death continue: its requests go to the others
                        self._orphans.extend(worker.sent.items())
                        worker.sent.clear()
                    if message[0] == "stream_failed" and message[1] == epoch:
                        raise RuntimeError(f"{worker.name}: {message[2]}")
                    if message[0] == "answers" and message[1] == epoch:
                        worker.inflight -= len(message[2])
                        for key, _ in message[2]:
                            worker.sent.pop(key, None)
                        yield from message[2]
        finally:
            self._epoch += 1  # answers still on their way belong to no stream now
            for worker in self._workers:
                if worker.process.is_alive():
                    worker.conn.send(("cancel", self._epoch))

    def _fill(self, feed: RequestFeed, epoch: int) -> bool:
        """Hand out requests in runs of at most ``RUN`` to the least loaded worker with room (a worker takes
        more once a quarter of its window is free), until every window is full or the feed has nothing now."""
        took = False
        hungry = [w for w in self._workers if _room(w) > 0 and (not w.inflight or _room(w) >= _refill(w))]
        while hungry:
            worker = min(hungry, key=lambda w: w.inflight)
            room = min(_room(worker), RUN)
            if self._orphans:
                taken, self._orphans = self._orphans[:room], self._orphans[room:]
            else:
                taken = feed.take(room)
            if not taken:
                break
            worker.conn.send(("stream", epoch, taken))
            worker.sent.update(taken)
            worker.inflight += len(taken)
            took = True
            hungry = [w for w in hungry if _room(w) > 0]
        return took

    def _receive(self) -> list[tuple[_Worker, tuple[Any, ...]]]:
        """The messages ready now (waiting for at least one). A dead worker stops the run; with
        ``on_worker_death`` ``continue`` it leaves the pool and comes back as a ``("died",)`` message, unless
        it was the last."""
        out, exited = receive_ready(self._workers, lambda w: w.conn, lambda w: w.process)
        for worker in exited:
            worker_exited(worker.name, worker.process.exitcode, self._on_death, self._workers, self._started)
            self._workers.remove(worker)
            out.append((worker, ("died",)))
        return out

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One completion per request, in request order: the requests cut into one run of adjacent ones per
        worker. A worker whose batch raises makes this call raise (the engine then narrows it down)."""
        return self._call("generate", list(requests))

    def forward(self, kind: type[Request], requests: Sequence[Request]) -> list[Answer]:
        """Label scores, hidden states and rewards, spread over workers like :meth:`generate`."""
        return self._call(kind.method, list(requests))

    def prefix_cache_stats(self) -> dict[str, float] | None:
        """Prefix-cache queries and hits summed over the workers (None when their engines keep no count)."""
        readings = [r for r in self._each("prefix_cache_stats") if isinstance(r, dict)]
        if not readings:
            return None
        return {key: sum(float(r.get(key, 0.0)) for r in readings) for key in ("queries", "hits")}

    def reset_prefix_cache(self) -> None:
        """Empty every worker's prefix cache (where its engine has one)."""
        self._each("reset_prefix_cache")

    def _each(self, method: str) -> list[Any]:
        """Call an optional method without arguments on every worker's backend; the results by worker."""
        pending: dict[int, _Worker] = {}
        for worker in self._workers:
            call_id = next(self._calls)
            worker.conn.send(("call", call_id, "method", [method]))
            pending[call_id] = worker
        results: dict[int, Any] = {}
        while pending:
            for worker, message in self._receive():
                if message[0] == "died":
                    pending = {c: w for c, w in pending.items() if w is not worker}
                if message[0] == "result" and message[1] in pending:
                    results[pending.pop(message[1]).number] = message[2]
        return [results[number] for number in sorted(results)]

    def _call(self, kind: str, requests: list[Any]) -> list[Any]:
        if not requests:
            return []
        size = -(-len(requests) // len(self._workers))
        pending: dict[int, tuple[int, _Worker]] = {}  # call -> (slice, worker)

        def send(number: int, worker: _Worker) -> None:
            call_id = next(self._calls)
            start = number * size
            worker.conn.send(("call", call_id, kind, requests[start : start + size]))
            pending[call_id] = (number, worker)

        for number in range(-(-len(requests) // size)):
            send(number, self._workers[number])
        results: dict[int, list[Any]] = {}
        errors: list[str] = []
        while pending:
            for worker, message in self._receive():
                if message[0] == "died":  # on_worker_death continue: its slices go to a worker left
                    for call_id, (number, owner) in list(pending.items()):
                        if owner is worker:
                            del pending[call_id]
                            send(number, self._workers[number % len(self._workers)])
                if message[0] == "result" and message[1] in pending:
                    number, _ = pending.pop(message[1])
                    if message[3] is not None:
                        errors.append(f"{worker.name}: {message[3]}")
                    else:
                        results[number] = message[2]
        if errors:
            raise RuntimeError(errors[0])
        return [answer for number in sorted(results) for answer in results[number]]

    def close(self) -> None:
        """Stop the workers (each closes its backend) and wait for them."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        for worker in self._started:
            try:
                if worker.process.is_alive():
                    worker.conn.send(("close",))
            except OSError:
                pass
        for worker in self._started:
            worker.process.join(60)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(10)
            worker.conn.close()


W = TypeVar("W")


def receive_ready(
    workers: Sequence[W], conn: Callable[[W], Connection], process: Callable[[W], Any]
) -> tuple[list[tuple[W, tuple[Any, ...]]], list[W]]:
    """Wait until a worker sends a message or exits: the messages ready now, each with its worker, or, when
    none is (a worker's pipe closed), the workers whose process has exited (joined, so their exit code is
    known). ``conn`` and ``process`` give a worker's pipe to read and its process."""
    by_conn = {id(conn(w)): w for w in workers}
    by_sentinel = {process(w).sentinel: w for w in workers}
    ready = wait([conn(w) for w in workers] + list(by_sentinel))
    out: list[tuple[W, tuple[Any, ...]]] = []
    for item in ready:
        if isinstance(item, Connection):
            with contextlib.suppress(EOFError):  # the worker died: its sentinel says so
                out.append((by_conn[id(item)], item.recv()))
    if out:
        return out, []
    exited = [by_sentinel[item] for item in ready if isinstance(item, int) and item in by_sentinel]
    for worker in exited:
        process(worker).join(1)
    return [], exited


def worker_exited(
    name: str, code: int | None, on_death: OnWorkerDeath, live: Sequence[Any], started: Sequence[Any]
) -> None:
    """A worker process (one of ``live``, of the ``started``) exited mid-run: raise :class:`BackendError`
    naming it (``stop``, or it was the last one left), else say that the run goes on with the others."""
    died = f"{name} exited with code {code}"
    if on_death == "stop" or len(live) == 1:
        hint = " (--on-worker-death continue goes on with the others)"
        raise BackendError(
            f"{died}{'' if on_death == 'stop' else ', the last one left'}; the results committed so far are "
            "kept: rerun the same command to resume"
            + (hint if on_death == "stop" and len(started) > 1 else "")
        )
    logger.warning("%s; going on with %d worker(s)", died, len(live) - 1)


def _room(worker: _Worker) -> int:
    return int(worker.info["window"]) - worker.inflight


def _refill(worker: _Worker) -> int:
    return max(1, int(worker.info["window"]) // 4)


def where(env: dict[str, str]) -> str:
    """Where a worker with this environment runs, in words (``GPU 0,1``, ``CPU cores 0,1`` or ``CPU``)."""
    if "CUDA_VISIBLE_DEVICES" in env:
        return f"GPU {env['CUDA_VISIBLE_DEVICES']}"
    if "JURIST_CPU_CORES" in env:
        return f"CPU cores {env['JURIST_CPU_CORES']}"
    return "CPU"


def data_parallel_factory(
    workers: int, create: Callable[[InferenceConfig], Backend], on_worker_death: OnWorkerDeath = "stop"
) -> Callable[[InferenceConfig], Backend]:
    """An ``Engine(backend_factory=...)`` that runs every model on ``workers`` engine processes, each made by
    ``create`` (the command line's ``--data-parallel N``: the judges' configs, and so the run's fingerprint,
    stay as they are, and a run can resume with another N; ``--on-worker-death``)."""

    def make(config: InferenceConfig) -> Backend:
        return DataParallelBackend.from_config(config, create, workers, on_worker_death)

    return make
