"""The one front door of a judge run: :func:`launch` chooses how a :class:`~jurist.engine.spec.RunSpec` runs.

Everything that decides results is in the spec (judges, rows, options, a cascade's thresholds, a batch
output file to answer from); everything that only decides where and how the work happens is in the
:class:`Placement` (engine processes, Ray, re-judging failed rows, repairing a damaged store). This module
is the only place that turns the two into an engine and a batch source:

- a local engine (:class:`~jurist.engine.run.LocalBatches`); with ``data_parallel`` N, N worker processes
  that each judge whole chunks (:class:`~jurist.engine.host_parallel.HostParallelBatches`), or for a panel
  of several models one engine fed by N engine processes (the request-level pool);
- a run over a dataset of files (a folder, a glob, several files, URLs), or into a results dataset, or on
  Ray: one plan of units (:class:`~jurist.engine.corpus.CorpusRun`) judged in this process, by
  ``data_parallel`` worker processes (:class:`~jurist.engine.host_parallel.HostPool`) or by a Ray actor
  pool (:class:`~jurist.engine.ray_units.RayExecutor`), each reading and writing storage itself;
- a cascade (:class:`~jurist.cascade.batches.CascadeBatches`), its thresholds calibrated here when the spec
  asks for it, so the spec the run is fingerprinted by holds them;
- ``--retry-failed`` (:class:`~jurist.engine.run.RetryBatches`);
- answers from OpenAI batch output files (the spec's ``answers``:
  :class:`~jurist.openai_batch.results.BatchResults`);

and the only place that refuses a combination of them, before any model loads. A config's
``engine_params.data_parallel`` is another spelling of ``data_parallel``. ``--repair`` is asked of
whichever batch source runs (each judges a damaged part's rows its own way). :func:`emit` writes a run's
requests as a batch file instead (nothing is judged), refusing the same way.

The command line maps its options to a spec and a placement and calls these; so can Python users::

    spec = RunSpec((load_judge_config("generic/truthfulness"),), Selection("rows.jsonl"))
    summary = launch(spec, Placement(data_parallel=2)).run("out.parquet")
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from jurist.backends import check_engine_params, create_backend
from jurist.backends.base import Backend
from jurist.backends.parallel.pool import OnWorkerDeath, data_parallel_factory, split_config
from jurist.cascade.batches import CascadeBatches
from jurist.cascade.calibrate import cache_path, calibrate
from jurist.cascade.engine import CascadeEngine
from jurist.engine.core import BackendFactory, Engine
from jurist.engine.corpus import CorpusRun, OnBadShard, is_dataset_output
from jurist.engine.host_parallel import HostParallelBatches, HostPool, OneEngine, WorkerJob, splits_by_chunk
from jurist.engine.preflight import check_constraints
from jurist.engine.ray_units import RayExecutor
from jurist.engine.run import BatchSource, LocalBatches, RetryBatches, Run
from jurist.engine.spec import RunSpec
from jurist.engine.summary import RunSummary
from jurist.engine.units import Executor, InProcess
from jurist.errors import ConfigError, InputError
from jurist.io.lock import OutputLock
from jurist.io.units import is_dataset_input
from jurist.openai_batch.emit import Emitted, emit_batch
from jurist.openai_batch.results import BatchResults


@dataclass(frozen=True)
class Placement:
    """Where and how a run's judging happens, besides what decides its results. ``data_parallel``: engine
    processes per model on this machine (with ``ray``: actors); ``ray``: ``local``, ``auto`` or a cluster
    address (None: no Ray); ``on_worker_death``: with data parallel, whether a dead engine process stops the
    run or its work goes to the processes left; ``retry_failed``: re-judge only a finished run's failed
    rows; ``repair``: judge the rows of damaged committed parts again on resume; ``on_bad_shard``: in a run
    over a dataset, whether a shard that cannot be read leaves the run unfinished (``fail``) or is skipped."""

    data_parallel: int | None = None
    ray: str | None = None
    on_worker_death: OnWorkerDeath = "stop"
    retry_failed: bool = False
    repair: bool = False
    on_bad_shard: OnBadShard = "fail"

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
    executor: Executor | None = None  # a run over a dataset's units (CorpusRun); None: a file's chunks (Run)

    def run(
        self,
        output: str | Path,
        *,
        overwrite: bool = False,
        progress: IO[str] | None = None,
        lock: OutputLock | None = None,
    ) -> RunSummary:
        """Judge the spec's rows into ``output`` (see :class:`~jurist.engine.run.Run`, or for a dataset
        :class:`~jurist.engine.corpus.CorpusRun`) and return the summary. ``lock``: the output's lock,
        already held by the caller (else the run takes it; a dataset's lease is taken by its run)."""
        if self.executor is not None:
            return CorpusRun(
                self.spec,
                self.engine,
                output,
                self.executor,
                on_bad_shard=self.placement.on_bad_shard,
                overwrite=overwrite,
                progress=progress,
            ).execute()
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
        if self.executor is not None:
            self.executor.close()
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
        if dataset_run(spec, placement):
            raise InputError("--emit-batch writes the requests of one file's rows, not of a dataset's")
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
    if dataset_run(spec, placement):
        _refuse_dataset(spec, placement)


def launch(
    spec: RunSpec,
    placement: Placement = Placement(),
    *,
    output: str | Path | None = None,
    backend: Backend | None = None,
    backend_factory: BackendFactory | None = None,
) -> Launch:
    """The engine and batch source of a run of ``spec`` placed as ``placement``; a cascade's thresholds are
    calibrated now when the spec asks for it (judging the labelled rows; kept beside ``output`` for a
    rerun). ``backend``: one backend for every judge; ``backend_factory``: what makes a backend per model
    (default: from each judge's inference config). Bad combinations, and ``engine_params`` an engine does not
    take (unless ``backend`` is given: then no engine is made from the configs), are refused before any model
    loads."""
    dataset = dataset_run(spec, placement, output)
    if dataset and not dataset_run(spec, placement):
        _refuse_dataset(spec, placement)  # a file's rows into a results dataset
    refuse(spec, placement)
    if backend is None:
        check_engines(spec)
    if spec.cascade is None and not spec.answers and placement.data_parallel is None:
        placement = replace(placement, data_parallel=configured_parallel(spec))
    if spec.answers:
        if backend is not None:
            raise InputError("answers come from the batch results files: pass no backend")
        backend = BatchResults(spec.answers)
    if spec.cascade is not None:
        return _cascade(spec, placement, None if output is None else Path(output), backend, backend_factory)
    parallel = placement.data_parallel or 1
    local_parallel = parallel > 1 and placement.ray is None and backend is None
    create = backend_factory or create_backend
    if local_parallel:  # the request-level pool, for what the host-parallel workers do not run (--repair)
        backend_factory = data_parallel_factory(parallel, create, placement.on_worker_death)
    engine = Engine.from_spec(spec, backend, backend_factory=backend_factory)
    if dataset:
        return Launch(
            spec, engine, LocalBatches(), placement, executor=_executor(spec, placement, engine, create)
        )
    batches: BatchSource
    if placement.retry_failed:
        batches = RetryBatches()
    elif local_parallel and splits_by_chunk(engine.judges):
        job = WorkerJob(engine.spec(spec.rows), OneEngine(create))
        batches = HostParallelBatches(HostPool(job, parallel, on_worker_death=placement.on_worker_death))
    else:
        batches = LocalBatches()
    return Launch(spec, engine, batches, placement)


def dataset_run(spec: RunSpec, placement: Placement, output: str | Path | None = None) -> bool:
    """Whether a run goes over units of a dataset (:class:`~jurist.engine.corpus.CorpusRun`): its input is
    a dataset of files (several, a folder, a glob, URLs), or its output a results dataset (a folder, a
    URL), or it runs on Ray."""
    inputs = _named(spec)
    if inputs is not None and is_dataset_input(inputs):
        return True
    return placement.ray is not None or (output is not None and is_dataset_output(output))


def _named(spec: RunSpec) -> list[str] | None:
    """The files, folders, globs or URLs the spec's rows come from (None: rows in memory, stdin)."""
    given = spec.rows.input
    if isinstance(given, str | Path):
        return None if str(given) == "-" else [str(given)]
    if isinstance(given, list | tuple) and given and all(isinstance(i, str | Path) for i in given):
        return [str(i) for i in given]
    return None


def _refuse_dataset(spec: RunSpec, placement: Placement) -> None:
    """Refuse what a run over a dataset's units does not do, naming it."""
    if _named(spec) is None:
        raise InputError(
            "a run over a dataset or on Ray reads its input from storage: give files, a folder, a glob or "
            "URLs"
        )
    used: list[str] = [name for name in ("--retry-failed", "--repair") if name in placement.used()]
    used += ["--cascade"] if spec.cascade is not None else []
    used += ["--from-batch-results"] if spec.answers else []
    if used:
        raise InputError(
            f"{', '.join(used)} runs over one file into one results file, not over a dataset or on Ray"
        )


def configured_parallel(spec: RunSpec) -> int | None:
    """The judges' ``engine_params.data_parallel``, the same placement spelt in the config (None: unset)."""
    counts = [split_config(c.inference_config)[1] for c in spec.judges]
    return max(counts) if max(counts, default=1) > 1 else None


def _executor(spec: RunSpec, placement: Placement, engine: Engine, create: BackendFactory) -> Executor:
    """Where a dataset run's units are judged: a Ray actor pool, data-parallel worker processes, or this
    process."""
    parallel = placement.data_parallel or 1
    if (placement.ray is not None or parallel > 1) and not splits_by_chunk(engine.judges):
        raise ConfigError(
            "a panel of several models runs over a dataset in one process (each worker would load every "
            "model): drop --data-parallel and --ray, or run one job per model"
        )
    if engine.shared_backend is not None and (placement.ray is not None or parallel > 1):
        raise ConfigError("worker processes make their own backends: pass a backend_factory, not a backend")
    factory: Any = OneEngine(create)
    if placement.ray is not None:
        return RayExecutor(engine.spec(spec.rows), factory, placement.ray, actors=placement.data_parallel)
    if parallel > 1:
        return HostPool(
            WorkerJob(engine.spec(spec.rows), factory), parallel, on_worker_death=placement.on_worker_death
        )
    return InProcess(engine)


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
