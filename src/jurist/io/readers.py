"""Reading datasets.

Inputs: JSONL (``.jsonl``, ``.ndjson``), JSON (a list of objects, ``.json``), CSV (``.csv``, ``.tsv``),
Parquet (``.parquet``, ``.pq``) and Arrow IPC / Feather (``.arrow``, ``.feather``, ``.ipc``). A file that
cannot be read at all (missing, empty, not UTF-8, not a list of records) raises
:class:`~jurist.errors.InputError` naming the file and where it broke. In JSONL, a line that is not valid
UTF-8, not valid JSON or not an object is one bad row: it keeps its place (all its columns null) and its
reason is recorded in :attr:`InputData.row_errors`, so the rest of the file is judged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from jurist.errors import InputError

InputFormat = Literal["jsonl", "json", "csv", "parquet", "arrow"]

INPUT_SUFFIXES: dict[str, InputFormat] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}


@dataclass
class InputData:
    """A dataset: its rows as an Arrow table, plus per-row read errors by row index."""

    table: pa.Table
    source: str = "<memory>"
    row_errors: dict[int, str] = field(default_factory=dict)

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names)

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], source: str = "<memory>") -> InputData:
        """Rows given as mappings (a non-mapping row becomes a bad row)."""
        good: list[Mapping[str, Any] | None] = []
        errors: dict[int, str] = {}
        for index, row in enumerate(rows):
            if isinstance(row, Mapping):
                good.append(row)
            else:
                good.append(None)
                errors[index] = f"row {index} is a {type(row).__name__}, not an object"
        return cls(rows_to_table(good), source, errors)


def input_format(path: Path) -> InputFormat:
    suffix = path.suffix.lower()
    if suffix not in INPUT_SUFFIXES:
        known = ", ".join(sorted(INPUT_SUFFIXES))
        raise InputError(
            f"unknown input format {suffix or '(no extension)'!r}; known: {known}", source=str(path)
        )
    return INPUT_SUFFIXES[suffix]


def read_input(path: str | Path) -> InputData:
    """Read a dataset file (format from its extension)."""
    path = Path(path)
    source = str(path)
    fmt = input_format(path)
    if not path.exists():
        raise InputError("no such file", source=source)
    if path.is_dir():
        raise InputError("is a folder, not a file", source=source)
    if path.stat().st_size == 0:
        raise InputError("is empty (0 bytes)", source=source)
    if fmt == "jsonl":
        data = read_jsonl(path)
    elif fmt == "json":
        data = _read_json(path)
    elif fmt == "csv":
        data = _read_csv(path)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            data = InputData(pq.read_table(path), source)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"is not a readable Parquet file: {exc}", source=source) from exc
    else:
        data = _read_ipc(path)
    if data.num_rows == 0:
        raise InputError("has no rows", source=source)
    return data


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"is not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line})",
            source=source,
        ) from exc


def read_jsonl(path: Path) -> InputData:
    source = str(path)
    rows: list[Mapping[str, Any] | None] = []
    errors: dict[int, str] = {}
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, 1):
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            index = len(rows)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                rows.append(None)
                byte = raw[exc.start]
                errors[index] = (
                    f"{source} line {line_no}: not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})"
                )
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                rows.append(None)
                errors[index] = f"{source} line {line_no}: malformed JSON ({exc.msg} at column {exc.colno})"
                continue
            if not isinstance(value, dict):
                rows.append(None)
                errors[index] = f"{source} line {line_no}: a {type(value).__name__}, not a JSON object"
                continue
            rows.append(value)
    if not rows:
        raise InputError("is empty (no records)", source=source)
    return InputData(rows_to_table(rows), source, errors)


def _read_json(path: Path) -> InputData:
    source = str(path)
    text = _decode(path.read_bytes(), source)
    if not text.strip():
        raise InputError("is empty (only whitespace)", source=source)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", source=source
        ) from exc
    if isinstance(value, dict):
        lists = [k for k, v in value.items() if isinstance(v, list)]
        if len(lists) == 1:
            value = value[lists[0]]
        else:
            raise InputError("must hold a list of records (a JSON array of objects)", source=source)
    if not isinstance(value, list):
        raise InputError(f"must hold a list of records, not a {type(value).__name__}", source=source)
    data = InputData.from_rows(value, source)
    data.row_errors = {
        i: f"{source} record {i}: {msg.split(': ', 1)[-1]}" for i, msg in data.row_errors.items()
    }
    return data


def _read_csv(path: Path) -> InputData:
    import pyarrow.csv as pacsv

    source = str(path)
    raw = path.read_bytes()
    _decode(raw, source)
    if not raw.strip():
        raise InputError("is empty (only whitespace)", source=source)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        table = pacsv.read_csv(
            path, parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"is not readable CSV: {exc}", source=source) from exc
    return InputData(table, source)


def _read_ipc(path: Path) -> InputData:
    import pyarrow.feather as feather

    try:
        return InputData(feather.read_table(path), str(path))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"is not a readable Arrow/Feather file: {exc}", source=str(path)) from exc


def rows_to_table(rows: Sequence[Mapping[str, Any] | None]) -> pa.Table:
    """Rows (None = a bad row, all columns null) -> a table; a column of mixed types becomes JSON text."""
    names: dict[str, None] = {}
    for row in rows:
        if row is not None:
            for key in row:
                names.setdefault(str(key), None)
    columns: dict[str, pa.Array] = {}
    for name in names:
        values = [None if row is None else row.get(name) for row in rows]
        columns[name] = _column(values)
    if not columns:
        return pa.table({"__empty__": pa.nulls(len(rows))}).drop(["__empty__"])
    return pa.table(columns)


def _column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array(
            [
                None
                if v is None
                else v
                if isinstance(v, str)
                else json.dumps(v, ensure_ascii=False, default=str)
                for v in values
            ],
            type=pa.string(),
        )
