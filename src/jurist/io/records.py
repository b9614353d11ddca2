"""JSON records -> Arrow: reading JSONL lines one by one, and giving a stream of records one schema.

* :func:`parse_line` reads one JSONL line; a line that is not UTF-8, not JSON or not an object is a bad
  row with a reason naming the line and column, never an exception.
* :func:`rows_to_table` types a batch of records (a column of mixed types becomes JSON text).
* :class:`RecordTyper` fixes a stream's schema from its first records (a column with no value there is
  read as text) and fits every later batch to it: a column the first records lacked is left out (logged
  once), and a value that does not fit its column's type makes that row a bad row naming the column.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

logger = logging.getLogger("jurist")

BLOCK_BYTES = 1 << 20


def split_lines(read: Any) -> Iterator[bytes]:
    """The lines of a binary stream (``read(n) -> bytes``), read in blocks; a final line without a newline
    counts too."""
    rest = b""
    while True:
        block = read(BLOCK_BYTES)
        if not block:
            break
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def parse_line(raw: bytes, where: str) -> tuple[dict[str, Any] | None, str | None]:
    """One JSONL line -> (record, None), or (None, reason) for a bad line. ``where`` names the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"{where}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"{where}: malformed JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(value, dict):
        return None, f"{where}: a {type(value).__name__}, not a JSON object"
    return value, None


def rows_to_table(rows: Sequence[Mapping[str, Any] | None]) -> pa.Table:
    """Rows (None = a bad row, all columns null) -> a table; a column of mixed types becomes JSON text."""
    names: dict[str, None] = {}
    for row in rows:
        if row is not None:
            for key in row:
                names.setdefault(str(key), None)
    columns: dict[str, pa.Array] = {}
    for name in names:
        columns[name] = _column([None if row is None else row.get(name) for row in rows])
    if not columns:
        return pa.table({"__empty__": pa.nulls(len(rows))}).drop(["__empty__"])
    return pa.table(columns)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([_text(v) for v in values], type=pa.string())


class RecordTyper:
    """Gives every batch of a record stream the schema of its first records. ``source`` names the stream
    in messages; ``schema``: one already fixed (another process's part of the same stream)."""

    def __init__(self, source: str, schema: pa.Schema | None = None) -> None:
        self.source = source
        self.schema: pa.Schema | None = schema
        self._dropped: set[str] = set()

    def fix(self, rows: Sequence[Mapping[str, Any] | None]) -> pa.Schema:
        """Fix the schema from the first records (columns without a value become text)."""
        table = rows_to_table(rows)
        fields = [pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]
        self.schema = pa.schema(fields)
        return self.schema

    def table(
        self, rows: Sequence[Mapping[str, Any] | None], where: Sequence[str], errors: dict[int, str]
    ) -> pa.Table:
        """A batch as a table of the fixed schema. ``where`` names each row (its line); a row with a value
        that does not fit is recorded in ``errors`` (by its index in the batch) and its columns are null."""
        assert self.schema is not None
        known = set(self.schema.names) | self._dropped
        for index, row in enumerate(rows):
            for key in row or ():
                if key not in known:
                    known.add(key)
                    self._dropped.add(key)
                    logger.warning(
                        "%s: column %r first appears at %s, after the columns were fixed from the first "
                        "rows; it is not carried to the output",
                        self.source,
                        key,
                        where[index],
                    )
        bad: set[int] = set(errors)
        for f in self.schema:
            values = [None if row is None or i in bad else row.get(f.name) for i, row in enumerate(rows)]
            if pa.types.is_string(f.type):
                continue
            try:
                pa.array(values, type=f.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                for i, value in enumerate(values):
                    if value is not None and not _fits(value, f.type):
                        bad.add(i)
                        errors[i] = (
                            f"{where[i]}: column {f.name!r} holds {value!r}, which is not {f.type} (the type "
                            "its first rows gave it)"
                        )
        arrays = []
        for f in self.schema:
            values = [None if row is None or i in bad else row.get(f.name) for i, row in enumerate(rows)]
            if pa.types.is_string(f.type):
                values = [_text(v) for v in values]
            arrays.append(pa.array(values, type=f.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _fits(value: Any, kind: pa.DataType) -> bool:
    try:
        pa.array([value], type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return False
    return True
