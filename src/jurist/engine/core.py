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

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist._version import __version__
from jurist.analysis.calibration import Calibration
from jurist.backends import create_backend
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.config.models import JudgeConfig
from jurist.engine.assemble import Assembler
from jurist.engine.dispatch import run_plan
from jurist.engine.plan import backend_key, chunk_row_ids, group_by_backend, plan_chunk
from jurist.engine.summary import RunSummary
from jurist.errors import InputError, JuristError
from jurist.io.readers import InputData, read_input
from jurist.io.writers import OutputWriter
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.panel import Panel

JudgeLike = Judge | JudgeConfig | str | Path | Mapping[str, Any]
BackendFactory = Callable[[InferenceConfig], Backend]
DEFAULT_CHUNK_SIZE = 4096
Outputs = dict[str, list[JudgeOutput]]


class Engine:
    """Runs judges over rows.

    ``judges``: one or several judges, configs, config mappings or references (paths, built-in
    names). ``backend``: one backend for every judge; when None, one backend per distinct
    model/engine is created with ``backend_factory`` (by default from each judge's
    ``inference_config``) and closed by :meth:`close`.
    ``panel``: add the panel's per-row columns (see :mod:`jurist.judges.panel`), with ``quorum``.
    ``calibrations``: fitted maps (see :mod:`jurist.analysis.calibration`); each adds ``<judge>.calibrated``.
    ``chunk_size``: rows per inference call. ``id_column``: the input column that identifies rows
    (default: ``row_id`` if the input has one, else the row's 0-based position).
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
        self.carry_input = carry_input
        self.id_column = id_column
        self.panel: Panel | None = Panel(self.judges, quorum=quorum) if panel else None
        self.calibrations = list(calibrations)
        self.load_seconds = 0.0  # time spent creating backends (loading models)
        configured = [j.config.inference_config.generation.batch_size for j in self.judges]
        self.chunk_size = chunk_size or next((c for c in configured if c), DEFAULT_CHUNK_SIZE)

    # ------------------------------------------------------------------------------------ backends
    def backend_for(self, judge: Judge) -> Backend:
        if self._shared_backend is not None:
            return self._shared_backend
        key = backend_key(judge.config.inference_config)
        if key not in self._backends:
            started = time.perf_counter()
            self._backends[key] = self._factory(judge.config.inference_config)
            self.load_seconds += time.perf_counter() - started
        return self._backends[key]

    def _groups(self) -> list[list[Judge]]:
        """Judges grouped by the backend they run on (one group when a backend was passed in)."""
        return [list(self.judges)] if self._shared_backend is not None else group_by_backend(self.judges)

    def _release(self, judges: list[Judge]) -> None:
        """Close the backend of a group this engine created, so the next model can load."""
        if self._shared_backend is not None:
            return
        backend = self._backends.pop(backend_key(judges[0].config.inference_config), None)
        if backend is not None:
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
    def check_columns(self, data: InputData) -> None:
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

    def assembler(self, data: InputData) -> Assembler:
        """The output schema of a run over ``data``, ready to assemble its batches."""
        return Assembler(
            data.table.schema,
            self.judges,
            carry_input=self.carry_input,
            panel=self.panel,
            calibrations=self.calibrations,
            source=data.source,
        )

    def output_schema(self, data: InputData) -> pa.Schema:
        return self.assembler(data).schema

    # ---------------------------------------------------------------------------------------- run
    def run(self, data: InputData | pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
        """Judge every row; one output row per input row, in input order."""
        data = as_input(data)
        schema = self.output_schema(data)
        return pa.Table.from_batches(list(self.iter_batches(data)), schema=schema)

    def outputs(self, data: InputData | pa.Table | Sequence[Mapping[str, Any]]) -> Outputs:
        """Judge every row; per judge name, one :class:`JudgeOutput` per row, in input order."""
        data = as_input(data)
        self.check_columns(data)
        results: Outputs = {j.name: [] for j in self.judges}
        for judges in self._groups():
            for start in self._starts(data):
                for name, outs in self._judge_chunk(judges, data, start).items():
                    results[name].extend(outs)
        return results

    def iter_batches(self, data: InputData, summary: RunSummary | None = None) -> Iterator[pa.RecordBatch]:
        """Yield one record batch per chunk of rows.

        With one backend, chunks stream: each is judged and yielded in turn. With several models (a
        panel of different judge models), the models run one after another, as a GPU's memory needs:
        load the first, judge every row, free it, load the next; the batches are yielded at the end.
        """
        self.check_columns(data)
        assembler = self.assembler(data)
        groups = self._groups()
        models: dict[str, str] = {}
        starts = self._starts(data)

        def judge_group(judges: list[Judge], start: int) -> Outputs:
            models.update({j.name: self.backend_for(j).model_id for j in judges})
            return self._judge_chunk(judges, data, start)

        chunks: Iterator[Outputs]
        if len(groups) == 1:
            chunks = (judge_group(groups[0], start) for start in starts)
        else:
            per_group = []
            for judges in groups:
                per_group.append([judge_group(judges, start) for start in starts])
                self._release(judges)
            chunks = ({k: v for group in per_group for k, v in group[i].items()} for i in range(len(starts)))
        for start, outputs in zip(starts, chunks, strict=True):
            chunk = data.table.slice(start, self.chunk_size)
            provenance = {j.name: j.provenance(models[j.name]) for j in self.judges}
            batch = assembler.batch(chunk, chunk_row_ids(chunk, start, self.id_column), outputs, provenance)
            if summary is not None:
                summary.add(outputs, models)
            yield batch

    def _starts(self, data: InputData) -> list[int]:
        return list(range(0, data.num_rows, self.chunk_size))

    def _judge_chunk(self, judges: list[Judge], data: InputData, start: int) -> Outputs:
        backend = self.backend_for(judges[0])
        chunk = data.table.slice(start, self.chunk_size)
        errors = {i - start: e for i, e in data.row_errors.items() if start <= i < start + chunk.num_rows}
        ids = chunk_row_ids(chunk, start, self.id_column)
        plan = plan_chunk(judges, chunk.to_pylist(), ids, errors, backend.constraint_kinds)
        return run_plan(backend, plan)

    def run_file(self, input_path: str | Path, output_path: str | Path) -> RunSummary:
        """Read a dataset file, judge it, write the results (format by extension); return a summary, with
        the panel's agreement when there is a panel."""
        data = read_input(input_path)
        schema = self.output_schema(data)
        summary = RunSummary(output=str(output_path))
        load_before = self.load_seconds
        started = time.perf_counter()
        kept: list[pa.RecordBatch] = []
        agreement_columns = self.panel.agreement_columns() if self.panel is not None else []
        metadata = {"jurist": json.dumps(self.run_metadata(data))}
        with OutputWriter(output_path, schema, metadata=metadata) as writer:
            for batch in self.iter_batches(data, summary):
                writer.write(batch)
                if agreement_columns:
                    kept.append(batch.select(agreement_columns))
        if self.panel is not None and kept:
            summary.agreement = self.panel.agreement(pa.Table.from_batches(kept))
        summary.seconds = time.perf_counter() - started
        summary.load_seconds = self.load_seconds - load_before
        return summary

    def run_metadata(self, data: InputData) -> dict[str, Any]:
        """Provenance written into the output file's schema metadata."""
        return {
            "jurist_version": __version__,
            "input": data.source,
            "rows": data.num_rows,
            "judges": [
                {
                    "name": j.name,
                    "source": j.config.source,
                    "prompt_hash": j.prompt_hash,
                    "schema_hash": j.schema_hash,
                    "config": j.config.model_dump(mode="json"),
                }
                for j in self.judges
            ],
        }


def as_input(data: InputData | pa.Table | Sequence[Mapping[str, Any]]) -> InputData:
    """Rows as :class:`~jurist.io.readers.InputData`."""
    if isinstance(data, InputData):
        return data
    if isinstance(data, pa.Table):
        return InputData(data)
    return InputData.from_rows(list(data))
