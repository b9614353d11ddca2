"""The parent's share of a data-parallel run: two scripted workers, the same rows judged in one process
beside them.

    python benchmarks/pipeline_dp.py [--rows 100000] [--modes MODE ...] [--workers 2] [--how chunks requests]
                                     [--gpu-rows-per-s 0 4000 1000] [--windows 64 512] [--out FILE]

Two kinds of data-parallel run, both with N ``spawn`` worker processes, each building its own backend with a
picklable factory (:class:`WorkerBackend`, a module-level class: it builds in each worker the scripted backend
of ``pipeline_modes.py`` for the mode):

* ``chunks``, the front door's (``launch(spec, Placement(data_parallel=N), backend_factory=...)``, what
  ``--data-parallel N`` runs): each worker builds the run's engine and judges whole chunks (renders, answers,
  parses, scores, assembles); the parent reads (a JSONL file's lines go out unparsed), commits in order and
  merges (:mod:`jurist.engine.host_parallel`). The workers start (and build their backends) before the clock.
* ``requests``, the request-level pool (``launch(spec, backend_factory=data_parallel_factory(N, factory))``,
  what a panel of several models runs): the parent reads, renders, plans, sends, receives, parses, scores and
  writes every row; a worker only answers requests
  (:class:`~jurist.backends.parallel.pool.DataParallelBackend`), in windows of ``--windows`` requests.

The single-process comparison runs the same factory through ``launch(spec, Placement())``.

``--gpu-rows-per-s R`` gives each backend a fixed "GPU time": a batch of n requests sleeps n / R seconds
before it is answered (0: no sleep, the scripted answers only). In the single-process run that sleep is the
parent's own (one "GPU"); in the data-parallel run each worker sleeps for its own batches (N "GPUs").

Per run (each in a fresh child process, so its rusage is its own): wall seconds of the judging (workers are
started before the clock starts; their start is reported apart), rows/s, the parent's CPU seconds over the
judging (``getrusage(RUSAGE_SELF)``) and its share of the wall time (CPU / wall), each worker's CPU seconds
from its backend's build to its close (read in the worker by ``getrusage(RUSAGE_SELF)``), and the children's
CPU in all (``RUSAGE_CHILDREN`` after the workers are joined, their start included), and the box's 1-minute
load average before and after (another job's load lengthens the wall time, and so lowers the parent's share,
without changing its CPU seconds: ``parent_cpu_us_per_row`` is the figure that load moves least).

The modes are ``pipeline_modes.py``'s (default: ``generate-pointwise`` and ``logprobs-pointwise``). Results go
to ``benchmarks/results/pipeline_dp.json`` with the command that made them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import RESULTS, header, write
from pipeline_modes import JUDGES, MODES, judge_and_backend, make_input, split


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class Paced:
    """A scripted backend that sleeps ``n / rows_per_s`` seconds per batch of n requests (a fixed "GPU
    time"), and at close writes its process's CPU seconds since it was built to ``report``."""

    def __init__(self, inner: Any, rows_per_s: float, report: Path, window: int | None = None) -> None:
        self._inner = inner
        if (
            window
        ):  # a data-parallel worker keeps 2 x batch_size requests in flight and answers them as one batch
            self.batch_size = max(1, window // 2)
        self._rate = rows_per_s
        self._report = report
        self._cpu0 = _cpu(resource.RUSAGE_SELF)
        self._wall0 = time.perf_counter()
        self._slept = 0.0
        self._requests = 0

    @property
    def model_id(self) -> str:
        return str(self._inner.model_id)

    @property
    def constraint_kinds(self) -> Any:
        return self._inner.constraint_kinds

    def _pace(self, n: int) -> None:
        self._requests += n
        if self._rate > 0:
            seconds = n / self._rate
            time.sleep(seconds)
            self._slept += seconds

    def generate(self, requests: Sequence[Any]) -> list[Any]:
        self._pace(len(requests))
        return list(self._inner.generate(requests))

    def score_labels(self, requests: Sequence[Any]) -> list[Any]:
        self._pace(len(requests))
        return list(self._inner.score_labels(requests))

    def hidden_states(self, requests: Sequence[Any]) -> list[Any]:
        self._pace(len(requests))
        return list(self._inner.hidden_states(requests))

    def describe(self) -> dict[str, str]:
        return {"engine": "scripted (paced)"}

    def close(self) -> None:
        self._inner.close()
        figures = {
            "pid": os.getpid(),
            "cpu_s": round(_cpu(resource.RUSAGE_SELF) - self._cpu0, 3),
            "alive_s": round(time.perf_counter() - self._wall0, 3),
            "slept_s": round(self._slept, 3),
            "requests": self._requests,
        }
        self._report.mkdir(parents=True, exist_ok=True)
        (self._report / f"worker-{os.getpid()}.json").write_text(json.dumps(figures))


@dataclass(frozen=True)
class WorkerBackend:
    """The picklable backend factory every worker (or the single process) runs: the scripted backend of
    ``mode`` (``pipeline_modes.judge_and_backend``), paced at ``rows_per_s`` per batch."""

    mode: str
    scratch: str
    rows_per_s: float
    window: int | None = None

    def __call__(self, config: Any) -> Any:
        _, backend = judge_and_backend(self.mode, Path(self.scratch))
        return Paced(backend, self.rows_per_s, Path(self.scratch) / "workers", self.window)


def child(
    mode: str, source: str, output: str, workers: int, rows_per_s: float, window: int | None, how: str
) -> None:
    """One run in this process (the data-parallel parent when ``workers`` > 1); prints its figures as JSON.
    ``how``: ``chunks`` (the front door's data parallel: workers judge whole chunks), ``requests`` (the
    request-level pool: the parent does the host work, workers answer requests) or ``local``."""
    from jurist.backends.parallel.pool import data_parallel_factory
    from jurist.engine.host_parallel import HostParallelBatches
    from jurist.engine.spec import RunSpec, Selection
    from jurist.launch import Placement, launch

    scratch = Path(output).parent / f"scratch-{os.getpid()}"
    scratch.mkdir()
    config, _ = judge_and_backend(mode, scratch)
    spec = RunSpec((config,), Selection(source))
    factory = WorkerBackend(mode, str(scratch), rows_per_s, window)
    started = time.perf_counter()
    if how == "chunks":
        launched = launch(spec, Placement(data_parallel=workers), backend_factory=factory)
        assert isinstance(launched.batches, HostParallelBatches)
        launched.batches.pool.start()  # start the workers (and build their backends) now
    else:
        made = data_parallel_factory(workers, factory) if how == "requests" else factory
        launched = launch(spec, Placement(), backend_factory=made)
        engine = launched.engine
        engine.backend_for(engine.judges[0]).real()  # type: ignore[attr-defined]  # start the workers now
    start_s = time.perf_counter() - started
    load_before = os.getloadavg()[0]
    cpu0, wall0 = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    try:
        summary = launched.run(output)
        wall = time.perf_counter() - wall0
        parent_cpu = _cpu(resource.RUSAGE_SELF) - cpu0
    finally:
        launched.close()
    reports = [json.loads(p.read_text()) for p in sorted((scratch / "workers").glob("worker-*.json"))]
    reports = [r for r in reports if r["pid"] != os.getpid()]
    statuses = next(iter(summary.judges.values())).statuses
    print(
        json.dumps(
            {
                "rows": summary.rows,
                "ok": statuses.get("ok", 0),
                "workers": workers if workers > 1 else None,
                "worker_window": window if how == "requests" else None,
                "start_s": round(start_s, 2),
                "wall_s": round(wall, 2),
                "rows_per_s": round(summary.rows / wall),
                "parent_cpu_s": round(parent_cpu, 2),
                "parent_share_of_wall": round(parent_cpu / wall, 3),
                "parent_cpu_us_per_row": round(1e6 * parent_cpu / summary.rows, 1),
                "parent_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "workers_cpu_s": [r["cpu_s"] for r in reports],
                "workers_slept_s": [r["slept_s"] for r in reports],
                "workers_requests": [r["requests"] for r in reports],
                "children_cpu_s_with_start": round(_cpu(resource.RUSAGE_CHILDREN), 2),
                "load_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
    )


def measure(
    mode: str, rows: int, folder: Path, workers: int, rows_per_s: float, window: int | None, how: str
) -> dict[str, Any]:
    _, kind = split(mode)
    source = folder / f"{kind}-{rows}.jsonl"
    if not source.exists():
        make_input(source, rows, kind)
    output = folder / f"{mode}-{rows}-{workers}-{rows_per_s:g}-{how}.parquet"
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        str(source),
        str(output),
        str(workers),
        str(rows_per_s),
        str(window or 0),
        how,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} ({workers} workers) failed:\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    output.unlink(missing_ok=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--modes", nargs="+", choices=MODES, default=["generate-pointwise", "logprobs-pointwise"]
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--gpu-rows-per-s",
        type=float,
        nargs="+",
        default=[0.0, 4000.0, 1000.0],
        help="each backend's fixed 'GPU time': a batch of n requests sleeps n / R s (0: none)",
    )
    parser.add_argument(
        "--how",
        nargs="+",
        choices=["chunks", "requests"],
        default=["chunks", "requests"],
        help="data-parallel runs: workers judging whole chunks (the front door's), the request-level pool",
    )
    parser.add_argument(
        "--windows",
        type=int,
        nargs="+",
        default=[64, 512],
        help="requests each data-parallel worker keeps in flight and answers as one batch, one data-parallel "
        "run per value (64: jurist's default for a backend that neither streams nor names a batch size; "
        "vLLM's is 2 x max_num_seqs, 512 at 256)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "pipeline_dp.json")
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, source, output, workers, rate, window, how = args.child
        child(mode, source, output, int(workers), float(rate), int(window) or None, how)
        return
    results: dict[str, Any] = {
        **header("pipeline_dp"),
        "command": shlex.join(["python", "benchmarks/pipeline_dp.py", *sys.argv[1:]]),
        "judges": JUDGES,
        "backend": "scripted, built in each worker by a picklable backend_factory (WorkerBackend)",
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "rows": args.rows,
        "runs": {},
    }
    with tempfile.TemporaryDirectory() as scratch:
        for mode in args.modes:
            for rate in args.gpu_rows_per_s:
                key = f"{mode}, gpu {rate:g} rows/s per backend" if rate else f"{mode}, no gpu time"
                results["runs"][key] = {}
                pair = f"data parallel {args.workers}"
                settings = [("one process", 1, None, "local")]
                if "chunks" in args.how:
                    settings.append((f"{pair}, workers judge chunks", args.workers, None, "chunks"))
                if "requests" in args.how:
                    for w in args.windows:
                        settings.append(
                            (f"{pair}, request-level pool, window {w}", args.workers, w, "requests")
                        )
                for label, workers, window, how in settings:
                    figures = measure(mode, args.rows, Path(scratch), workers, rate, window, how)
                    results["runs"][key][label] = figures
                    print(key, label, figures, flush=True)
    write(results, args.out)


if __name__ == "__main__":
    main()
