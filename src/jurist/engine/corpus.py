"""A run over a dataset of many files: one plan of units, one commit protocol, any executor.

:class:`CorpusRun` is the driver of such a run. It lists the input (:func:`jurist.io.units.plan`: the
planner reads listings, and the first rows of the first shard to fix the columns before any model loads),
fingerprints the run from the spec and the listing, takes the output's lease, skips the units a run with
this fingerprint committed before, and hands the rest to an :class:`~jurist.engine.units.Executor`: this
process (:class:`~jurist.engine.units.InProcess`), data-parallel workers
(:class:`~jurist.engine.host_parallel.HostPool`) or a Ray actor pool
(:class:`~jurist.engine.ray_units.RayExecutor`). Each of them reads its units from storage, judges them,
writes their shards (:mod:`jurist.io.dataset`) and hands back only each unit's manifest entry, which the
driver gathers into the manifest, the summary and the progress line: its memory and traffic grow with the
units, not the rows.

A shard that cannot be read is named with its reason; the other units go on. With ``on_bad_shard="fail"``
the run ends unfinished (a rerun tries the bad shards again) and the summary names them; with ``"skip"`` they
are recorded as skipped and the run is complete. The output is a results dataset (a folder or a URL
prefix), or a file (``.parquet``, ``.arrow``, ``.jsonl``): the dataset is then kept beside it in
``<output>.shards/`` while the run goes on and merged into it at the end.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from jurist.engine.metadata import now, position_priors, run_metadata, scoring_identities
from jurist.engine.preflight import check_constraints
from jurist.engine.progress import Progress
from jurist.engine.run import RunEngine
from jurist.engine.spec import RunSpec
from jurist.engine.summary import RunSummary
from jurist.engine.units import Executor, UnitJob
from jurist.io.dataset import SHARDS, Lease, ResultsDataset, ShardWriter
from jurist.io.formats import OUTPUT_SUFFIXES
from jurist.io.location import Place, is_url
from jurist.io.lock import OutputLock
from jurist.io.parts import OutputError, check_output, read_metadata
from jurist.io.sources import RowSource
from jurist.io.units import Corpus, choose, plan
from jurist.io.writers import OutputWriter

OnBadShard = Literal["fail", "skip"]


def is_dataset_output(output: str | Path) -> bool:
    """Whether ``output`` names a results dataset (a URL without a results file suffix, a folder, a name
    ending in ``/`` or without any suffix) rather than one results file (a name with a suffix: a results
    file's, or one refused as unknown)."""
    text = str(output)
    if text.endswith("/") or Path(text).is_dir():
        return True
    suffix = PurePosixPath(text).suffix.lower()
    return suffix not in OUTPUT_SUFFIXES if is_url(text) else not suffix


def dataset_root(output: str | Path) -> tuple[Place, Path | None]:
    """Where a dataset run writes its shards, and the file they are merged into at the end (None: the
    dataset is the output)."""
    if is_dataset_output(output):
        return Place.of(output), None
    if is_url(str(output)):
        raise OutputError(
            "a results file is written on this machine; at a URL give a folder (a prefix ending in /), "
            "and `jurist merge` it into a file where you need one",
            source=str(output),
        )
    path = Path(output)
    return Place.of(path.with_name(path.name + SHARDS)), path


class CorpusRun:
    """One run of ``spec`` over a dataset of files into ``output`` on ``executor`` (see the module):
    :meth:`execute` judges (or resumes, or finds the run complete) and returns the summary. ``on_bad_shard``:
    ``fail`` (the run ends unfinished, naming the shards) or ``skip``; ``overwrite``: replace another run's
    results; ``progress``: the progress line's stream."""

    def __init__(
        self,
        spec: RunSpec,
        engine: RunEngine,
        output: str | Path,
        executor: Executor,
        *,
        on_bad_shard: OnBadShard = "fail",
        overwrite: bool = False,
        progress: IO[str] | None = None,
    ) -> None:
        self.spec, self.engine, self.executor, self.on_bad_shard = spec, engine, executor, on_bad_shard
        self.output, self.overwrite, self.progress = str(output), overwrite, progress
        self.root, self.merge_to = dataset_root(output)

    def corpus(self) -> Corpus:
        rows = self.spec.rows
        inputs = tuple(rows.input) if isinstance(rows.input, list | tuple) else (str(rows.input),)
        listed = plan(inputs, input_format=rows.input_format, unit_bytes=self.spec.options.unit_bytes)
        return choose(listed, rows.limit, rows.sample, rows.seed)

    def execute(self) -> RunSummary:
        engine, spec = self.engine, self.spec
        corpus = self.corpus()
        id_columns = (spec.options.id_column or "id",)
        head = corpus.head(id_columns)
        engine.check_columns(head)
        decisive = {**spec.decisive_options(), "unit_bytes": corpus.unit_bytes}
        run_id = spec.fingerprint(corpus.identity(), decisive, scoring_identities(engine.judges))
        with self._held(run_id):
            if (
                self.merge_to is not None
                and check_output(self.merge_to, run_id, overwrite=self.overwrite).action == "complete"
            ):
                summary = RunSummary(output=self.output, complete=True)
                summary.rows = int((read_metadata(self.merge_to) or {}).get("rows") or 0)
                return summary
            return self._execute(corpus, head, run_id, {**decisive, "chunk_size": engine.chunk_size})

    @contextlib.contextmanager
    def _held(self, run_id: str) -> Iterator[None]:
        """The output's lease (a URL) or lock (a local folder), from before anything is written to the end."""
        local = self.root.local
        if local is not None:
            local.mkdir(parents=True, exist_ok=True)
            lock: OutputLock | Lease = OutputLock(local / "_jurist")
        else:
            lock = Lease(self.root, run_id)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def _execute(self, corpus: Corpus, head: RowSource, run_id: str, options: dict[str, Any]) -> RunSummary:
        engine, dataset = self.engine, ResultsDataset(self.root)
        summary = RunSummary(output=self.output)
        action = dataset.check(run_id, overwrite=self.overwrite)
        if action == "complete":
            summary.complete = True
            summary.rows = int((dataset.manifest() or {}).get("rows") or 0)
            self._merge(dataset)
            return summary
        if engine.shared_backend is None:  # backends made from the configs: compile before any model loads
            check_constraints(engine.judges)
        metadata = run_metadata(engine.judges, corpus.source, None, options, panel=engine.panel)
        metadata["units"] = len(corpus.units)
        stamped = {"jurist": json.dumps({**metadata, "fingerprint": run_id}, default=str)}
        writer = ShardWriter(self.root, engine.schema_for(head).with_metadata(stamped), run_id)
        names = [u.name for u in corpus.units]
        inputs = {u.name: u.identity() for u in corpus.units}
        present = dataset.shards()  # listed once: what is committed, and what is no unit's any more
        committed = dataset.committed(run_id, names, present)
        done = {n: e for n, e in committed.items() if e.get("input") == inputs[n]}
        dataset.prune(names, present)
        dataset.begin(run_id, metadata, {n: done.get(n, {"status": "pending"}) for n in names})
        summary.resumed_from = sum(int(e["rows"]) for e in done.values())
        todo = [u for u in corpus.units if u.name not in done]
        job = UnitJob(head.schema, writer, corpus.labelled, (self.spec.options.id_column or "id",))
        progress = Progress(None, stream=self.progress, initial=summary.resumed_from)
        bad: dict[str, str] = {}
        started = time.perf_counter()
        try:
            if todo:
                summary.load_seconds += self.executor.start()
            for result in self.executor.judge_units(job, todo):
                entry = result.entry
                if result.ok:
                    counts = result.counts()
                    summary.merge(counts)
                    progress.add(counts.rows, counts.statuses())
                else:
                    bad[entry["shard"]] = entry["error"]
                    if self.on_bad_shard == "skip":
                        entry = {**entry, "status": "skipped"}
                dataset.record(result.name, entry)
        finally:
            progress.close()
            dataset.flush(force=True)
        summary.seconds = time.perf_counter() - started
        summary.units = len(todo)
        summary.bad_shards = bad or None
        finished: dict[str, Any] = {"finished": now(), "models": self.executor.described()}
        if bad:
            finished["bad_shards"] = bad
        finished["rows"] = sum(int(e.get("rows", 0)) for e in dataset.entries.values() if e["status"] == "ok")
        priors = position_priors(engine.judges, lambda columns: dataset_columns(dataset, columns))
        if priors:
            finished["position_prior"] = priors
        if engine.panel is not None:
            columns = engine.panel.agreement_columns()
            parts = [pa.table(p) for p in dataset_columns(dataset, columns)]
            if parts:
                summary.agreement = engine.panel.agreement(pa.concat_tables(parts))
        if bad and self.on_bad_shard == "fail":
            dataset.head["metadata"] = {**dataset.head["metadata"], **finished}
            dataset.flush(force=True, status="incomplete")
            return summary
        dataset.finish(finished)
        self._merge(dataset)
        return summary

    def _merge(self, dataset: ResultsDataset) -> None:
        """A file output: the dataset merged into it, then removed."""
        if self.merge_to is None:
            return
        if not self.merge_to.exists():
            merge(dataset, self.merge_to)
        local = self.root.local
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)


def dataset_columns(dataset: ResultsDataset, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
    """The committed values of ``columns`` (those the shards have), a shard at a time, in unit order."""
    fs = dataset.root.fs()[0]
    for path in dataset.files(needed=False)[0]:
        names = [c for c in columns if c in pq.read_schema(path, filesystem=fs).names]
        if not names:
            return
        table = pq.read_table(path, columns=names, filesystem=fs)
        yield {c: table.column(c).to_pylist() for c in names}


def merge(dataset: ResultsDataset, output: Path) -> int:
    """Write a results dataset's committed shards, in unit order, into one results file (Parquet, Arrow or
    JSONL, by extension) with the run's metadata; the rows written. ``jurist merge`` and a file output."""
    files, manifest = dataset.files()
    fs = dataset.root.fs()[0]
    rows = sum(int(pq.read_metadata(path, filesystem=fs).num_rows) for path in files)
    metadata = {**manifest.get("metadata", {}), "fingerprint": manifest.get("fingerprint"), "rows": rows}
    schema = pq.read_schema(files[0], filesystem=fs).remove_metadata()
    with OutputWriter(output, schema, metadata={"jurist": json.dumps(metadata, default=str)}) as writer:
        for path in files:
            for batch in pq.ParquetFile(fs.open_input_file(path)).iter_batches():
                writer.write(batch)
    if output.suffix.lower() == ".jsonl":
        from jurist.io.parts import meta_path

        meta_path(output).write_text(json.dumps(metadata, indent=2, default=str))
    return rows
