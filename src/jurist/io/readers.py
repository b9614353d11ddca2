"""Reading a whole dataset into memory (label files, ``jurist render``, small inputs).

Inputs: JSONL (``.jsonl``, ``.ndjson``; also ``.gz``, ``.zst``, ``.bz2``), JSON (a list of objects,
``.json``), CSV (``.csv``, ``.tsv``), Parquet (``.parquet``, ``.pq``), Arrow IPC / Feather (``.arrow``,
``.feather``, ``.ipc``) and Hugging Face dataset folders. A file that cannot be read at all (missing, empty,
not UTF-8, not a list of records) raises :class:`~jurist.errors.InputError` naming the file and where it
broke. In JSONL, a line that is not valid UTF-8, not valid JSON or not an object is one bad row: it keeps
its place (all its columns null) and its reason is recorded in :attr:`InputData.row_errors`, so the rest of
the file is judged. Large inputs are streamed instead (:mod:`jurist.io.opening`).
"""

from __future__ import annotations

from pathlib import Path

from jurist.io.formats import INPUT_SUFFIXES
from jurist.io.opening import open_source
from jurist.io.records import rows_to_table
from jurist.io.sources import InputData

__all__ = ["INPUT_SUFFIXES", "InputData", "read_input", "rows_to_table"]


def read_input(path: str | Path, *, input_format: str | None = None) -> InputData:
    """Read a whole dataset file (format from its extension, unless given)."""
    source = open_source(str(path), input_format=input_format)
    whole = source.read_whole()
    return InputData(whole.table, source.source, dict(whole.errors), whole.records)
