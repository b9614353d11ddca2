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

Columns of one judge ``j`` (after ``row_id`` and the carried input columns): ``j.<field>`` (typed) for
every output field, ``j.<field>_score`` for every judgment field, ``j.score``, ``j.status``,
``j.error``, ``j.raw``, ``j.prompt_tokens``, ``j.completion_tokens``, ``j.model``, ``j.prompt_hash``,
``j.schema_hash``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

from jurist.schema import OutputSpec

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
STATUSES: tuple[str, ...] = (
    "ok",
    "parse_error",
    "truncated",
    "too_long",
    "missing_input",
    "bad_input",
    "target_error",
    "backend_error",
)

_ARROW_TYPES = {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}


@dataclass(frozen=True)
class JudgeOutput:
    """One judge's result for one row (Oumi's ``JudgeOutput`` fields, plus status and provenance).

    ``field_values``: typed values by field name (None for every field unless ``status`` is ``ok``).
    ``field_scores``: one entry per output field; None for explanations and unscored judgments.
    ``aggregate_score``: a rubric judge's aggregate (None for simple judges, as in Oumi).
    ``score``: the row's single score: the aggregate for a rubric judge, the judgment's score otherwise.
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

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def judge_fields(name: str, spec: OutputSpec) -> list[pa.Field]:
    """The Arrow fields of one judge's columns, in order."""
    fields: list[pa.Field] = []
    for f in spec.fields:
        fields.append(pa.field(f"{name}.{f.name}", _ARROW_TYPES[f.arrow_kind if f.is_judgment else "string"]))
        if f.is_judgment:
            fields.append(pa.field(f"{name}.{f.name}_score", pa.float64()))
    fields += [
        pa.field(f"{name}.score", pa.float64()),
        pa.field(f"{name}.status", pa.string()),
        pa.field(f"{name}.error", pa.string()),
        pa.field(f"{name}.raw", pa.string()),
        pa.field(f"{name}.prompt_tokens", pa.int64()),
        pa.field(f"{name}.completion_tokens", pa.int64()),
        pa.field(f"{name}.model", pa.string()),
        pa.field(f"{name}.prompt_hash", pa.string()),
        pa.field(f"{name}.schema_hash", pa.string()),
    ]
    return fields


def judge_columns(
    name: str,
    spec: OutputSpec,
    outputs: Sequence[JudgeOutput],
    provenance: dict[str, str],
) -> list[pa.Array]:
    """Arrays matching :func:`judge_fields` for a chunk of outputs."""
    arrays: list[pa.Array] = []
    types = judge_fields(name, spec)
    position = 0

    def take(values: list[Any]) -> None:
        nonlocal position
        arrays.append(pa.array(values, type=types[position].type))
        position += 1

    for f in spec.fields:
        take([o.field_values.get(f.name) for o in outputs])
        if f.is_judgment:
            take([o.field_scores.get(f.name) for o in outputs])
    take([o.score for o in outputs])
    take([o.status for o in outputs])
    take([o.error for o in outputs])
    take([o.raw for o in outputs])
    take([o.prompt_tokens for o in outputs])
    take([o.completion_tokens for o in outputs])
    for key in ("model", "prompt_hash", "schema_hash"):
        take([provenance[key]] * len(outputs))
    return arrays
