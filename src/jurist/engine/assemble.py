"""Assembling results: one Arrow record batch per chunk, from the judges' declared columns.

Columns, in order: ``row_id``, the input columns (unless ``carry_input`` is off), each judge's columns
(``Judge.columns``), the panel's columns (:mod:`jurist.judges.panel`) and each
calibration's ``<judge>.calibrated``. This is the only module that builds output arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from jurist.analysis.calibration import Calibration
from jurist.errors import InputError
from jurist.judges.columns import Provenance
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.panel import Panel


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
        if self.panel is not None:
            partial = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(list(self.schema)[: len(arrays)]))
            arrays += self.panel.columns(partial)
        names = self.schema.names
        for calibration in self.calibrations:
            values = arrays[names.index(calibration.column)].to_pylist()
            arrays.append(pa.array(calibration.apply(values), pa.float64()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
