"""CSV / TSV files, streamed, and JSON arrays (LLMBar's files), read whole.

CSV columns get the type every one of their values fits (integer, then float, then boolean, else text),
found in a first pass over the file, so that a value far down the file cannot break the stream; the id
columns (``row_id``, ``id`` and the one given) stay text, so ``007`` stays ``"007"``. The file must be UTF-8:
the first pass also names the offset and line of the first byte that is not.
"""

from __future__ import annotations

import codecs
import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jurist.errors import InputError
from jurist.io.formats import open_binary
from jurist.io.location import Place
from jurist.io.sources import Batch, FileSource, InputData, Record, RowSource, TableSource

CANDIDATES = (pa.int64(), pa.float64(), pa.bool_())
ID_COLUMNS = ("row_id", "id")
_BLOCK = 1 << 22


def id_column_of(columns: Sequence[str], id_column: str | None = None) -> str | None:
    """The column that holds rows' ids: ``id_column``, else ``row_id``, else ``id``; None: none does."""
    return id_column or next((c for c in ID_COLUMNS if c in columns), None)


def row_ids(values: Sequence[Any] | None, numbers: Iterable[int], shard: str = "") -> list[str]:
    """Each row's id as a run writes it (its ``row_id``): the text of its id column's value (``values``;
    None without an id column), or its position in the input (``numbers``) where it has none, after the
    name of its ``shard`` when it comes from one of a dataset's files (``part-003.jsonl:17``)."""
    numbers = list(numbers)
    ids = [None] * len(numbers) if values is None else values
    at = f"{shard}:" if shard else ""
    return [f"{at}{n}" if v is None else str(v) for n, v in zip(numbers, ids, strict=True)]


class CsvSource(FileSource):
    """A CSV (``,``) or TSV (tab) file, optionally compressed, read in blocks. A format that is CSV at
    heart subclasses it: :meth:`delimiter` and :attr:`skip_rows` (lines before the header) are its seams."""

    skip_rows: int = 0

    def __init__(
        self, path: Path | Place, compression: str | None = None, id_columns: Sequence[str] = ()
    ) -> None:
        import pyarrow.csv as pacsv

        self.path = path
        self.source = str(path)
        self._compression = compression
        self._check_text()
        self._parse = pacsv.ParseOptions(delimiter=self.delimiter(path), newlines_in_values=True)
        self._read = pacsv.ReadOptions(block_size=_BLOCK, skip_rows=self.skip_rows)
        with self._open(None) as reader:
            names = reader.schema.names
        keep_text = {*ID_COLUMNS, *id_columns}
        types: dict[str, pa.DataType | None] = {
            n: pa.string() if n in keep_text else CANDIDATES[0] for n in names
        }
        rows = 0
        with self._open({n: pa.string() for n in names}) as reader:
            for batch in reader:
                rows += batch.num_rows
                for name in names:
                    types[name] = _widen(types[name], batch.column(name))
        if rows == 0:
            raise InputError("has no rows", source=self.source)
        self.types = {n: t if t is not None else pa.string() for n, t in types.items()}
        self.schema = pa.schema([(n, self.types[n]) for n in names])
        self.total = rows

    def delimiter(self, path: Path | Place) -> str:
        """Tab for ``.tsv`` files (also compressed), else a comma."""
        return "\t" if ".tsv" in [s.lower() for s in path.suffixes] else ","

    def _check_text(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset, lines, blank = 0, 1, True
        with open_binary(self.path, self._compression, self.source) as handle:
            while block := handle.read(_BLOCK):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as exc:
                    at = offset + exc.start
                    line = lines + block.count(b"\n", 0, exc.start)
                    raise InputError(
                        f"is not UTF-8 text: byte 0x{block[exc.start]:02x} at offset {at} (line {line})",
                        source=self.source,
                    ) from exc
                offset += len(block)
                lines += block.count(b"\n")
                blank = blank and not block.strip()
        if blank:
            raise InputError("is empty (only whitespace)", source=self.source)

    @contextlib.contextmanager
    def _open(self, types: dict[str, pa.DataType] | None) -> Iterator[Any]:
        """A CSV reader over the file (``types``: every column's type; None: inferred, header only)."""
        import pyarrow.csv as pacsv

        convert = pacsv.ConvertOptions(column_types=types or {}, strings_can_be_null=types is not None)
        with open_binary(self.path, self._compression, self.source) as stream:
            try:
                reader = pacsv.open_csv(
                    stream, read_options=self._read, parse_options=self._parse, convert_options=convert
                )
                yield _Checked(reader, self.source)
            except pa.ArrowInvalid as exc:
                raise InputError(f"is not readable CSV: {exc}", source=self.source) from exc

    def batches(self) -> Iterator[Batch]:
        with self._open(dict(self.types)) as reader:
            for batch in reader:
                yield Batch(pa.Table.from_batches([batch]))


class _Checked:
    """A CSV reader whose failures name the file."""

    def __init__(self, reader: Any, source: str) -> None:
        self._reader = reader
        self.schema = reader.schema
        self._source = source

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            try:
                yield self._reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                raise InputError(f"is not readable CSV: {exc}", source=self._source) from exc


def _widen(current: pa.DataType | None, column: pa.Array) -> pa.DataType | None:
    """The narrowest type from ``current`` on that every value of a text column fits (None: no value yet)."""
    if current is None or pa.types.is_string(current):
        return current
    values = pc.drop_null(column)
    if len(values) == 0:
        return current
    order = list(CANDIDATES)
    for kind in order[order.index(current) :]:
        try:
            pc.cast(values, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        return kind
    return pa.string()


def json_array_source(path: Path | Place) -> RowSource:
    """A JSON file holding a list of records (or an object with one list of records), read whole."""
    source = str(path)
    if isinstance(path, Place):
        with path.open_input_stream() as stream:
            raw = stream.read()
    else:
        raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"is not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line})",
            source=source,
        ) from exc
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
        if len(lists) != 1:
            raise InputError("must hold a list of records (a JSON array of objects)", source=source)
        value = value[lists[0]]
    if not isinstance(value, list):
        raise InputError(f"must hold a list of records, not a {type(value).__name__}", source=source)
    if not value:
        raise InputError("has no rows", source=source)
    data = InputData.from_rows(value, source)
    errors = {i: f"{source} record {i}: {msg.split(': ', 1)[-1]}" for i, msg in data.row_errors.items()}
    return JsonArraySource(path, data.table, errors, data.records)


class JsonArraySource(TableSource):
    """A JSON array file's rows, in memory; resumable as a file."""

    def __init__(
        self,
        path: Path | Place,
        table: pa.Table,
        errors: dict[int, str],
        records: Sequence[Record] | None = None,
    ) -> None:
        super().__init__(table, str(path), errors, records)
        self.path = path

    def identity(self) -> dict[str, Any]:
        return FileSource.identity(self)  # type: ignore[arg-type]
