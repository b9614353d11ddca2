"""Per-row judge results, and their Arrow columns.

Every (row, judge) pair yields one :class:`JudgeOutput`, whatever happened: ``status`` says what.

========================  ===========================================================================
status                    meaning
========================  ===========================================================================
``ok``                    parsed; every field has a value
``parse_error``           the answer could not be parsed (``error`` says why; all fields None)
``truncated``             generation hit max_tokens before the answer ended (all fields None)
``too_long``              the prompt exceeds the model's context; nothing was sent
``missing_input``         the row lacks a value the prompt needs (``error`` names the field)
``bad_input``             the input row itself could not be read (e.g. a malformed JSONL line)
``target_error``          the row's response carries an error; it was not judged
``backend_error``         the engine failed on this request
========================  ===========================================================================

Columns of one judge ``j`` (after ``row_id`` and the carried input columns): the judge's own typed
columns (:meth:`~jurist.judge.Judge.value_columns`: for a pointwise judge ``j.<field>`` for every output
field, ``j.<field>_score`` for every judgment field and ``j.raw``; a pairwise judge writes the winner and
each order's verdict), then ``j.score``, ``j.status``, ``j.error``, ``j.prompt_tokens``,
``j.completion_tokens``, ``j.model``, ``j.prompt_hash``, ``j.schema_hash``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

import pyarrow as pa

Status = Literal[
    "ok",
    "parse_error",
    "truncated",
    "too_long",
    "missing_input",
    "bad_input",
    "target_error",
    "backend_error",
]
STATUSES: tuple[str, ...] = get_args(Status)

_ARROW_TYPES = {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}


@dataclass(frozen=True)
class JudgeOutput:
    """One judge's result for one row (Oumi's ``JudgeOutput`` fields, plus status and provenance).

    ``field_values``: typed values by field name (None for every field unless ``status`` is ``ok``).
    ``field_scores``: one entry per output field; None for explanations and unscored judgments.
    ``aggregate_score``: a rubric judge's aggregate (None for simple judges, as in Oumi).
    ``score``: the row's single score: the aggregate for a rubric judge, the judgment's score otherwise
    (in LOGPROBS scoring, the expected score). ``extras``: further typed columns (label probabilities,
    confidence, entropy, expected score) by column suffix.
    """

    status: Status
    field_values: dict[str, Any] = field(default_factory=dict)
    field_scores: dict[str, float | None] = field(default_factory=dict)
    aggregate_score: float | None = None
    score: float | None = None
    error: str | None = None
    raw: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ColumnSource(Protocol):
    """What :func:`judge_fields` and :func:`judge_columns` need from a judge."""

    name: str

    def value_columns(self) -> list[tuple[str, str]]: ...

    def row_values(self, output: JudgeOutput) -> dict[str, Any]: ...


_GENERIC = [
    ("score", pa.float64()),
    ("status", pa.string()),
    ("error", pa.string()),
    ("prompt_tokens", pa.int64()),
    ("completion_tokens", pa.int64()),
    ("model", pa.string()),
    ("prompt_hash", pa.string()),
    ("schema_hash", pa.string()),
]


def judge_fields(judge: ColumnSource) -> list[pa.Field]:
    """The Arrow fields of one judge's columns, in order: its own value columns, then the generic ones."""
    name = judge.name
    fields = [pa.field(f"{name}.{suffix}", _ARROW_TYPES[kind]) for suffix, kind in judge.value_columns()]
    return fields + [pa.field(f"{name}.{suffix}", kind) for suffix, kind in _GENERIC]


def judge_columns(
    judge: ColumnSource, outputs: Sequence[JudgeOutput], provenance: dict[str, str]
) -> list[pa.Array]:
    """Arrays matching :func:`judge_fields` for a chunk of outputs."""
    arrays: list[pa.Array] = []
    rows = [judge.row_values(o) for o in outputs]
    for suffix, kind in judge.value_columns():
        arrays.append(pa.array([r[suffix] for r in rows], type=_ARROW_TYPES[kind]))
    arrays.append(pa.array([o.score for o in outputs], pa.float64()))
    arrays.append(pa.array([o.status for o in outputs], pa.string()))
    arrays.append(pa.array([o.error for o in outputs], pa.string()))
    arrays.append(pa.array([o.prompt_tokens for o in outputs], pa.int64()))
    arrays.append(pa.array([o.completion_tokens for o in outputs], pa.int64()))
    for key in ("model", "prompt_hash", "schema_hash"):
        arrays.append(pa.array([provenance[key]] * len(outputs), pa.string()))
    return arrays
