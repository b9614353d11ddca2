"""Rows -> requests -> backend -> results, in chunks: ``Engine(judges, backend).run(rows) -> Arrow``.

For each chunk of rows the engine renders one request per (row, judge), sends every request of a
backend in one ``generate`` call (judge-major, so rows that share a judge's prefix are adjacent), reads
the completions back in request order and assembles one Arrow record batch: ``row_id``, the input
columns (unless ``carry_input=False``) and each judge's columns (see :mod:`jurist.results`).

Every input row yields exactly one output row. Problems with one row (a missing value, a bad input line,
an unparseable answer, an over-long prompt, an engine error) become that row's status; only problems
with the whole run (no judge, a dataset without a column the template needs) raise.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.backends.base import (
    Backend,
    Completion,
    GenerationRequest,
    LabelRequest,
    LabelScorer,
    LabelScores,
)
from jurist.calibration import Calibration
from jurist.config import InferenceConfig, JudgeConfig
from jurist.errors import InputError, JuristError
from jurist.io import InputData, OutputWriter, read_input
from jurist.judge import Answer, Judge, Request, missing_message
from jurist.jury import Panel
from jurist.results import JudgeOutput, judge_columns, judge_fields
from jurist.templates import MissingValue

logger = logging.getLogger("jurist")

JudgeLike = Judge | JudgeConfig | str | Path | Mapping[str, Any]
BackendFactory = Callable[[InferenceConfig], Backend]
DEFAULT_CHUNK_SIZE = 4096


@dataclass
class JudgeSummary:
    """Per-judge counts and score statistics of a run."""

    statuses: Counter[str] = field(default_factory=Counter)
    scores: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, output: JudgeOutput) -> None:
        self.statuses[output.status] += 1
        if output.score is not None:
            self.scores.append(output.score)
        self.prompt_tokens += output.prompt_tokens or 0
        self.completion_tokens += output.completion_tokens or 0

    def score_stats(self) -> dict[str, float | int | None]:
        if not self.scores:
            return {"n": 0, "mean": None, "min": None, "max": None}
        return {
            "n": len(self.scores),
            "mean": sum(self.scores) / len(self.scores),
            "min": min(self.scores),
            "max": max(self.scores),
        }


@dataclass
class RunSummary:
    """What a run did: rows, statuses and scores per judge, time and throughput."""

    rows: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    judges: dict[str, JudgeSummary] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    output: str | None = None

    @property
    def judge_seconds(self) -> float:
        """Wall time spent judging: the run's time less the time spent loading models."""
        return max(self.seconds - self.load_seconds, 0.0)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.judge_seconds if self.judge_seconds > 0 else 0.0

    @property
    def completion_tokens(self) -> int:
        return sum(j.completion_tokens for j in self.judges.values())

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.judge_seconds if self.judge_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "model_load_seconds": round(self.load_seconds, 3),
            "rows_per_second": round(self.rows_per_second, 3),
            "completion_tokens_per_second": round(self.tokens_per_second, 2),
            "output": self.output,
            "judges": {
                name: {
                    "model": self.models.get(name),
                    "statuses": dict(s.statuses),
                    "score": s.score_stats(),
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens,
                }
                for name, s in self.judges.items()
            },
        }


def _default_backend_factory(config: InferenceConfig) -> Backend:
    from jurist.backends import create_backend

    return create_backend(config)


def _backend_key(config: InferenceConfig) -> str:
    """Judges whose inference configs agree on everything but sampling share one backend (one engine)."""
    data = config.model_dump(mode="json", exclude={"generation"})
    return json.dumps(data, sort_keys=True)


class Engine:
    """Runs judges over rows.

    ``judges``: one or several judges, configs, config mappings or references (paths, built-in
    names). ``backend``: one backend for every judge; when None, one backend per distinct
    model/engine is created with ``backend_factory`` (by default from each judge's
    ``inference_config``) and closed by :meth:`close`.
    ``panel``: add the panel's per-row columns (see :mod:`jurist.jury`), with ``quorum``.
    ``calibrations``: fitted maps (see :mod:`jurist.calibration`); each adds ``<judge>.calibrated``.
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
        self._factory = backend_factory or _default_backend_factory
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
        key = _backend_key(judge.config.inference_config)
        if key not in self._backends:
            started = time.perf_counter()
            self._backends[key] = self._factory(judge.config.inference_config)
            self.load_seconds += time.perf_counter() - started
        return self._backends[key]

    def _plan(self) -> list[list[Judge]]:
        """Judges grouped by the backend they run on (one group when a backend was passed in)."""
        if self._shared_backend is not None:
            return [list(self.judges)]
        groups: dict[str, list[Judge]] = {}
        for judge in self.judges:
            groups.setdefault(_backend_key(judge.config.inference_config), []).append(judge)
        return list(groups.values())

    def _release(self, judges: list[Judge]) -> None:
        """Close the backend of a group this engine created, so the next model can load."""
        if self._shared_backend is not None:
            return
        backend = self._backends.pop(_backend_key(judges[0].config.inference_config), None)
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

    def output_schema(self, data: InputData) -> pa.Schema:
        fields = [pa.field("row_id", pa.string())]
        if self.carry_input:
            fields += [f for f in data.table.schema if f.name != "row_id"]
        for judge in self.judges:
            fields += judge_fields(judge)
        if self.panel is not None:
            fields += self.panel.arrow_fields()
        for calibration in self.calibrations:
            if calibration.column not in [f.name for f in fields]:
                raise InputError(
                    f"calibration for {calibration.column!r} matches no output column of this run",
                    source=data.source,
                )
            fields.append(pa.field(f"{calibration.judge}.calibrated", pa.float64()))
        names = [f.name for f in fields]
        clashes = sorted({n for n in names if names.count(n) > 1})
        if clashes:
            raise InputError(
                f"input column(s) {', '.join(clashes)} clash with judge output columns; rename them or "
                "pass carry_input=False (--no-carry)",
                source=data.source,
            )
        return pa.schema(fields)

    # ---------------------------------------------------------------------------------------- run
    def run(self, data: InputData | pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
        """Judge every row; one output row per input row, in input order."""
        data = _as_input(data)
        schema = self.output_schema(data)
        batches = list(self.iter_batches(data))
        return pa.Table.from_batches(batches, schema=schema)

    def outputs(
        self, data: InputData | pa.Table | Sequence[Mapping[str, Any]]
    ) -> dict[str, list[JudgeOutput]]:
        """Judge every row; per judge name, one :class:`JudgeOutput` per row, in input order."""
        data = _as_input(data)
        self.check_columns(data)
        results: dict[str, list[JudgeOutput]] = {j.name: [] for j in self.judges}
        for judges in self._plan():
            backend = self.backend_for(judges[0])
            for start in range(0, data.num_rows, self.chunk_size):
                rows = data.table.slice(start, self.chunk_size).to_pylist()
                for name, outs in self._judge_chunk(backend, judges, rows, start, data.row_errors).items():
                    results[name].extend(outs)
        return results

    def iter_batches(self, data: InputData, summary: RunSummary | None = None) -> Iterator[pa.RecordBatch]:
        """Yield one record batch per chunk of rows.

        With one backend, chunks stream: each is judged and yielded in turn. With several models (a
        panel of different judge models), the models run one after another, as a GPU's memory needs:
        load the first, judge every row, free it, load the next; the batches are yielded at the end.
        """
        self.check_columns(data)
        schema = self.output_schema(data)
        plan = self._plan()
        models: dict[str, str] = {}
        starts = list(range(0, data.num_rows, self.chunk_size))

        def judge_all(judges: list[Judge], start: int) -> dict[str, list[JudgeOutput]]:
            backend = self.backend_for(judges[0])
            models.update({j.name: backend.model_id for j in judges})
            rows = data.table.slice(start, self.chunk_size).to_pylist()
            return self._judge_chunk(backend, judges, rows, start, data.row_errors)

        if len(plan) == 1:
            chunks: Iterator[dict[str, list[JudgeOutput]]] = (judge_all(plan[0], start) for start in starts)
        else:
            per_group = []
            for judges in plan:
                per_group.append([judge_all(judges, start) for start in starts])
                self._release(judges)
            chunks = ({k: v for group in per_group for k, v in group[i].items()} for i in range(len(starts)))
        for start, outputs in zip(starts, chunks, strict=True):
            chunk = data.table.slice(start, self.chunk_size)
            batch = self._assemble(schema, chunk, start, outputs, models)
            if summary is not None:
                summary.rows += chunk.num_rows
                summary.models.update(models)
                for name, outs in outputs.items():
                    judge_summary = summary.judges.setdefault(name, JudgeSummary())
                    for output in outs:
                        judge_summary.add(output)
            yield batch

    def _judge_chunk(
        self,
        backend: Backend,
        judges: list[Judge],
        rows: list[dict[str, Any]],
        offset: int,
        row_errors: Mapping[int, str],
    ) -> dict[str, list[JudgeOutput]]:
        results: dict[str, list[JudgeOutput | None]] = {j.name: [None] * len(rows) for j in judges}
        requests: list[Request] = []
        slots: list[tuple[Judge, int, int]] = []  # judge, row index, number of requests
        for judge in judges:
            for index, row in enumerate(rows):
                error = row_errors.get(offset + index)
                if error is not None:
                    results[judge.name][index] = judge.failure("bad_input", error)
                    continue
                target_error = judge.target_error(row)
                if target_error is not None:
                    results[judge.name][index] = judge.target_failure(target_error)
                    continue
                try:
                    row_requests = judge.requests_for(row)
                except MissingValue as exc:
                    results[judge.name][index] = judge.failure(
                        "missing_input", f"row {self._row_id(row, offset + index)}: {missing_message(exc)}"
                    )
                    continue
                requests.extend(row_requests)
                slots.append((judge, index, len(row_requests)))
        completions = self._answer(backend, requests)
        position = 0
        for judge, index, count in slots:
            results[judge.name][index] = judge.combine(completions[position : position + count])
            position += count
        return {name: [o for o in outs if o is not None] for name, outs in results.items()}

    @classmethod
    def _answer(cls, backend: Backend, requests: list[Request]) -> list[Answer]:
        """Generation requests go to ``generate``, label requests to ``score_labels``, each kind in one
        call; the answers come back in request order."""
        generation = [i for i, r in enumerate(requests) if isinstance(r, GenerationRequest)]
        labels = [i for i, r in enumerate(requests) if isinstance(r, LabelRequest)]
        answers: list[Answer | None] = [None] * len(requests)
        if generation:
            completions = cls._generate(backend, [requests[i] for i in generation])  # type: ignore[misc]
            for i, completion in zip(generation, completions, strict=True):
                answers[i] = completion
        if labels:
            for i, scored in zip(labels, cls._score(backend, [requests[i] for i in labels]), strict=True):  # type: ignore[misc]
                answers[i] = scored
        return [a for a in answers if a is not None]

    @staticmethod
    def _score(backend: Backend, requests: list[LabelRequest]) -> list[LabelScores]:
        if not isinstance(backend, LabelScorer):
            message = (
                f"backend {type(backend).__name__} cannot score labels; LOGPROBS scoring needs engine VLLM"
            )
            return [LabelScores(None, "error", error=message) for _ in requests]
        try:
            scored = backend.score_labels(requests)
        except Exception as exc:
            logger.exception("backend %s failed to score %d label requests", backend.model_id, len(requests))
            return [LabelScores(None, "error", error=f"{type(exc).__name__}: {exc}") for _ in requests]
        if len(scored) != len(requests):
            message = f"backend returned {len(scored)} label scores for {len(requests)} requests"
            return [LabelScores(None, "error", error=message) for _ in requests]
        return scored

    @staticmethod
    def _generate(backend: Backend, requests: list[GenerationRequest]) -> list[Completion]:
        if not requests:
            return []
        try:
            completions = backend.generate(requests)
        except Exception as exc:  # the engine failed as a whole: every request of the call gets the error
            logger.exception("backend %s failed on a batch of %d requests", backend.model_id, len(requests))
            message = f"{type(exc).__name__}: {exc}"
            return [Completion("", "error", error=message) for _ in requests]
        if len(completions) != len(requests):
            message = f"backend returned {len(completions)} completions for {len(requests)} requests"
            return [Completion("", "error", error=message) for _ in requests]
        return completions

    def _row_id(self, row: Mapping[str, Any], index: int) -> str:
        column = self.id_column or ("row_id" if "row_id" in row else None)
        if column is not None and row.get(column) is not None:
            return str(row[column])
        return str(index)

    def _assemble(
        self,
        schema: pa.Schema,
        chunk: pa.Table,
        offset: int,
        outputs: Mapping[str, list[JudgeOutput]],
        models: Mapping[str, str],
    ) -> pa.RecordBatch:
        column = self.id_column or ("row_id" if "row_id" in chunk.column_names else None)
        values = chunk.column(column).to_pylist() if column is not None else [None] * chunk.num_rows
        ids = [str(offset + i) if v is None else str(v) for i, v in enumerate(values)]
        arrays: list[pa.Array] = [pa.array(ids, pa.string())]
        if self.carry_input:
            for name in chunk.column_names:
                if name != "row_id":
                    arrays.append(chunk.column(name).combine_chunks())
        for judge in self.judges:
            arrays += judge_columns(judge, outputs[judge.name], judge.provenance(models[judge.name]))
        if self.panel is not None:
            partial = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(list(schema)[: len(arrays)]))
            arrays += self.panel.columns(partial)
        if self.calibrations:
            names = schema.names
            for calibration in self.calibrations:
                source = arrays[names.index(calibration.column)].to_pylist()
                arrays.append(pa.array(calibration.apply(source), pa.float64()))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def run_file(self, input_path: str | Path, output_path: str | Path) -> RunSummary:
        """Read a dataset file, judge it, write the results (format by extension); return a summary."""
        data = read_input(input_path)
        self.check_columns(data)
        schema = self.output_schema(data)
        summary = RunSummary(output=str(output_path))
        load_before = self.load_seconds
        started = time.perf_counter()
        with OutputWriter(
            output_path, schema, metadata={"jurist": json.dumps(self.run_metadata(data))}
        ) as writer:
            for batch in self.iter_batches(data, summary):
                writer.write(batch)
        summary.seconds = time.perf_counter() - started
        summary.load_seconds = self.load_seconds - load_before
        return summary

    def run_metadata(self, data: InputData) -> dict[str, Any]:
        """Provenance written into the output file's schema metadata."""
        from jurist import __version__

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


def _as_input(data: InputData | pa.Table | Sequence[Mapping[str, Any]]) -> InputData:
    if isinstance(data, InputData):
        return data
    if isinstance(data, pa.Table):
        return InputData(data)
    return InputData.from_rows(list(data))
