"""Opening any dataset as a :class:`~jurist.io.sources.RowSource`.

:func:`open_source` takes a path (JSONL, also ``.gz`` / ``.zst`` / ``.bz2``; CSV / TSV, also compressed;
Parquet; Arrow IPC / Feather; JSON arrays; a Hugging Face ``datasets`` folder saved with ``save_to_disk``;
``-`` for JSONL on stdin) or a Python object: an Arrow table or ``RecordBatchReader``, anything with
``__arrow_c_stream__`` (polars, pandas 2.2 and later), a pandas DataFrame, a ``datasets.Dataset`` or
``IterableDataset``, :class:`~jurist.io.sources.InputData`, or rows as mappings. Files are read in batches,
never whole, except JSON arrays (use JSONL for large data).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.formats import source_format
from jurist.io.location import Place
from jurist.io.sources import (
    InputData,
    IpcSource,
    IterableSource,
    JsonlSource,
    ParquetSource,
    ReaderSource,
    RowSource,
    TableSource,
)
from jurist.io.tabular import CsvSource, json_array_source

STDIN = "-"


def open_source(data: Any, *, input_format: str | None = None, id_columns: Sequence[str] = ()) -> RowSource:
    """Any dataset as a :class:`~jurist.io.sources.RowSource` (see the module's docstring for what is
    accepted). ``input_format`` overrides a file's extension; ``id_columns`` stay text in CSV files."""
    if isinstance(data, RowSource):
        return data
    if isinstance(data, InputData):
        return TableSource(data.table, data.source, data.row_errors, data.records)
    if isinstance(data, str | Path):
        return _open_path(str(data), input_format, id_columns)
    if isinstance(data, pa.Table):
        return TableSource(data)
    if isinstance(data, pa.RecordBatchReader):
        return ReaderSource(data)
    if hasattr(data, "with_format") and hasattr(data, "features"):  # datasets.Dataset / IterableDataset
        return _hf_dataset(data, "<datasets>")
    if hasattr(data, "__arrow_c_stream__"):  # polars, pandas >= 2.2, other Arrow producers
        return ReaderSource(pa.RecordBatchReader.from_stream(data))
    if hasattr(data, "to_arrow"):
        return TableSource(data.to_arrow())
    if type(data).__name__ == "DataFrame" and hasattr(data, "columns"):  # pandas without the stream protocol
        return TableSource(pa.Table.from_pandas(data, preserve_index=False))
    if isinstance(data, Sequence) and not isinstance(data, bytes | str):  # rows in memory: typed all at once
        rows = InputData.from_rows(data)
        return TableSource(rows.table, rows.source, rows.row_errors, rows.records)
    if isinstance(data, Iterable) and not isinstance(data, bytes | Mapping):
        return IterableSource(data)
    raise InputError(f"cannot read rows from a {type(data).__name__}")


def _open_path(text: str, input_format: str | None, id_columns: Sequence[str]) -> RowSource:
    if text == STDIN:
        if input_format not in (None, "jsonl"):
            raise InputError(f"stdin is read as JSONL, not {input_format}", source="<stdin>")
        return JsonlSource(None)
    path = Path(text)
    if not path.exists():
        raise InputError("no such file", source=text)
    if path.is_dir():
        if saved_with_datasets(path):
            return _hf_folder(path)
        raise InputError(
            "is a folder, not a file (nor a Hugging Face dataset saved with save_to_disk)", source=text
        )
    fmt, compression = source_format(path, input_format)
    if path.stat().st_size == 0:
        raise InputError("is empty (0 bytes)", source=text)
    source = open_file(path, fmt, compression, id_columns)
    if source.total == 0:
        raise InputError("has no rows", source=text)
    return source


def open_file(
    path: Path | Place,
    fmt: str,
    compression: str | None,
    id_columns: Sequence[str] = (),
    schema: pa.Schema | None = None,
) -> RowSource:
    """A file of format ``fmt`` (compressed with ``compression``), local or at a URL, as a source; a JSONL
    file with the ``schema`` of the dataset it is a shard of, when given."""
    if fmt == "jsonl":
        return JsonlSource(path, compression=compression, schema=schema)
    if fmt == "csv":
        return CsvSource(path, compression, id_columns)
    if compression is not None:
        raise InputError(f"{fmt} files cannot be read compressed; decompress it first", source=str(path))
    if fmt == "json":
        return json_array_source(path)
    return ParquetSource(path) if fmt == "parquet" else IpcSource(path)


def saved_with_datasets(path: Path) -> bool:
    """Whether a folder is a Hugging Face dataset saved with ``save_to_disk`` (read as one table)."""
    return any((path / name).is_file() for name in ("dataset_info.json", "state.json", "dataset_dict.json"))


def _hf_folder(path: Path) -> RowSource:
    try:
        import datasets
    except ImportError as exc:
        raise InputError(
            "is a Hugging Face dataset folder; reading it needs: pip install 'jurist[hf]'", source=str(path)
        ) from exc
    loaded = datasets.load_from_disk(str(path))
    if isinstance(loaded, datasets.DatasetDict):
        splits = ", ".join(loaded)
        raise InputError(
            f"holds several splits ({splits}); give the split's folder, e.g. {path / next(iter(loaded))}",
            source=str(path),
        )
    return _hf_dataset(loaded, str(path))


def _hf_dataset(dataset: Any, source: str) -> RowSource:
    """A ``datasets`` Dataset (memory-mapped Arrow) or IterableDataset (its batches as Arrow)."""
    table = getattr(getattr(dataset, "data", None), "table", None)
    if table is not None and getattr(dataset, "_indices", None) is None:
        return TableSource(table, source)
    batches = (t for t in dataset.with_format("arrow").iter(batch_size=8192))
    first = next(batches, None)
    if first is None:
        raise InputError("has no rows", source=source)
    schema = first.schema
    return ReaderSource(
        pa.RecordBatchReader.from_batches(
            schema, (b for t in itertools.chain([first], batches) for b in t.to_batches())
        ),
        source,
    )
