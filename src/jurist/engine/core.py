"""``Engine(judges, backend).run(rows) -> Arrow``: a thin facade over planning, dispatch and assembly.

For each chunk of rows the engine plans what every (row, judge) needs (:mod:`jurist.engine.plan`), sends
the requests of every judge that shares a backend in one call per round (:mod:`jurist.engine.dispatch`;
judge-major, so rows that share a judge's prefix are adjacent) and assembles one Arrow record batch
(:mod:`jurist.engine.assemble`): ``row_id``, the input columns (unless ``carry_input=False``) and each
judge's columns.

Every input row yields exactly one output row. Problems with one row (a missing value, a bad input line,
an unparseable answer, an over-long prompt, an engine error) become that row's status; only problems
with the whole run (no judge, a dataset without a column the template needs) raise.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from jurist.analysis.calibration import Calibration
from jurist.backends import create_backend
from jurist.backends.base import Backend, describe
from jurist.config.inference import InferenceConfig
from jurist.config.models import JudgeConfig
from jurist.engine.assemble import Assembler
from jurist.engine.lazy import NO_MODEL, lazy
from jurist.engine.metadata import fingerprint, now, run_metadata
from jurist.engine.plan import backend_key, chunk_row_ids, group_by_backend
from jurist.engine.progress import Progress
from jurist.engine.repair import mend_store
from jurist.engine.retry import retry_batches
from jurist.engine.stream import MAX_OPEN_CHUNKS, Outputs, Tally, judge_chunks
from jurist.engine.summary import RunSummary
from jurist.errors import InputError, JuristError
from jurist.io.opening import open_source
from jurist.io.parts import OutputError, ResultStore, check_output, meta_path, parts_dir, read_metadata
from jurist.io.selection import LimitSource, SampleSource
from jurist.io.sources import Chunk, InputData, RowSource
from jurist.io.store_check import check_manifest
from jurist.judges.judge import Judge
from jurist.judges.panel import Panel

JudgeLike = Judge | JudgeConfig | str | Path | Mapping[str, Any]
BackendFactory = Callable[[InferenceConfig], Backend]
DEFAULT_CHUNK_SIZE = 4096


class Engine:
    """Runs judges over rows.

    ``judges``: one or several judges, configs, config mappings or references (paths, built-in
    names). ``backend``: one backend for every judge; when None, one backend per distinct
    model/engine is created with ``backend_factory`` (by default from each judge's
    ``inference_config``) and closed by :meth:`close`.
    ``panel``: add the panel's per-row columns (see :mod:`jurist.judges.panel`), with ``quorum``.
    ``calibrations``: fitted maps (see :mod:`jurist.analysis.calibration`); each adds ``<judge>.calibrated``.
    ``chunk_size``: rows per chunk (the unit of planning, writing and resuming); with a streaming backend
    up to ``max_open_chunks`` chunks are in flight at once. ``id_column``: the input column that identifies
    rows (default: ``row_id``, else ``id``, else the row's 0-based position in the input).
    """

    def __init__(
        self,
        judges: JudgeLike | Sequence[JudgeLike],
        backend: Backend | None = None,
        *,
        backend_factory: BackendFactory | None = None,
        chunk_size: int | None = None,
        carry_input: bool = True,
        id_column: str | None = None,
        panel: bool = False,
        quorum: int | None = None,
        calibrations: Sequence[Calibration] = (),
        max_open_chunks: int = MAX_OPEN_CHUNKS,
    ) -> None:
        single = isinstance(judges, Judge | JudgeConfig | str | Path | Mapping)
        items: Sequence[JudgeLike] = [judges] if single else judges  # type: ignore[list-item,assignment]
        self.judges: list[Judge] = [j if isinstance(j, Judge) else Judge.from_config(j) for j in items]
        if not self.judges:
            raise JuristError("no judge given")
        names = [j.name for j in self.judges]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise JuristError(
                f"two judges are named {', '.join(duplicates)}; give each a distinct name "
                "(config key `name`, or Judge.from_config(..., name=...))"
            )
        self._shared_backend = backend
        self._factory = backend_factory or create_backend
        self._backends: dict[str, Backend] = {}
        self._described: dict[str, dict[str, Any]] = {}
        self.carry_input = carry_input
        self.id_column = id_column
        self.panel: Panel | None = Panel(self.judges, quorum=quorum) if panel else None
        self.calibrations = list(calibrations)
        self.load_seconds = 0.0  # time spent creating backends (loading models)
        configured = [j.config.inference_config.generation.batch_size for j in self.judges]
        self.chunk_size = chunk_size or next((c for c in configured if c), DEFAULT_CHUNK_SIZE)
        self.max_open = max_open_chunks
        self.tally = Tally()  # requests sent to models by this engine

    # ------------------------------------------------------------------------------------ backends
    def backend_for(self, judge: Judge) -> Backend:
        """The backend a judge runs on: the one given, or one per distinct model and engine, created by the
        factory when its first request needs the model."""
        if self._shared_backend is not None:
            return self._shared_backend
        if not judge.needs_model:  # a rule judge: nothing loads
            return NO_MODEL
        key = backend_key(judge.config.inference_config)
        if key not in self._backends:
            self._backends[key] = lazy(self._factory, judge.config.inference_config, self._loaded)
        return self._backends[key]

    @staticmethod
    def _model_id(judge: Judge, backend: Backend) -> str:
        return backend.model_id if judge.needs_model else NO_MODEL.model_id

    def _loaded(self, seconds: float) -> None:
        self.load_seconds += seconds

    def _groups(self, judges: Sequence[Judge] | None = None) -> list[list[Judge]]:
        """Judges grouped by the backend they run on (one group when a backend was passed in)."""
        chosen = list(self.judges if judges is None else judges)
        if self._shared_backend is not None:
            return [chosen]
        # judges that need no model go along with the first model's (their rows send no request)
        groups = group_by_backend([j for j in chosen if j.needs_model])
        model_free = [j for j in chosen if not j.needs_model]
        return [[*groups[0], *model_free], *groups[1:]] if groups else [model_free] if model_free else []

    def _release(self, judges: list[Judge]) -> None:
        """Close the backend of a group this engine created, so the next model can load."""
        if self._shared_backend is not None:
            return
        backend = self._backends.pop(backend_key(judges[0].config.inference_config), None)
        if backend is not None:
            self._described.update({j.name: describe(backend if j.needs_model else NO_MODEL) for j in judges})
            backend.close()

    def close(self) -> None:
        """Close the backends this engine created (not one passed in)."""
        for backend in self._backends.values():
            backend.close()
        self._backends.clear()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------- checks
    def check_columns(self, data: RowSource | InputData) -> None:
        """Fail up front, naming the column, when the dataset lacks a field some judge's prompt reads."""
        columns = set(data.columns)
        derived = {"input", "output", "log"}
        for judge in self.judges:
            missing = judge.missing_columns(columns | derived)
            if missing:
                raise InputError(
                    f"judge {judge.name!r} needs column {', '.join(missing)}, which the "
                    f"dataset lacks (columns: {', '.join(sorted(columns)) or 'none'})",
                    source=data.source,
                )
        if self.id_column is not None and self.id_column not in columns:
            raise InputError(f"id column {self.id_column!r} is not in the dataset", source=data.source)

    def assembler(self, source: RowSource) -> Assembler:
        """The output schema of a run over ``source``, ready to assemble its batches."""
        return Assembler(
            source.schema,
            self.judges,
            carry_input=self.carry_input,
            panel=self.panel,
            calibrations=self.calibrations,
            source=source.source,
        )

    def output_schema(self, data: Any) -> pa.Schema:
        return self.assembler(open_source(data)).schema

    # ---------------------------------------------------------------------------------------- run
    def run(self, data: Any) -> pa.Table:
        """Judge every row of ``data`` (anything :func:`~jurist.io.opening.open_source` reads); one output
        row per input row, in input order."""
        source = open_source(data)
        schema = self.output_schema(source)
        return pa.Table.from_batches(list(self.iter_batches(source)), schema=schema)

    def outputs(self, data: Any) -> Outputs:
        """Judge every row; per judge name, one :class:`JudgeOutput` per row, in input order."""
        source = open_source(data)
        self.check_columns(source)
        results: Outputs = {j.name: [] for j in self.judges}
        for _, outputs, _ in self.judged(source):
            for name, outs in outputs.items():
                results[name].extend(outs)
        return results

    def iter_batches(
        self,
        data: Any,
        summary: RunSummary | None = None,
        *,
        skip: int = 0,
        progress: Progress | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield one record batch per chunk of rows, in input order, after the first ``skip`` rows."""
        source = open_source(data)
        self.check_columns(source)
        assembler = self.assembler(source)
        for chunk, outputs, models in self.judged(source, skip=skip):
            provenance = {j.name: j.provenance(models[j.name]) for j in self.judges}
            batch = assembler.batch(chunk.table, chunk_row_ids(chunk, self.id_column), outputs, provenance)
            if summary is not None:
                summary.add(outputs, models)
            if progress is not None:
                progress.update(outputs)
            yield batch

    def judged(
        self, source: RowSource, judges: Sequence[Judge] | None = None, *, skip: int = 0
    ) -> Iterator[tuple[Chunk, Outputs, dict[str, str]]]:
        """Every chunk with its outputs and the model id of each judge, in input order.

        With one backend, chunks stream through it (see :mod:`jurist.engine.stream`). With several models
        (a panel of different judge models), the models run one after another, as a GPU's memory needs:
        load the first, judge every row, free it, load the next; the chunks are then held in memory.
        ``judges``: only these of the engine's judges.
        """
        groups = self._groups(judges)
        chunks = source.chunks(self.chunk_size, skip)
        if len(groups) == 1:
            backend = self.backend_for(groups[0][0])
            models = {j.name: self._model_id(j, backend) for j in groups[0]}
            runs = judge_chunks(
                groups[0], backend, chunks, self.id_column, max_open=self.max_open, tally=self.tally
            )
            for chunk, outputs in runs:
                yield chunk, outputs, models
            return
        held = list(chunks)
        per_group: list[list[Outputs]] = []
        models = {}
        for judges in groups:
            backend = self.backend_for(judges[0])
            models.update({j.name: self._model_id(j, backend) for j in judges})
            runs = judge_chunks(
                judges, backend, iter(held), self.id_column, max_open=self.max_open, tally=self.tally
            )
            per_group.append([outputs for _, outputs in runs])
            self._release(judges)
        for index, chunk in enumerate(held):
            yield chunk, {k: v for group in per_group for k, v in group[index].items()}, models

    @property
    def shared_backend(self) -> Backend | None:
        """The one backend every judge uses when the engine was given one, else None (made per model)."""
        return self._shared_backend

    @property
    def backend_factory(self) -> BackendFactory:
        """What makes a backend for an inference config (``create_backend`` unless one was given)."""
        return self._factory

    def open_run(
        self,
        input_path: Any,
        *,
        input_format: str | None = None,
        limit: int | None = None,
        sample: int | None = None,
        seed: int = 0,
    ) -> tuple[RowSource, dict[str, Any], str]:
        """The rows a run reads (its columns checked), the options that define it, and its fingerprint:
        the same for every runner of this engine (:meth:`run_file`, :class:`~jurist.engine.ray_job.RayRun`),
        so that one can resume what the other started."""
        source = open_source(input_path, input_format=input_format, id_columns=[self.id_column or "id"])
        if sample is not None:
            source = SampleSource(source, sample, seed)
        if limit is not None:
            source = LimitSource(source, limit)
        self.check_columns(source)
        options = {
            "limit": limit,
            "sample": sample,
            "seed": seed if sample is not None else None,
            "carry_input": self.carry_input,
            "id_column": self.id_column,
            "panel": self.panel.quorum if self.panel is not None else None,
            "calibrations": [c.column for c in self.calibrations],
        }
        return source, options, fingerprint(self.judges, source.identity(), options)

    def run_file(
        self,
        input_path: Any,
        output_path: str | Path,
        *,
        input_format: str | None = None,
        limit: int | None = None,
        sample: int | None = None,
        seed: int = 0,
        overwrite: bool = False,
        retry_failed: bool = False,
        progress: IO[str] | None = None,
        repair: bool = False,
    ) -> RunSummary:
        """Judge a dataset into a results file that survives a crash, and return the run's summary.

        ``input_path``: a file, ``-`` (JSONL on stdin), a Hugging Face dataset folder, or any dataset
        :func:`~jurist.io.opening.open_source` reads; ``limit`` / ``sample`` (with ``seed``) choose rows.
        Results are committed per chunk (:mod:`jurist.io.parts`): a rerun of the same run resumes after the
        last committed chunk, and finds a finished run complete; results of another run are refused unless
        ``overwrite``. ``retry_failed`` re-judges, in a finished run, only the (row, judge) pairs whose status
        is not ``ok``. ``progress``: a stream for the progress line (None: no progress line). A resumed run
        whose committed results are damaged stops naming them; ``repair`` judges only their rows again
        (:mod:`jurist.engine.repair`).
        """
        output = Path(output_path)
        source, options, run_id = self.open_run(
            input_path, input_format=input_format, limit=limit, sample=sample, seed=seed
        )
        schema = self.assembler(source).schema
        note = check_manifest(output, run_id, repair=repair, overwrite=overwrite)  # faults: a damaged store
        plan = check_output(output, run_id, overwrite=overwrite)
        summary = RunSummary(output=str(output))
        if plan.action == "complete" and not retry_failed:
            summary.complete = True
            summary.rows = int((read_metadata(output) or {}).get("rows") or 0)
            return summary
        if retry_failed and plan.action != "complete":
            raise OutputError(
                "--retry-failed re-judges the failed rows of a finished run of these same judges and input; "
                "there is none here (run it first, or let it finish)",
                source=str(output),
            )
        if not source.replayable and plan.action == "resume":
            raise OutputError(
                f"holds partial results, and {source.source} cannot be read again to resume; "
                "pass --overwrite to start afresh",
                source=str(output),
            )
        metadata = run_metadata(
            self.judges, source.source, source.total, {**options, "chunk_size": self.chunk_size}
        )
        if retry_failed:  # the new results are staged beside the old ones, then replace them
            staging = output.with_name(f"{output.stem}.retry{output.suffix}")
            shutil.rmtree(parts_dir(staging), ignore_errors=True)
            store = ResultStore(staging, schema, run_id, metadata)
        else:
            store = ResultStore(output, schema, run_id, metadata)
            mend_store(self.iter_batches, source, store, repair=repair, note=note, stream=progress)
            summary.resumed_from = store.rows
        load_before, sent_before = self.load_seconds, self.tally.requests
        started = time.perf_counter()
        meter = Progress(source.total, stream=progress, initial=store.rows)
        kept: list[pa.RecordBatch] = []
        agreement_columns = self.panel.agreement_columns() if self.panel is not None else []
        try:
            if retry_failed:
                assembler = self.assembler(source)
                batches = retry_batches(
                    self.judges, self.judged, assembler, source, output, self.chunk_size, summary
                )
            else:
                batches = self.iter_batches(source, summary, skip=store.rows, progress=meter)
            for batch in batches:
                store.commit(batch)
                if agreement_columns:
                    kept.append(batch.select(agreement_columns))
        finally:
            meter.close()
        if self.panel is not None and kept:
            summary.agreement = self.panel.agreement(pa.Table.from_batches(kept))
        summary.seconds = time.perf_counter() - started
        summary.load_seconds = self.load_seconds - load_before
        summary.requests = self.tally.requests - sent_before
        store.finish({"finished": now(), "rows": store.rows, "models": self.describe_models()})
        if retry_failed:
            store.output.replace(output)
            if meta_path(store.output).exists():
                meta_path(store.output).replace(meta_path(output))
        return summary

    def describe_models(self) -> dict[str, Any]:
        """What each judge ran on, as its backend describes it (backends already closed were described when
        they were released)."""
        described = dict(self._described)
        for judge in self.judges:
            backend = self._shared_backend or self._backends.get(backend_key(judge.config.inference_config))
            if not judge.needs_model:
                backend = NO_MODEL
            if judge.name not in described and backend is not None:
                described[judge.name] = describe(backend)
        return described
