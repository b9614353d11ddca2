"""A cascade's output columns and the record batch of a chunk (:class:`CascadeAssembler`).

Besides ``row_id``, the input columns and every stage judge's own columns (null on the rows the stage did
not judge), the cascade writes ``<cascade>.<suffix>`` columns: the final verdict (``winner``, with
``position_consistent`` and ``p_a``, for pairwise stages; ``judgment`` otherwise), ``score``, ``status``
(the deciding stage's status, or ``abstained``), ``error``, ``stage`` (1-based; null when no stage decided),
``confidence`` and ``model`` of the deciding stage, and for each stage ``k`` its ``confidence_k`` and
``verdict_k`` (null where the row did not reach it). The run metadata lists the cascade as a judge of the
stages' kind with these columns, so :class:`~jurist.io.results.ResultTable` reads it like any judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jurist.cascade.confidence import JUDGMENT
from jurist.config.cascade import CascadePlan
from jurist.engine.assemble import Assembler
from jurist.errors import InputError
from jurist.judges.columns import ARROW_TYPES, Provenance
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput

ABSTAINED = "abstained"


@dataclass(frozen=True)
class Decision:
    """How the cascade settled one row: ``stage`` (0-based; None when no stage decided), the deciding
    stage's ``output``, the row's ``status`` and ``error``, and each stage's confidence and verdict (None
    where the row did not reach the stage)."""

    stage: int | None
    output: JudgeOutput | None
    status: str
    error: str | None
    confidences: tuple[float | None, ...] = field(default=())
    verdicts: tuple[Any, ...] = field(default=())
    model: str | None = None


@dataclass(frozen=True)
class CascadeColumn:
    suffix: str
    type: pa.DataType
    value: Callable[[Decision], Any]


def pairwise(judges: Sequence[Judge]) -> bool:
    return judges[0].kind.kind_name == "pairwise"


def cascade_columns(judges: Sequence[Judge]) -> tuple[CascadeColumn, ...]:
    """The cascade's columns for stages ``judges`` (see the module)."""

    def field_value(name: str) -> Callable[[Decision], Any]:
        return lambda d: d.output.field_values.get(name) if d.output is not None else None

    if pairwise(judges):
        verdict_type: pa.DataType = pa.string()
        own = [
            CascadeColumn("winner", verdict_type, field_value("winner")),
            CascadeColumn("position_consistent", pa.bool_(), field_value("position_consistent")),
            CascadeColumn("p_a", pa.float64(), lambda d: d.output.extras.get("p_a") if d.output else None),
        ]
    else:
        judgment = next(f for f in judges[0].spec.judgment_fields if f.name == JUDGMENT)
        verdict_type = ARROW_TYPES[judgment.arrow_kind]
        own = [CascadeColumn(JUDGMENT, verdict_type, field_value(JUDGMENT))]
    common = [
        CascadeColumn("score", pa.float64(), lambda d: d.output.score if d.output is not None else None),
        CascadeColumn("status", pa.string(), lambda d: d.status),
        CascadeColumn("error", pa.string(), lambda d: d.error),
        CascadeColumn("stage", pa.int64(), lambda d: None if d.stage is None else d.stage + 1),
        CascadeColumn(
            "confidence", pa.float64(), lambda d: None if d.stage is None else d.confidences[d.stage]
        ),
        CascadeColumn("model", pa.string(), lambda d: d.model),
    ]
    per_stage: list[CascadeColumn] = []
    for number in range(len(judges)):
        per_stage += [
            CascadeColumn(f"confidence_{number + 1}", pa.float64(), _stage_value("confidences", number)),
            CascadeColumn(f"verdict_{number + 1}", verdict_type, _stage_value("verdicts", number)),
        ]
    return (*own, *common, *per_stage)


def _stage_value(attribute: str, stage: int) -> Callable[[Decision], Any]:
    """A decision's confidence or verdict at one stage."""
    return lambda d: getattr(d, attribute)[stage]


class CascadeAssembler:
    """The output schema of a cascade run, and one record batch per chunk (:meth:`cascade_batch`): the
    stages' columns as a plain run's :class:`~jurist.engine.assemble.Assembler` builds them, then the
    cascade's own."""

    def __init__(
        self,
        input_schema: pa.Schema,
        judges: Sequence[Judge],
        plan: CascadePlan,
        *,
        carry_input: bool = True,
        source: str | None = None,
    ) -> None:
        self.inner = Assembler(input_schema, judges, carry_input=carry_input, source=source)
        self.judges = self.inner.judges
        self.schema = self.inner.schema
        self.plan = plan
        self.cascade_columns = cascade_columns(judges)
        fields = [pa.field(f"{plan.name}.{c.suffix}", c.type) for c in self.cascade_columns]
        clashes = sorted(set(self.schema.names) & {f.name for f in fields})
        if clashes:
            raise InputError(
                f"column(s) {', '.join(clashes)} clash with the cascade's columns; rename the stage judge or "
                "the input column",
                source=source,
            )
        self.schema = pa.schema([*self.schema, *fields])

    @property
    def column_names(self) -> list[str]:
        """The cascade's own columns, by full name."""
        return [f"{self.plan.name}.{c.suffix}" for c in self.cascade_columns]

    def cascade_batch(
        self,
        chunk: pa.Table,
        row_ids: Sequence[str],
        outputs: Mapping[str, Sequence[JudgeOutput | None]],
        provenance: Mapping[str, Provenance],
        decisions: Sequence[Decision],
    ) -> pa.RecordBatch:
        """One chunk's batch: the stages' outputs (None where a row did not reach the stage) and the
        cascade's decisions, in row order."""
        filled: dict[str, list[JudgeOutput]] = {}
        reached: dict[str, pa.Array] = {}
        for judge in self.judges:
            rows = outputs[judge.name]
            stand_in = judge.failure("missing_input", "not reached")
            filled[judge.name] = [o if o is not None else stand_in for o in rows]
            reached[judge.name] = pa.array([o is not None for o in rows], pa.bool_())
        base = self.inner.batch(chunk, row_ids, filled, provenance)
        owners = {f"{j.name}.{c.suffix}": j.name for j in self.judges for c in j.columns}
        arrays: list[pa.Array] = []
        for name in base.schema.names:
            column = base.column(name)
            owner = owners.get(name)
            if owner is not None:
                column = pc.if_else(reached[owner], column, pa.nulls(len(column), column.type))
            arrays.append(column)
        arrays += [pa.array([c.value(d) for d in decisions], type=c.type) for c in self.cascade_columns]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
