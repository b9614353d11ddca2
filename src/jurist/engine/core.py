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

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from typing_extensions import Unpack

from jurist.backends import check_capability, create_backend
from jurist.backends.base import Backend, describe
from jurist.config.inference import InferenceConfig
from jurist.config.models import JudgeConfig
from jurist.engine.assemble import Assembler
from jurist.engine.lazy import NO_MODEL, lazy
from jurist.engine.plan import backend_key, chunk_row_ids, group_by_backend
from jurist.engine.progress import Progress
from jurist.engine.run import FileRunOptions, LocalBatches, Run
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.stream import Outputs, Tally, judge_chunks
from jurist.engine.summary import RunSummary
from jurist.errors import InputError, JuristError
from jurist.io.opening import open_source
from jurist.io.sources import Chunk, InputData, RowSource
from jurist.judges.judge import Judge
from jurist.judges.panel import Panel
from jurist.records import EngineUse

JudgeLike = Judge | JudgeConfig | str | Path | Mapping[str, Any]
BackendFactory = Callable[[InferenceConfig], Backend]
DEFAULT_CHUNK_SIZE = 4096


class Engine:
    """Runs judges over rows.

    ``judges``: one or several judges, configs, config mappings or references (paths, built-in
    names). ``backend``: one backend for every judge; when None, one backend per distinct
    model/engine is created with ``backend_factory`` (by default from each judge's
    ``inference_config``) and closed by :meth:`close`.
    ``options``: how rows are judged and laid out (:class:`~jurist.engine.spec.RunOptions`, which documents
    each); its fields may be given as keywords instead (``Engine(judge, chunk_size=64, panel=True)``).
    """

    def __init__(
        self,
        judges: JudgeLike | Sequence[JudgeLike],
        backend: Backend | None = None,
        *,
        backend_factory: BackendFactory | None = None,
        options: RunOptions | None = None,
        **keywords: Any,
    ) -> None:
        if options is not None and keywords:
            raise TypeError(f"give options or keywords ({', '.join(sorted(keywords))}), not both")
        if options is None:
            keywords["calibrations"] = tuple(keywords.get("calibrations", ()))
            options = RunOptions(**keywords)  # an unknown keyword is a TypeError naming it
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
        if backend is None:  # an engine that cannot serve a judge's scoring mode is refused before it loads
            check_capabilities(self.judges)
        self._shared_backend = backend
        self._factory = backend_factory or create_backend
        self._backends: dict[str, Backend] = {}
        self._described: dict[str, dict[str, Any]] = {}
        self.carry_input = options.carry_input
        self.id_column = options.id_column
        self.panel: Panel | None = Panel(self.judges, quorum=options.quorum) if options.panel else None
        self.calibrations = list(options.calibrations)
        self.load_seconds = 0.0  # time spent creating backends (loading models)
        configured = [j.config.inference_config.generation.batch_size for j in self.judges]
        self.chunk_size = options.chunk_size or next((c for c in configured if c), DEFAULT_CHUNK_SIZE)
        self.max_open = options.max_open_chunks
        self.tally = Tally()  # requests sent to models by this engine
        self.options = replace(options, chunk_size=self.chunk_size)
        """The options this engine was built with (its chunk size resolved), as a run spec holds them."""

    # ------------------------------------------------------------------------------------ backends
    def backend_for(self, judge: Judge) -> Backend:
        """The backend a judge runs on: the one given, or one per distinct model and engine, created by the
        factory when its first request needs the model, for what every judge on it asks of it (their
        scoring modes' :class:`~jurist.records.EngineUse`: label scores in float32, hidden states after a
        layer), and checked by their modes once loaded (a probe head against the model)."""
        if self._shared_backend is not None:
            return self._shared_backend
        if not judge.needs_model:  # a rule judge: nothing loads
            return NO_MODEL
        key = backend_key(judge.engine_config)
        if key not in self._backends:
            sharing = [j for j in self.judges if j.needs_model and backend_key(j.engine_config) == key]
            use = EngineUse()
            for other in sharing:
                use = use.merged(other.engine_config.use)
            config = judge.engine_config.model_copy(update={"use": use})
            self._backends[key] = lazy(self._factory, config, self._loaded, partial(_check_loaded, sharing))
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
        backend = self._backends.pop(backend_key(judges[0].engine_config), None)
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

    def schema_for(self, source: RowSource) -> pa.Schema:
        """The output schema of a run of this engine over ``source``."""
        return self.assembler(source).schema

    def output_schema(self, data: Any) -> pa.Schema:
        return self.schema_for(open_source(data))

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
        for _, batch, outputs, models in self.assembled(source, skip=skip):
            if summary is not None:
                summary.add(outputs, models)
            if progress is not None:
                progress.update(outputs)
            yield batch

    def assembled(
        self, source: RowSource, *, skip: int = 0
    ) -> Iterator[tuple[Chunk, pa.RecordBatch, Outputs, dict[str, str]]]:
        """Every chunk after the first ``skip`` rows, judged and assembled into its output record batch, with
        its outputs and the model id of each judge, in input order: what a run writes, wherever it runs."""
        assembler = self.assembler(source)
        for chunk, outputs, models in self.judged(source, skip=skip):
            provenance = {j.name: j.provenance(models[j.name]) for j in self.judges}
            batch = assembler.batch(chunk.table, chunk_row_ids(chunk, self.id_column), outputs, provenance)
            yield chunk, batch, outputs, models

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

    @classmethod
    def from_spec(
        cls, spec: RunSpec, backend: Backend | None = None, *, backend_factory: BackendFactory | None = None
    ) -> Engine:
        """The engine of a run spec: its judges and options, on ``backend`` or backends from
        ``backend_factory``."""
        return cls(list(spec.judges), backend, backend_factory=backend_factory, options=spec.options)

    def run_file(
        self, input_path: Any, output_path: str | Path, **options: Unpack[FileRunOptions]
    ) -> RunSummary:
        """Judge a dataset into a results file that survives a crash, and return the run's summary.

        ``input_path``: a file, ``-`` (JSONL on stdin), a Hugging Face dataset folder, or any dataset
        :func:`~jurist.io.opening.open_source` reads (``input_format`` overrides a file's extension);
        ``limit`` / ``sample`` (with ``seed``) choose rows. Results are committed per chunk
        (:mod:`jurist.io.parts`): a rerun of the same run resumes after the last committed chunk, and finds a
        finished run complete; results of another run are refused unless ``overwrite``; ``repair`` judges
        the rows of damaged committed parts again. ``progress``: a stream for the progress line (None: no
        progress line). The run itself is a :class:`~jurist.engine.run.Run` of :meth:`spec` on this engine's
        own batches; anything else (data parallel, Ray, a cascade, ``--retry-failed``, batch results) goes
        through the front door, :func:`jurist.launch.launch`.
        """
        selection = (options.get("input_format"), options.get("limit"), options.get("sample"))
        rows = Selection(input_path, *selection, options.get("seed", 0))
        run = Run(
            self.spec(rows),
            self,
            output_path,
            overwrite=options.get("overwrite", False),
            progress=options.get("progress"),
            repair=options.get("repair", False),
        )
        return run.execute(LocalBatches())

    def spec(self, rows: Selection) -> RunSpec:
        """The spec of a run of this engine (its judges and options, as built) over ``rows``."""
        return RunSpec(tuple(j.config for j in self.judges), rows, self.options)

    def describe_models(self) -> dict[str, Any]:
        """What each judge ran on, as its backend describes it (backends already closed were described when
        they were released)."""
        described = dict(self._described)
        for judge in self.judges:
            backend = self._shared_backend or self._backends.get(backend_key(judge.engine_config))
            if not judge.needs_model:
                backend = NO_MODEL
            if judge.name not in described and backend is not None:
                described[judge.name] = describe(backend)
        return described


def _check_loaded(judges: Sequence[Judge], backend: Backend) -> None:
    """Each judge's scoring mode checks the engine it runs on, once loaded (a probe head refuses another
    model, naming both)."""
    described = describe(backend)
    for judge in judges:
        judge.scoring.check_engine(described)


def check_capabilities(judges: Sequence[Judge]) -> None:
    """Refuse a judge whose engine cannot do what it needs (hidden states for PROBE, label scores for
    LOGPROBS, reward scores for a reward judge), naming the engines that can, before any model loads."""
    for judge in judges:
        if judge.needs_model:
            capability, who = judge.kind.needs
            check_capability(judge.config.inference_config, capability, f"judge {judge.name!r}: {who}")
