"""Streamed input: a dataset as a :class:`RowSource` that yields fixed-size chunks of Arrow rows.

Sources read in batches (Parquet, Arrow IPC, JSONL from a file or stdin, rows from any iterable, tables in
memory); :meth:`RowSource.chunks` cuts them into chunks of the run's size, from any position (resuming).
The columns are known before the first chunk, so a run can check them before any model loads. A row that
cannot be read keeps its place with its reason (:attr:`Chunk.errors`); the rest of the stream goes on.
:mod:`jurist.io.opening` opens any dataset as a source.

Rows read as Python records (JSONL, JSON arrays, rows in memory) keep those records beside the table
(:attr:`Batch.records`, :attr:`Chunk.records`): judges render from :meth:`Chunk.rows`, the row exactly as
it was given, while the table (whose nested columns Arrow unifies across rows: a struct gains its
siblings' keys as nulls, a column of mixed types becomes JSON text) only carries columns to the output. So
a row's prompt never depends on the rows read with it.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.formats import open_binary
from jurist.io.location import Place
from jurist.io.records import RecordTyper, parse_line, rows_to_table, split_lines

SCHEMA_ROWS = 10_000  # records read before a JSON stream's columns are fixed

Record = Mapping[str, Any] | None
"""A row as it was read (None for an unreadable row)."""


def _rows(table: pa.Table, records: Sequence[Record] | None) -> list[Mapping[str, Any]]:
    """The rows judges render: the records as given when there are any (an unreadable row is ``{}``; its
    error is known), else the table's rows."""
    if records is None:
        return table.to_pylist()  # type: ignore[no-any-return]
    return [{} if record is None else record for record in records]


@dataclass
class InputData:
    """A dataset in memory: its rows as an Arrow table, plus the reasons of unreadable rows by position."""

    table: pa.Table
    source: str = "<memory>"
    row_errors: dict[int, str] = field(default_factory=dict)
    records: Sequence[Record] | None = None  # the rows as given, when they were Python records

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names)

    def rows(self, limit: int | None = None) -> list[Mapping[str, Any]]:
        """The (first ``limit``) rows judges render: as given when they were Python records, else the
        table's rows."""
        if limit is None:
            return _rows(self.table, self.records)
        return _rows(self.table.slice(0, limit), None if self.records is None else self.records[:limit])

    @classmethod
    def from_rows(cls, rows: Sequence[Any], source: str = "<memory>") -> InputData:
        """Rows given as mappings (a non-mapping row becomes a bad row)."""
        good: list[Mapping[str, Any] | None] = []
        errors: dict[int, str] = {}
        for index, row in enumerate(rows):
            if isinstance(row, Mapping):
                good.append(row)
            else:
                good.append(None)
                errors[index] = f"row {index} is a {type(row).__name__}, not an object"
        return cls(rows_to_table(good), source, errors, good)


@dataclass(frozen=True)
class Batch:
    """Rows as they come from a source: a table, its unreadable rows (by index, with the reason), when
    they are not consecutive the rows' positions in the input, and the rows as read when they were Python
    records (``records``, one per table row)."""

    table: pa.Table
    errors: Mapping[int, str] = field(default_factory=dict)
    numbers: Sequence[int] | None = None
    records: Sequence[Record] | None = None

    def rows(self) -> list[Mapping[str, Any]]:
        """The rows as read (see :meth:`Chunk.rows`)."""
        return _rows(self.table, self.records)


@dataclass(frozen=True)
class Chunk:
    """``size`` rows of a stream: ``start`` is the position of the first in the stream (after any limit
    or sample); :attr:`numbers` are their positions in the input."""

    table: pa.Table
    start: int
    errors: Mapping[int, str] = field(default_factory=dict)
    input_numbers: Sequence[int] | None = None
    records: Sequence[Record] | None = None
    shard: str = ""  # the shard of a dataset the rows come from: their ids without an id column name it

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    def rows(self) -> list[Mapping[str, Any]]:
        """The rows judges render: each exactly as it was read when the source read Python records (never
        unified with its neighbours), else the table's rows; an unreadable row is ``{}``."""
        return _rows(self.table, self.records)

    @property
    def numbers(self) -> list[int]:
        if self.input_numbers is not None:
            return list(self.input_numbers)
        return list(range(self.start, self.start + self.num_rows))


class RowSource(ABC):
    """A dataset read in batches. ``source`` names it; ``schema`` and ``total`` (None when unknown) are known
    before the first row is read."""

    source: str
    schema: pa.Schema
    total: int | None = None
    replayable: bool = True  # whether batches() can run again from the start (files and tables)
    shard: str = ""  # a shard of a dataset: its name, which the ids of its rows start with (Chunk.shard)

    @abstractmethod
    def batches(self) -> Iterator[Batch]:
        """The rows, in order, in batches of any size."""

    def identity(self) -> dict[str, Any]:
        """What tells this input apart from another, for resuming a run (a file's path, size and head)."""
        return {"source": self.source}

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    def chunks(self, size: int, skip: int = 0) -> Iterator[Chunk]:
        """The stream in chunks of ``size`` rows (the last may be shorter), after its first ``skip`` rows."""
        if size < 1:
            raise ValueError(f"chunk size must be at least 1, got {size}")
        buffer = _Buffer()
        start = skip
        for batch in self.batches():
            if skip >= batch.table.num_rows:
                skip -= batch.table.num_rows
                continue
            buffer.add(_slice(batch, skip) if skip else batch)
            skip = 0
            while buffer.rows >= size:
                yield buffer.take(size, start, self.shard)
                start += size
        if buffer.rows:
            yield buffer.take(buffer.rows, start, self.shard)

    def read_all(self) -> tuple[pa.Table, dict[int, str]]:
        """Every row at once, and the unreadable ones' reasons by position."""
        whole = self.read_whole()
        return whole.table, dict(whole.errors)

    def read_whole(self) -> Chunk:
        """Every row at once, as one chunk (with the rows as read, when they were records)."""
        buffer = _Buffer()
        for batch in self.batches():
            buffer.add(batch)
        if not buffer.rows:
            return Chunk(self.schema.empty_table(), 0)
        return buffer.take(buffer.rows, 0)


def _slice(batch: Batch, cut: int) -> Batch:
    numbers = None if batch.numbers is None else batch.numbers[cut:]
    errors = {i - cut: e for i, e in batch.errors.items() if i >= cut}
    records = None if batch.records is None else batch.records[cut:]
    return Batch(batch.table.slice(cut), errors, numbers, records)


class _Buffer:
    """Batches waiting to be cut into chunks."""

    def __init__(self) -> None:
        self.tables: list[pa.Table] = []
        self.errors: dict[int, str] = {}
        self.numbers: list[int] | None = None
        self.records: list[Record] | None = None
        self.rows = 0

    def add(self, batch: Batch) -> None:
        self.errors.update({self.rows + i: e for i, e in batch.errors.items()})
        if batch.numbers is not None:
            self.numbers = [*(self.numbers or []), *batch.numbers]
        if batch.records is not None and not self.rows:
            self.records = []
        if self.records is not None:
            self.records.extend(batch.records if batch.records is not None else batch.table.to_pylist())
        self.tables.append(batch.table)
        self.rows += batch.table.num_rows

    def take(self, size: int, start: int, shard: str = "") -> Chunk:
        table = pa.concat_tables(self.tables) if len(self.tables) > 1 else self.tables[0]
        head, rest = table.slice(0, size), table.slice(size)
        errors = {i: e for i, e in self.errors.items() if i < size}
        numbers = None if self.numbers is None else self.numbers[:size]
        records = None if self.records is None else self.records[:size]
        self.tables = [rest] if rest.num_rows else []
        self.errors = {i - size: e for i, e in self.errors.items() if i >= size}
        self.numbers = None if self.numbers is None else self.numbers[size:]
        self.records = None if self.records is None else self.records[size:]
        self.rows -= size
        return Chunk(head.combine_chunks(), start, errors, numbers, records, shard)


# ------------------------------------------------------------------------------------------ sources


class TableSource(RowSource):
    """An Arrow table in memory (and the reasons of its unreadable rows, and the rows as given when the
    table was built from Python records)."""

    def __init__(
        self,
        table: pa.Table,
        source: str = "<memory>",
        errors: Mapping[int, str] | None = None,
        records: Sequence[Record] | None = None,
    ) -> None:
        if records is not None and len(records) != table.num_rows:
            raise ValueError(f"{len(records)} records for a table of {table.num_rows} rows")
        self.table = table
        self.source = source
        self.schema = table.schema
        self.total = table.num_rows
        self.errors = dict(errors or {})
        self.records = records

    def batches(self) -> Iterator[Batch]:
        step = 65_536
        for start in range(0, max(self.table.num_rows, 1), step):
            part = self.table.slice(start, step)
            errors = {i - start: e for i, e in self.errors.items() if start <= i < start + step}
            records = None if self.records is None else self.records[start : start + step]
            yield Batch(part, errors, None, records)


class ReaderSource(RowSource):
    """Record batches from an Arrow reader (one pass)."""

    replayable = False

    def __init__(self, reader: pa.RecordBatchReader, source: str = "<memory>") -> None:
        self.reader = reader
        self.source = source
        self.schema = reader.schema

    def batches(self) -> Iterator[Batch]:
        for batch in self.reader:
            yield Batch(pa.Table.from_batches([batch]))


class FileSource(RowSource):
    """A file, local or at a URL (:class:`~jurist.io.location.Place`): its identity is its path, size,
    modification time and a hash of its head."""

    path: Path | Place

    def identity(self) -> dict[str, Any]:
        return file_identity(self.path) if isinstance(self.path, Path) else {"path": str(self.path)}


class ParquetSource(FileSource):
    def __init__(self, path: Path | Place) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.source = str(path)
        try:
            self._file = pq.ParquetFile(path.open_input_file() if isinstance(path, Place) else path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"is not a readable Parquet file: {exc}", source=self.source) from exc
        self.schema = self._file.schema_arrow
        self.total = self._file.metadata.num_rows

    def batches(self) -> Iterator[Batch]:
        for batch in self._file.iter_batches(batch_size=65_536):
            yield Batch(pa.Table.from_batches([batch]))


class IpcSource(FileSource):
    """Arrow IPC files (Feather v2); IPC streams and Feather v1 are read whole."""

    def __init__(self, path: Path | Place) -> None:
        self.path = path
        self.source = str(path)
        self._table: pa.Table | None = None
        try:
            opened = path.open_input_file() if isinstance(path, Place) else pa.memory_map(str(path))
            self._reader: Any = pa.ipc.open_file(opened)
            self.schema = self._reader.schema
            self.total = sum(
                self._reader.get_batch(i).num_rows for i in range(self._reader.num_record_batches)
            )
        except (pa.ArrowInvalid, OSError):
            import pyarrow.feather as feather

            try:
                self._table = feather.read_table(path.open_input_file() if isinstance(path, Place) else path)
            except (pa.ArrowInvalid, OSError) as exc:
                raise InputError(f"is not a readable Arrow/Feather file: {exc}", source=self.source) from exc
            self.schema = self._table.schema
            self.total = self._table.num_rows

    def batches(self) -> Iterator[Batch]:
        if self._table is not None:
            yield from TableSource(self._table).batches()
            return
        for i in range(self._reader.num_record_batches):
            yield Batch(pa.Table.from_batches([self._reader.get_batch(i)]))


class RecordSource(RowSource):
    """JSON records (mappings), typed by a :class:`~jurist.io.records.RecordTyper` fixed on the first rows."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._typer = RecordTyper(source)
        self._head: list[tuple[dict[str, Any] | None, str, str | None]] | None = None

    @abstractmethod
    def records(self) -> Iterator[tuple[dict[str, Any] | None, str, str | None]]:
        """(record or None, where it is, reason when unreadable), in order."""

    def _fix(self, empty: str) -> None:
        """Fix the columns from the first records. A replayable source reads them again from the start
        later; a one-pass source keeps them, and the rest of its stream, for its one pass."""
        stream = self.records()
        head = list(itertools.islice(stream, SCHEMA_ROWS))
        if self.replayable:
            stream.close()  # type: ignore[attr-defined]
        if not head:
            raise InputError(empty, source=self.source)
        self.schema = self._typer.fix([record for record, _, _ in head])
        if not self.replayable:
            self._head = head
            self._rest: Iterator[tuple[dict[str, Any] | None, str, str | None]] | None = stream

    def batches(self) -> Iterator[Batch]:
        if self._head is not None:  # the first pass reuses the rows read to fix the columns
            head, rest = self._head, self._rest
            self._head, self._rest = None, None
            stream: Iterator[Any] = itertools.chain(head, rest or ())
        else:
            stream = self.records()
        while True:
            items = list(itertools.islice(stream, 8192))
            if not items:
                return
            yield typed_batch(self._typer, items)


def typed_batch(typer: RecordTyper, items: Sequence[tuple[dict[str, Any] | None, str, str | None]]) -> Batch:
    """Records read (each with where it is and the reason when unreadable) as a batch of the typer's fixed
    schema; a row whose value does not fit its column is unreadable too."""
    errors = {i: reason for i, (_, _, reason) in enumerate(items) if reason is not None}
    records = [r for r, _, _ in items]
    table = typer.table(records, [w for _, w, _ in items], errors)
    return Batch(table, errors, None, [None if i in errors else r for i, r in enumerate(records)])


class JsonlSource(RecordSource, FileSource):
    """JSON Lines from a file (plain or compressed, local or at a URL) or stdin; blank lines are skipped.
    ``schema``: the columns, already fixed from the first rows of the dataset this file is a shard of."""

    def __init__(
        self, path: Path | Place | None, *, compression: str | None = None, schema: pa.Schema | None = None
    ) -> None:
        RecordSource.__init__(self, "<stdin>" if path is None else str(path))
        self.replayable = path is not None
        if path is not None:
            self.path = path
        self._compression = compression
        if isinstance(path, Path) and compression is None:
            self.total = _count_lines(path)
        if schema is None:
            self._fix("is empty (no records)")
        else:
            self.schema = schema
            self._typer = RecordTyper(self.source, schema)

    def identity(self) -> dict[str, Any]:
        return FileSource.identity(self) if self.replayable else {"source": self.source}

    def records(self) -> Iterator[tuple[dict[str, Any] | None, str, str | None]]:
        for line_no, raw in self.lines():
            where = f"{self.source} line {line_no}"
            record, reason = parse_line(raw, where)
            yield record, where, reason

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """The non-blank lines, unparsed, with their numbers (from 1; a leading byte-order mark dropped)."""
        handle = (
            sys.stdin.buffer
            if not self.replayable
            else open_binary(self.path, self._compression, self.source)
        )
        try:
            for line_no, raw in enumerate(split_lines(handle.read), 1):
                if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if raw.strip():
                    yield line_no, raw
        finally:
            if self.replayable:
                handle.close()


class IterableSource(RecordSource):
    """Rows from an iterable of mappings, read once (a generator, say); a non-mapping is a bad row."""

    replayable = False

    def __init__(self, rows: Iterable[Any], source: str = "<memory>") -> None:
        super().__init__(source)
        self._rows = rows
        self._fix("has no rows")

    def records(self) -> Iterator[tuple[dict[str, Any] | None, str, str | None]]:
        for index, row in enumerate(self._rows):
            where = f"row {index}"
            if isinstance(row, Mapping):
                yield dict(row), where, None
            else:
                yield None, where, f"row {index} is a {type(row).__name__}, not an object"


def _count_lines(path: Path) -> int:
    """A JSONL file's lines (newlines, and a last line without one): its progress total; blank lines, which
    hold no row, count too."""
    count = 0
    last = b"\n"
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def file_identity(path: Path) -> dict[str, Any]:
    """What tells a file apart from another, for resuming a run: its path, size, mtime and first MiB."""
    stat = path.stat()
    with path.open("rb") as handle:
        head = hashlib.sha256(handle.read(1 << 20)).hexdigest()[:16]
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "head": head}
