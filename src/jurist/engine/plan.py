"""Planning: which judges share a backend, and what each row of a chunk needs before any model runs.

For every (judge, row) of a chunk, judge-major (so rows that share a judge's prefix are adjacent), the
plan holds either the row's output already (a bad input row, an errored target, a missing value) or the
row's first :class:`~jurist.judges.base.Step`: the requests it needs and what to do with their answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurist.config.inference import InferenceConfig
from jurist.config.templates import MissingValue
from jurist.io.sources import Chunk
from jurist.io.tabular import id_column_of, row_ids
from jurist.judges.base import Step
from jurist.judges.judge import Judge, missing_message
from jurist.judges.outputs import JudgeOutput
from jurist.records import ConstraintKind


def backend_key(config: InferenceConfig) -> str:
    """Judges whose inference configs agree on everything but sampling share one backend (one engine), unless
    one reads hidden states after a layer (its engine may hold the model cut there) or pooled states (its
    engine gives every token's)."""
    key = config.model_dump(mode="json", exclude={"generation"})
    key["hidden_states_layer"] = config.use.hidden_states_layer
    key["token_states"] = config.use.token_states
    return json.dumps(key, sort_keys=True)


def group_by_backend(judges: Sequence[Judge]) -> list[list[Judge]]:
    """Judges grouped by the backend they run on, in order of first appearance."""
    groups: dict[str, list[Judge]] = {}
    for judge in judges:
        groups.setdefault(backend_key(judge.engine_config), []).append(judge)
    return list(groups.values())


@dataclass(frozen=True)
class RowTask:
    """A (judge, row) waiting for answers: ``index`` is the row's position in its chunk."""

    judge: Judge
    index: int
    step: Step


@dataclass
class ChunkPlan:
    """Per judge, one slot per row of the chunk (filled when the row's output is known), and the tasks of
    the rows that still need the model."""

    outputs: dict[str, list[JudgeOutput | None]]
    tasks: list[RowTask] = field(default_factory=list)

    def results(self) -> dict[str, list[JudgeOutput]]:
        """The outputs by judge, once every slot is filled."""
        missing = [name for name, slots in self.outputs.items() if any(o is None for o in slots)]
        if missing:
            raise RuntimeError(f"rows left without an output for judge(s) {', '.join(missing)}")
        return {name: [o for o in slots if o is not None] for name, slots in self.outputs.items()}


def plan_chunk(
    judges: Sequence[Judge],
    rows: Sequence[Mapping[str, Any]],
    row_ids: Sequence[str],
    row_errors: Mapping[int, str],
    kinds: Sequence[ConstraintKind],
) -> ChunkPlan:
    """What every (judge, row) of a chunk needs. ``row_errors`` holds the chunk's unreadable rows by their
    position in the chunk; ``kinds`` the constraint kinds the judges' backend enforces."""
    plan = ChunkPlan({j.name: [None] * len(rows) for j in judges})
    for judge in judges:
        slots = plan.outputs[judge.name]
        for index, row in enumerate(rows):
            error = row_errors.get(index)
            if error is not None:
                slots[index] = judge.failure("bad_input", error)
                continue
            target_error = judge.target_error(row)
            if target_error is not None:
                slots[index] = judge.failure("target_error", target_error)
                continue
            try:
                step = judge.start(row, kinds)
            except MissingValue as exc:
                slots[index] = judge.failure("missing_input", f"row {row_ids[index]}: {missing_message(exc)}")
                continue
            plan.tasks.append(RowTask(judge, index, step))
    return plan


def chunk_row_ids(chunk: Chunk, id_column: str | None) -> list[str]:
    """The ids of a chunk's rows: the id column's text (``id_column``, else ``row_id``, else ``id``), or the
    row's position in the input (in its shard, after the shard's name) when the column has no value."""
    column = id_column_of(chunk.table.column_names, id_column)
    values = None if column is None else chunk.table.column(column).to_pylist()
    return row_ids(values, chunk.numbers, chunk.shard)
