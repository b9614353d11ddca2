"""File formats by name: ``data.jsonl.gz`` is JSONL compressed with gzip, ``out.parquet`` is Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from jurist.errors import InputError

InputFormat = Literal["jsonl", "json", "csv", "parquet", "arrow"]
OutputFormat = Literal["parquet", "arrow", "jsonl"]

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
OUTPUT_SUFFIXES: dict[str, OutputFormat] = {
    suffix: fmt  # type: ignore[misc]
    for suffix, fmt in INPUT_SUFFIXES.items()
    if fmt in ("parquet", "arrow", "jsonl")
}
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".bz2": "bz2"}


def source_format(path: Any, given: str | None = None) -> tuple[InputFormat, str | None]:
    """An input file's format (``given`` wins over the extension) and its compression (by extension);
    ``path``: anything with ``suffixes`` (a ``Path``, a :class:`~jurist.io.location.Place`)."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    if compression is not None:
        suffixes = suffixes[:-1]
    if given is not None:
        if given not in INPUT_SUFFIXES.values():
            known = ", ".join(sorted(set(INPUT_SUFFIXES.values())))
            raise InputError(f"unknown input format {given!r}; known: {known}", source=str(path))
        return given, compression  # type: ignore[return-value]
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in INPUT_SUFFIXES:
        known = ", ".join(sorted(INPUT_SUFFIXES)) + " (JSONL and CSV also as .gz, .zst, .bz2)"
        raise InputError(
            f"unknown input format {suffix or '(no extension)'!r}; known: {known}", source=str(path)
        )
    return INPUT_SUFFIXES[suffix], compression


def output_format(path: Path) -> OutputFormat:
    suffix = path.suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        known = ", ".join(sorted(OUTPUT_SUFFIXES))
        raise InputError(
            f"unknown output format {suffix or '(no extension)'!r}; known: {known}", source=str(path)
        )
    return OUTPUT_SUFFIXES[suffix]


def open_binary(path: Any, compression: str | None, source: str) -> Any:
    """A file (a local ``Path``, or a :class:`~jurist.io.location.Place` at a URL) opened for binary reading
    (``read(n)``), decompressed on the fly."""
    try:
        if not isinstance(path, Path):
            return path.open_input_stream(compression)
        if compression is None:
            return path.open("rb")
        return pa.input_stream(str(path), compression=compression)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"cannot read: {exc}", source=source) from exc
