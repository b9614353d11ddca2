"""Output columns, declared once per judge: a name suffix, an Arrow type, and how to read a row's value.

A judge ``j`` writes its own columns (:attr:`~jurist.judges.base.JudgeKind.value_columns`: typed fields,
scores, label probabilities, the raw answer; or a pairwise judge's winner and per-order verdicts), then
the columns every judge has (:data:`GENERIC_COLUMNS`): ``j.score``, ``j.status``, ``j.error``,
``j.prompt_tokens``, ``j.completion_tokens``, ``j.model``, ``j.prompt_hash``, ``j.schema_hash``.
:mod:`jurist.engine.assemble` turns them into Arrow arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from jurist.judges.outputs import JudgeOutput

ARROW_TYPES = {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}


@dataclass(frozen=True)
class Provenance:
    """What produced a judge's outputs: the model, and hashes of the prompt and the output schema."""

    model: str
    prompt_hash: str
    schema_hash: str


@dataclass(frozen=True)
class Column:
    """One output column of a judge: ``<judge>.<suffix>`` of Arrow type ``type``."""

    suffix: str
    type: pa.DataType
    value: Callable[[JudgeOutput, Provenance], Any]


def field_column(suffix: str, kind: str) -> Column:
    """A column read from ``field_values[suffix]`` (``kind``: bool, int64, float64 or string)."""
    return Column(suffix, ARROW_TYPES[kind], lambda o, _p: o.field_values.get(suffix))


def extra_column(suffix: str, kind: str = "float64") -> Column:
    """A column read from ``extras[suffix]``."""
    return Column(suffix, ARROW_TYPES[kind], lambda o, _p: o.extras.get(suffix))


RAW_COLUMN = Column("raw", pa.string(), lambda o, _p: o.raw)

GENERIC_COLUMNS: tuple[Column, ...] = (
    Column("score", pa.float64(), lambda o, _p: o.score),
    Column("status", pa.string(), lambda o, _p: o.status),
    Column("error", pa.string(), lambda o, _p: o.error),
    Column("prompt_tokens", pa.int64(), lambda o, _p: o.prompt_tokens),
    Column("completion_tokens", pa.int64(), lambda o, _p: o.completion_tokens),
    Column("model", pa.string(), lambda _o, p: p.model),
    Column("prompt_hash", pa.string(), lambda _o, p: p.prompt_hash),
    Column("schema_hash", pa.string(), lambda _o, p: p.schema_hash),
)
