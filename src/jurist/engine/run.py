"""A run: the one owner of its durable lifecycle (:class:`Run`), over a source of judged batches.

A :class:`Run` takes a spec (:class:`~jurist.engine.spec.RunSpec`), an engine and an output path, and owns
everything between "these rows, these judges" and "a finished results file": it opens the input (columns
checked), decides from the output what to do (start, resume, report complete, refuse), writes the run
metadata, commits judged batches to the result store (:mod:`jurist.io.parts`), shows progress, computes the
panel's agreement, builds the summary and merges the parts at the end. Where the judged batches come from,
and everything that differs between such sources (which file is written, the rows done before, how a
damaged part's rows are judged again), is asked of a :class:`BatchSource`: the local engine
(:class:`LocalBatches`), re-judging a finished run's failed rows (:class:`RetryBatches`), data-parallel
workers (:class:`~jurist.engine.host_parallel.HostParallelBatches`) or a cascade's stages
(:class:`~jurist.cascade.batches.CascadeBatches`). The front door, :func:`jurist.launch.launch`, chooses it.
A run over a dataset of files is a :class:`~jurist.engine.corpus.CorpusRun` instead.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol, TypedDict

import pyarrow as pa

from jurist.backends.base import Backend
from jurist.engine.assemble import Assembler
from jurist.engine.metadata import now, position_priors, run_metadata, scoring_identities
from jurist.engine.preflight import check_constraints
from jurist.engine.progress import Progress
from jurist.engine.repair import mend_store
from jurist.engine.retry import retry_batches
from jurist.engine.spec import RunSpec
from jurist.engine.stream import Outputs, Tally
from jurist.engine.summary import RunSummary
from jurist.io.lock import OutputLock
from jurist.io.parts import (
    OutputError,
    ResultStore,
    StagedPart,
    check_output,
    meta_path,
    parts_dir,
    read_metadata,
)
from jurist.io.sources import Chunk, RowSource
from jurist.io.store_check import check_manifest
from jurist.judges.judge import Judge
from jurist.judges.panel import Panel


class RunEngine(Protocol):
    """What a run needs of its engine (:class:`~jurist.engine.core.Engine` is one)."""

    judges: list[Judge]
    panel: Panel | None
    chunk_size: int
    id_column: str | None
    load_seconds: float
    tally: Tally

    @property
    def shared_backend(self) -> Backend | None: ...

    def check_columns(self, data: RowSource) -> None: ...

    def assembler(self, source: RowSource) -> Assembler: ...

    def schema_for(self, source: RowSource) -> pa.Schema: ...

    def iter_batches(
        self, data: Any, summary: RunSummary | None = None, *, skip: int = 0, progress: Progress | None = None
    ) -> Iterator[pa.RecordBatch]: ...

    def judged(
        self, source: RowSource, judges: Sequence[Judge] | None = None, *, skip: int = 0
    ) -> Iterator[tuple[Chunk, Outputs, dict[str, str]]]: ...

    def describe_models(self) -> dict[str, Any]: ...


@dataclass
class RunContext:
    """What a batch source sees of the run it feeds."""

    engine: RunEngine
    source: RowSource
    schema: pa.Schema
    output: Path
    run_id: str
    store: ResultStore
    summary: RunSummary
    overwrite: bool
    progress: Progress | None = None


class BatchSource:
    """Where a run's judged record batches come from, and what the run does with its output for them.

    :meth:`judges` says, from what the output holds (``action``: ``start``, ``resume`` or ``complete``),
    whether there is anything to judge (False: the run is reported complete), or refuses; :meth:`target` is
    the results file written; :meth:`start` returns the rows already done before this run (committed or
    kept elsewhere); :meth:`batches` yields the rest, in input order, each ready to commit (a record batch, or
    a part another process wrote); :meth:`rejudge`
    judges the rows of damaged committed parts again (``--repair``), one batch per part; :meth:`models`
    describes what judged them; :meth:`done` finishes after the results are written; :meth:`close` frees
    what the source keeps between runs. This class judges on
    the run's own engine, streaming chunk by chunk after the committed rows (:class:`LocalBatches`)."""

    def judges(self, action: str, output: Path) -> bool:
        return action != "complete"

    def target(self, output: Path) -> Path:
        return output

    def start(self, run: RunContext) -> int:
        return run.store.rows

    def batches(self, run: RunContext) -> Iterator[pa.RecordBatch | StagedPart]:
        return run.engine.iter_batches(run.source, run.summary, skip=run.store.rows, progress=run.progress)

    def rejudge(self, run: RunContext, rows: RowSource) -> Iterator[pa.RecordBatch]:
        return run.engine.iter_batches(rows)

    def models(self, run: RunContext) -> dict[str, Any]:
        return run.engine.describe_models()

    def done(self, run: RunContext) -> None:
        return None

    def close(self) -> None:
        """Free what this source holds beyond a run (worker processes); nothing here."""
        return None


class LocalBatches(BatchSource):
    """Batches judged by the run's own engine, streamed chunk by chunk after the committed rows."""


class RetryBatches(BatchSource):
    """A finished run's results with its failed (row, judge) pairs judged again (``--retry-failed``): the
    new results are staged beside the old ones (``<output>.retry<ext>``), then replace them."""

    def judges(self, action: str, output: Path) -> bool:
        if action != "complete":
            raise OutputError(
                "--retry-failed re-judges the failed rows of a finished run of these same judges and input; "
                "there is none here (run it first, or let it finish)",
                source=str(output),
            )
        return True

    def target(self, output: Path) -> Path:
        staged = output.with_name(f"{output.stem}.retry{output.suffix}")
        shutil.rmtree(parts_dir(staged), ignore_errors=True)
        return staged

    def start(self, run: RunContext) -> int:
        return 0

    def batches(self, run: RunContext) -> Iterator[pa.RecordBatch]:
        engine = run.engine
        return retry_batches(
            engine.judges,
            engine.judged,
            engine.assembler(run.source),
            run.source,
            run.output,
            engine.chunk_size,
            run.summary,
        )

    def done(self, run: RunContext) -> None:
        staged, output = run.store.output, run.output
        staged.replace(output)
        if meta_path(staged).exists():
            meta_path(staged).replace(meta_path(output))


class Run:
    """One run of ``spec`` on ``engine`` into ``output``. :meth:`execute` judges (or resumes, or finds
    complete) and returns the summary. ``overwrite``: replace another run's results; ``progress``: a stream
    for the progress line (None: none)."""

    def __init__(
        self,
        spec: RunSpec,
        engine: RunEngine,
        output: str | Path,
        *,
        overwrite: bool = False,
        progress: IO[str] | None = None,
        repair: bool = False,
        lock: OutputLock | None = None,
    ) -> None:
        self.spec, self.engine, self.output = spec, engine, Path(output)
        self.overwrite, self.progress, self.repair = overwrite, progress, repair
        self.lock = lock

    def open(self) -> tuple[RowSource, dict[str, Any], str]:
        """The rows (their columns checked against the judges), the options recorded and the fingerprint,
        both from the spec alone: the same for every batch source, so that one can resume what another
        started."""
        engine, spec = self.engine, self.spec
        source = spec.rows.open(spec.options.id_column)
        engine.check_columns(source)
        decisive = spec.decisive_options()  # once: a batch results file is read for its identity
        run_id = spec.fingerprint(source.identity(), decisive, scoring_identities(engine.judges))
        return source, {**decisive, "chunk_size": engine.chunk_size}, run_id

    def execute(self, batches: BatchSource | None = None) -> RunSummary:
        """Judge the rows from ``batches`` (default: the local engine) into the output, durably, holding the
        output's lock (:mod:`jurist.io.lock`) throughout: another run on the same output is refused before
        any model loads. ``lock``: one the caller already holds (it releases it); else the run takes its own.
        Committed results that are damaged stop the run, naming them; ``repair`` has the batch source judge
        their rows again."""
        lock = self.lock or OutputLock(self.output)
        lock.acquire()
        try:
            return self._execute(batches or LocalBatches())
        finally:
            if self.lock is None:
                lock.release()

    def _execute(self, batches: BatchSource) -> RunSummary:
        output, engine = self.output, self.engine
        source, options, run_id = self.open()
        schema = engine.schema_for(source)
        note = check_manifest(output, run_id, repair=self.repair, overwrite=self.overwrite)
        plan = check_output(output, run_id, overwrite=self.overwrite)
        summary = RunSummary(output=str(output))
        if not batches.judges(plan.action, output):
            summary.complete = True
            summary.rows = int((read_metadata(output) or {}).get("rows") or 0)
            return summary
        if not source.replayable and plan.action == "resume":
            raise OutputError(
                f"holds partial results, and {source.source} cannot be read again to resume; "
                "pass --overwrite to start afresh",
                source=str(output),
            )
        if engine.shared_backend is None:  # backends made from the configs: compile before any model loads
            check_constraints(engine.judges)  # (not for a run found complete above: nothing will decode)
        metadata = run_metadata(engine.judges, source.source, source.total, options, panel=engine.panel)
        store = ResultStore(batches.target(output), schema, run_id, metadata)
        context = RunContext(engine, source, schema, output, run_id, store, summary, self.overwrite)
        summary.resumed_from = batches.start(context)
        mend_store(
            lambda rows: batches.rejudge(context, rows),
            source,
            store,
            repair=self.repair,
            note=note,
            stream=self.progress,
        )
        load_before, sent_before = engine.load_seconds, engine.tally.requests
        started = time.perf_counter()
        context.progress = Progress(source.total, stream=self.progress, initial=summary.resumed_from)
        agreement_columns = engine.panel.agreement_columns() if engine.panel is not None else []
        kept: list[pa.RecordBatch] = []
        try:
            for judged in batches.batches(context):
                if isinstance(judged, StagedPart):  # written by a worker: renamed into place
                    store.commit_staged(judged)
                    batch = judged.kept
                else:
                    store.commit(judged)
                    batch = judged
                if agreement_columns and batch is not None:
                    kept.append(batch.select(agreement_columns))
        finally:
            context.progress.close()
        if engine.panel is not None and kept:
            summary.agreement = engine.panel.agreement(pa.Table.from_batches(kept))
        summary.seconds = time.perf_counter() - started
        summary.load_seconds += engine.load_seconds - load_before
        summary.requests += engine.tally.requests - sent_before
        finished = {"finished": now(), "rows": store.rows, "models": batches.models(context)}
        priors = position_priors(engine.judges, store.column_parts)
        store.finish({**finished, **({"position_prior": priors} if priors else {})})
        batches.done(context)
        return summary


class FileRunOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`~jurist.engine.core.Engine.run_file`: the rows' format and
    selection, and the run's handling
    of its output (``overwrite``, ``repair``: judge a damaged store's rows again) and progress line."""

    input_format: str | None
    limit: int | None
    sample: int | None
    seed: int
    overwrite: bool
    progress: IO[str] | None
    repair: bool
