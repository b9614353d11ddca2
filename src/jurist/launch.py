"""The one front door of a judge run: :func:`launch` chooses how a :class:`~jurist.engine.spec.RunSpec` runs.

Everything that decides results is in the spec (judges, rows, options, a cascade's thresholds, a batch
output file to answer from); everything that only decides where and how the work happens is in the
:class:`Placement` (engine processes, Ray, re-judging failed rows, repairing a damaged store). This module
is the only place that turns the two into an engine and a batch source:

- a local engine (:class:`~jurist.engine.run.LocalBatches`); with ``data_parallel`` N, N worker processes
  that each judge whole chunks (:class:`~jurist.engine.host_parallel.HostParallelBatches`), or for a panel
  of several models one engine fed by N engine processes (the request-level pool);
- a Ray actor pool (:class:`~jurist.engine.ray_job.RayBatches`);
- a cascade (:class:`~jurist.cascade.batches.CascadeBatches`), its thresholds calibrated here when the spec
  asks for it, so the spec the run is fingerprinted by holds them;
- ``--retry-failed`` (:class:`~jurist.engine.run.RetryBatches`);
- answers from OpenAI batch output files (the spec's ``answers``:
  :class:`~jurist.openai_batch.results.BatchResults`);

and the only place that refuses a combination of them, before any model loads. ``--repair`` is asked of
whichever batch source runs (each judges a damaged part's rows its own way). :func:`emit` writes a run's
requests as a batch file instead (nothing is judged), refusing the same way.

The command line maps its options to a spec and a placement and calls these; so can Python users::

    spec = RunSpec((load_judge_config("generic/truthfulness"),), Selection("rows.jsonl"))
    summary = launch(spec, Placement(data_parallel=2)).run("out.parquet")
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from jurist.backends import check_engine_params, create_backend
from jurist.backends.base import Backend
from jurist.backends.parallel.pool import OnWorkerDeath, data_parallel_factory
from jurist.cascade.batches import CascadeBatches
from jurist.cascade.calibrate import cache_path, calibrate
from jurist.cascade.engine import CascadeEngine
from jurist.engine.core import BackendFactory, Engine
from jurist.engine.host_parallel import HostParallelBatches, HostPool, OneEngine, WorkerJob, splits_by_chunk
from jurist.engine.preflight import check_constraints
from jurist.engine.ray_job import RayBatches, RayRun
from jurist.engine.run import BatchSource, LocalBatches, RetryBatches, Run
from jurist.engine.spec import RunSpec
from jurist.engine.summary import RunSummary
from jurist.errors import InputError
from jurist.io.lock import OutputLock
from jurist.openai_batch.emit import Emitted, emit_batch
from jurist.openai_batch.results import BatchResults


@dataclass(frozen=True)
class Placement:
    """Where and how a run's judging happens, besides what decides its results. ``data_parallel``: engine
    processes per model on this machine (with ``ray``: actors); ``ray``: ``local``, ``auto`` or a cluster
    address (None: no Ray); ``on_worker_death``: with data parallel, whether a dead engine process stops the
    run or its requests go to the processes left; ``retry_failed``: re-judge only a finished run's failed
    rows; ``repair``: judge the rows of damaged committed parts again on resume."""

    data_parallel: int | None = None
    ray: str | None = None
    on_worker_death: OnWorkerDeath = "stop"
    retry_failed: bool = False
    repair: bool = False

    def used(self) -> list[str]:
        """The options set, as the command line names them."""
        return [
            name
            for name, value in (
                ("--data-parallel", self.data_parallel),
                ("--ray", self.ray is not None),
                ("--retry-failed", self.retry_failed),
                ("--repair", self.repair),
            )
            if value
        ]


@dataclass
class Launch:
    """A run ready to start: its spec (a cascade's thresholds calibrated), engine and batch source, and notes
    for people (from calibration). :meth:`run` runs it into an output; :meth:`close` frees its models."""

    spec: RunSpec
    engine: Engine
    batches: BatchSource
    placement: Placement = Placement()
    notes: list[str] = field(default_factory=list)

    def run(
        self,
        output: str | Path,
        *,
        overwrite: bool = False,
        progress: IO[str] | None = None,
        lock: OutputLock | None = None,
    ) -> RunSummary:
        """Judge the spec's rows into ``output`` (see :class:`~jurist.engine.run.Run`) and return the
        summary. ``lock``: the output's lock, already held by the caller (else the run takes it)."""
        run = Run(
            self.spec,
            self.engine,
            output,
            overwrite=overwrite,
            progress=progress,
            repair=self.placement.repair,
            lock=lock,
        )
        return run.execute(self.batches)

    def close(self) -> None:
        self.batches.close()
        self.engine.close()


def refuse(spec: RunSpec, placement: Placement, *, emitting: bool = False) -> None:
    """Refuse (:class:`~jurist.errors.InputError`, exit 2 on the command line) a combination jurist does not
    run, naming the options."""
    if emitting:
        scored = [c for c in spec.judges if c.is_reward or c.judge_params.scoring.reads_labels]
        if scored:
            how = "is a reward model" if scored[0].is_reward else "scores its labels' log-probabilities"
            raise InputError(
                f"judge {scored[0].name or 'judge'!r} {how}, which a batch file's answers do not carry: "
                "run it on a local engine (or vllm serve), or emit a judge with scoring: GENERATE"
            )
        used = placement.used() + (["--cascade"] if spec.cascade is not None else [])
        if used:
            raise InputError(f"--emit-batch writes the requests and judges nothing: drop {', '.join(used)}")
        return
    if spec.cascade is not None:
        local = [name for name in placement.used() if name != "--repair"]
        if spec.answers:
            local.append("--from-batch-results")
        if local:
            raise InputError(f"a cascade runs locally, without {', '.join(local)}")
    if placement.ray is not None and placement.retry_failed:
        raise InputError("--retry-failed runs without --ray")
    if spec.answers and (placement.ray is not None or (placement.data_parallel or 1) > 1):
        raise InputError(
            "--from-batch-results reads its answers on this machine, in one process: drop --ray and "
            "--data-parallel"
        )


def launch(
    spec: RunSpec,
    placement: Placement = Placement(),
    *,
    output: Path | None = None,
    backend: Backend | None = None,
    backend_factory: BackendFactory | None = None,
) -> Launch:
    """The engine and batch source of a run of ``spec`` placed as ``placement``; a cascade's thresholds are
    calibrated now when the spec asks for it (judging the labelled rows; kept beside ``output`` for a
    rerun). ``backend``: one backend for every judge; ``backend_factory``: what makes a backend per model
    (default: from each judge's inference config). Bad combinations, and ``engine_params`` an engine does not
    take (unless ``backend`` is given: then no engine is made from the configs), are refused before any model
    loads."""
    refuse(spec, placement)
    if backend is None:
        check_engines(spec)
    if spec.answers:
        if backend is not None:
            raise InputError("answers come from the batch results files: pass no backend")
        backend = BatchResults(spec.answers)
    if spec.cascade is not None:
        return _cascade(spec, placement, output, backend, backend_factory)
    parallel = placement.data_parallel or 1
    local_parallel = parallel > 1 and placement.ray is None and backend is None
    create = backend_factory or create_backend
    if local_parallel:  # the request-level pool, for what the host-parallel workers do not run (--repair)
        backend_factory = data_parallel_factory(parallel, create, placement.on_worker_death)
    engine = Engine.from_spec(spec, backend, backend_factory=backend_factory)
    batches: BatchSource
    if placement.ray is not None:
        batches = RayBatches(RayRun(engine, placement.ray, actors=placement.data_parallel))
    elif placement.retry_failed:
        batches = RetryBatches()
    elif local_parallel and splits_by_chunk(engine.judges):
        job = WorkerJob(engine.spec(spec.rows), OneEngine(create))
        batches = HostParallelBatches(HostPool(job, parallel, on_worker_death=placement.on_worker_death))
    else:
        batches = LocalBatches()
    return Launch(spec, engine, batches, placement)


def emit(spec: RunSpec, path: Path, placement: Placement = Placement()) -> Emitted:
    """``--emit-batch``: write the requests of a run of ``spec`` as an OpenAI batch input file (nothing is
    judged); the options that would judge are refused."""
    refuse(spec, placement, emitting=True)
    check_engines(spec)
    return emit_batch(spec, path)


def check_engines(spec: RunSpec) -> None:
    """Refuse (:class:`~jurist.errors.ConfigError`, naming the key) ``engine_params`` a judge's engine does
    not take."""
    for config in spec.judges:
        check_engine_params(config.inference_config)


def _cascade(
    spec: RunSpec,
    placement: Placement,
    output: Path | None,
    backend: Backend | None,
    backend_factory: BackendFactory | None,
) -> Launch:
    """A cascade's launch, calibrated when the spec asks for it: the stages' constraints are checked first,
    since calibration loads their models before the run would check them."""
    assert spec.cascade is not None
    engine = CascadeEngine.for_spec(spec, backend, backend_factory=backend_factory)
    notes: list[str] = []
    calibration = spec.cascade.calibration
    if spec.cascade.pending and calibration is not None:
        if backend is None:
            check_constraints(engine.judges)
        cache = cache_path(output) if output is not None else None
        engine.plan, notes = calibrate(engine, spec.rows, calibration, cache)
        spec = replace(spec, cascade=replace(spec.cascade, calibrated=engine.plan))
    return Launch(spec, engine, CascadeBatches(engine), placement, notes)
