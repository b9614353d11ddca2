"""Assembling results: one Arrow record batch per chunk, from the judges' declared columns.

Columns, in order: ``row_id``, the input columns (unless ``carry_input`` is off), each judge's columns
(``Judge.columns``), the panel's columns (:mod:`jurist.judges.panel`) and each
calibration's ``<judge>.calibrated``. This is the only module that builds output arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from jurist.errors import InputError
from jurist.judges.columns import Provenance
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.panel import Panel
from jurist.stats.calibration import Calibration


class Assembler:
    """Builds the output schema once, then one record batch per chunk."""

    def __init__(
        self,
        input_schema: pa.Schema,
        judges: Sequence[Judge],
        *,
        carry_input: bool = True,
        panel: Panel | None = None,
        calibrations: Sequence[Calibration] = (),
        source: str | None = None,
    ) -> None:
        self.judges = list(judges)
        self.carry_input = carry_input
        self.panel = panel
        self.calibrations = list(calibrations)
        fields = [pa.field("row_id", pa.string())]
        if carry_input:
            fields += [f for f in input_schema if f.name != "row_id"]
        for judge in self.judges:
            fields += [pa.field(f"{judge.name}.{c.suffix}", c.type) for c in judge.columns]
        if panel is not None:
            fields += panel.arrow_fields()
        names = [f.name for f in fields]
        for calibration in self.calibrations:
            if calibration.column not in names:
                raise InputError(
                    f"calibration for {calibration.column!r} matches no output column of this run",
                    source=source,
                )
            fields.append(pa.field(f"{calibration.judge}.calibrated", pa.float64()))
        names = [f.name for f in fields]
        clashes = sorted({n for n in names if names.count(n) > 1})
        if clashes:
            raise InputError(
                f"input column(s) {', '.join(clashes)} clash with judge output columns; rename them or "
                "pass carry_input=False (--no-carry)",
                source=source,
            )
        self.schema = pa.schema(fields)

    def batch(
        self,
        chunk: pa.Table,
        row_ids: Sequence[str],
        outputs: Mapping[str, Sequence[JudgeOutput]],
        provenance: Mapping[str, Provenance],
    ) -> pa.RecordBatch:
        """One chunk's record batch: its input rows, ids and every judge's outputs (in row order)."""
        arrays: list[pa.Array] = [pa.array(list(row_ids), pa.string())]
        if self.carry_input:
            arrays += [chunk.column(name).combine_chunks() for name in chunk.column_names if name != "row_id"]
        for judge in self.judges:
            rows = outputs[judge.name]
            source = provenance[judge.name]
            arrays += [pa.array([c.value(o, source) for o in rows], type=c.type) for c in judge.columns]
        return self._finish(arrays)

    def rebuild(
        self,
        previous: pa.Table,
        replacements: Mapping[str, Mapping[int, JudgeOutput]],
        provenance: Mapping[str, Provenance],
    ) -> pa.RecordBatch:
        """A batch of earlier results with some judges' outputs replaced (by row index in the batch); the
        panel's and the calibrations' columns are computed again."""
        judge_columns = [f"{j.name}.{c.suffix}" for j in self.judges for c in j.columns]
        arrays: list[pa.Array] = []
        for name in self.schema.names:
            if name in judge_columns:
                break
            arrays.append(previous.column(name).combine_chunks())
        for judge in self.judges:
            replaced = replacements.get(judge.name, {})
            for c in judge.columns:
                values = previous.column(f"{judge.name}.{c.suffix}").to_pylist()
                for index, output in replaced.items():
                    values[index] = c.value(output, provenance[judge.name])
                arrays.append(pa.array(values, type=c.type))
        return self._finish(arrays)

    def _finish(self, arrays: list[pa.Array]) -> pa.RecordBatch:
        """Add the panel's and the calibrations' columns to the judges' arrays."""
        if self.panel is not None:
            partial = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(list(self.schema)[: len(arrays)]))
            arrays += self.panel.columns(partial)
        names = self.schema.names
        for calibration in self.calibrations:
            values = arrays[names.index(calibration.column)].to_pylist()
            arrays.append(pa.array(calibration.apply(values), pa.float64()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
