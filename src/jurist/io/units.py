"""A dataset of many files, as units of work: planned from listings alone, each read where it is judged.

:func:`plan` turns the inputs a user named (files, folders, globs, local or by URL:
:mod:`jurist.io.location`) into a :class:`Corpus`: its :class:`Unit` s in order, each a whole shard or, for a
Parquet file bigger than ``unit_bytes``, the row groups that start in one slice of its bytes (Spark's and
Ray Data's split), so that the planner needs only the listing's sizes. The corpus's columns are fixed once,
from its first shard (a JSON shard's first rows, as for one file), before any model loads; every unit is read
with them (:meth:`Unit.open`): a JSON value that does not fit its column is a bad row, as in one file; a shard
that lacks a column, or cannot be read at all (a missing object, no permission, damaged Parquet, a broken
gzip stream), is a bad shard: :class:`ShardError`, naming it and why.

A row's id is its id column's value, else its shard and position in the shard (``part-003.jsonl:17``); in a
dataset of one file, its position alone, as a run over that file gives.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.formats import COMPRESSIONS, INPUT_SUFFIXES, source_format
from jurist.io.location import Listed, Place, is_glob, is_url, list_files
from jurist.io.opening import open_file, saved_with_datasets
from jurist.io.sources import Batch, ParquetSource, RowSource
from jurist.io.tabular import CsvSource

logger = logging.getLogger("jurist")

UNIT_BYTES = 512 * 2**20  # a Parquet file bigger than this is judged in slices of its row groups


class ShardError(InputError):
    """A shard that cannot be read (judging it stops; the run goes on with the others)."""


def is_dataset_input(inputs: Sequence[str]) -> bool:
    """Whether ``inputs`` name a dataset of files (several inputs, a glob, a URL, or a folder that is not a
    Hugging Face dataset saved with ``save_to_disk``) rather than one local file."""
    if len(inputs) != 1:
        return True
    text = inputs[0]
    if is_glob(text) or is_url(text):
        return True
    return Path(text).is_dir() and not saved_with_datasets(Path(text))


def _readable(name: str) -> bool:
    """A file name with a dataset suffix (``part-0.jsonl.gz``, ``x.parquet``)."""
    try:
        return bool(source_format(PurePosixPath(name)))
    except InputError:
        return False


@dataclass(frozen=True)
class Unit:
    """One unit of work: shard ``shard`` (its name in the dataset) at ``place``, whole or piece ``piece`` of
    ``pieces`` (a Parquet file's row groups that start in that slice of its bytes), with its format and the
    listing's size and modification time. ``limit``: its first rows only; ``sample``: that many of its rows,
    drawn with ``seed`` (``--limit`` and ``--sample`` over the dataset). ``name``: its output shard's name."""

    place: Place
    shard: str
    format: str
    compression: str | None
    size: int
    mtime_ns: int | None
    name: str
    piece: int = 0
    pieces: int = 1
    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    def identity(self) -> list[Any]:
        """What its output records of its input: the file's URL, size and modification time, the slice."""
        return [self.place.url, self.size, self.mtime_ns, self.piece, self.pieces]

    def open(
        self, schema: pa.Schema | None, id_columns: Sequence[str] = (), *, label: bool = True
    ) -> RowSource:
        """This unit's rows as a source, with the dataset's columns (``schema``; None: its own), ids after
        its shard's name (``label``). Reading it raises :class:`ShardError` naming the shard."""
        try:
            inner = self._file(schema, id_columns)
        except (InputError, OSError, pa.ArrowException) as exc:
            raise ShardError(_reason(exc), source=self.place.url) from exc
        source: RowSource = UnitSource(self, inner, schema or inner.schema)
        if self.sample is not None:
            from jurist.io.selection import SampleSource

            source = SampleSource(source, self.sample, self.seed)
        elif self.limit is not None:
            from jurist.io.selection import LimitSource

            source = LimitSource(source, self.limit)
        source.shard = self.shard if label else ""
        return source

    def _file(self, schema: pa.Schema | None, id_columns: Sequence[str]) -> RowSource:
        if self.size == 0:
            raise InputError("is empty (0 bytes)", source=self.place.url)
        return open_file(self.place.local or self.place, self.format, self.compression, id_columns, schema)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, InputError):  # without the source it names: the shard error names it
        text = str(exc)
        return text[len(exc.source) + 2 :] if exc.source and text.startswith(f"{exc.source}: ") else text
    return f"cannot be read ({type(exc).__name__}: {exc})"


class UnitSource(RowSource):
    """A unit's rows from its file's source: a Parquet piece's row groups only, with their positions in the
    shard, every batch in the dataset's columns; a failure while reading is a :class:`ShardError`."""

    def __init__(self, unit: Unit, inner: RowSource, schema: pa.Schema) -> None:
        self.unit, self.inner, self.schema = unit, inner, schema
        self.source = inner.source
        self.total = inner.total if unit.pieces == 1 else None
        missing = [n for n in schema.names if n not in inner.schema.names]
        if missing:
            raise ShardError(
                f"lacks column {', '.join(missing)}, which the dataset's first shard has", source=self.source
            )
        extra = [n for n in inner.schema.names if n not in schema.names]
        if extra:
            logger.warning(
                "%s: columns %s are not in the dataset's first shard; not carried", self.source, extra
            )

    def batches(self) -> Iterator[Batch]:
        try:
            yield from self._batches()
        except ShardError:
            raise
        except (InputError, OSError, pa.ArrowException, ValueError) as exc:
            raise ShardError(_reason(exc), source=self.source) from exc

    def _batches(self) -> Iterator[Batch]:
        same = self.inner.schema == self.schema
        if self.unit.pieces == 1 or not isinstance(self.inner, ParquetSource):
            for batch in self.inner.batches():
                yield batch if same else replace(batch, table=self._cast(batch.table))
            return
        parquet = self.inner._file
        metadata = parquet.metadata
        step = -(-self.unit.size // self.unit.pieces)
        low, high = self.unit.piece * step, (self.unit.piece + 1) * step
        groups, first, before = [], None, 0
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            column = group.column(0)
            offset = column.data_page_offset
            if column.has_dictionary_page and column.dictionary_page_offset:
                offset = min(offset, column.dictionary_page_offset)
            if low <= offset < high:
                groups.append(index)
                first = before if first is None else first
            before += group.num_rows
        if not groups:
            return
        at = first or 0
        for record in parquet.iter_batches(batch_size=65_536, row_groups=groups):
            table = pa.Table.from_batches([record])
            yield Batch(table if same else self._cast(table), numbers=range(at, at + table.num_rows))
            at += table.num_rows

    def _cast(self, table: pa.Table) -> pa.Table:
        return table.select(self.schema.names).cast(self.schema)


@dataclass(frozen=True)
class Corpus:
    """A dataset's units, in order, and what was named (``inputs``). A run over it is identified by what was
    named (:meth:`identity`), not by the listing: a file added later is judged by a rerun, and one that
    changed is judged again (each unit's output records its file's size and modification time,
    :meth:`Unit.identity`)."""

    inputs: tuple[str, ...]
    units: tuple[Unit, ...]
    unit_bytes: int

    @property
    def source(self) -> str:
        return ", ".join(self.inputs)

    def identity(self) -> dict[str, Any]:
        return {"dataset": list(self.inputs), "unit_bytes": self.unit_bytes}

    def head(self, id_columns: Sequence[str] = ()) -> RowSource:
        """The first unit's rows with its own columns: where the dataset's columns come from."""
        return self.units[0].open(None, id_columns)

    @property
    def labelled(self) -> bool:
        """Whether rows' ids name their shard (a dataset of several files)."""
        return len({u.shard for u in self.units}) > 1


def plan(inputs: Sequence[str], *, input_format: str | None = None, unit_bytes: int = UNIT_BYTES) -> Corpus:
    """The units of the files ``inputs`` name (see the module), from listings alone. A file named twice is
    read once; a name that matches nothing, or a file of no known format, is an :class:`InputError`."""
    if unit_bytes < 1:
        raise InputError(f"the unit size must be at least 1 byte, got {unit_bytes}")
    found: dict[str, tuple[Place, Listed]] = {}
    for text in inputs:
        base, files = list_files(text, keep=_readable if input_format is None else None)
        for entry in files:
            found.setdefault(entry.place.url, (base, entry))
    bases = [base.url.rstrip("/") + "/" for base, _ in found.values()]
    common = posixpath.commonprefix(bases)
    root = common[: common.rfind("/") + 1]  # the folder every named place is in ("" for none: full URLs)
    shards = []
    for _, entry in found.values():
        shard = entry.place.url[len(root) :]
        fmt, compression = source_format(entry.place, input_format)
        shards.append((entry, shard, fmt, compression))
    stems = [_stem(shard) for _, shard, _, _ in shards]
    unique = len(set(stems)) == len(stems)
    units: list[Unit] = []
    for (entry, shard, fmt, compression), stem in zip(shards, stems, strict=True):
        name = stem if unique else shard
        pieces = max(1, -(-entry.size // unit_bytes)) if fmt == "parquet" else 1
        for piece in range(pieces):
            units.append(
                Unit(
                    entry.place,
                    shard,
                    fmt,
                    compression,
                    entry.size,
                    entry.mtime_ns,
                    f"{name}.{piece:05d}" if pieces > 1 else name,
                    piece,
                    pieces,
                )
            )
    return Corpus(tuple(inputs), tuple(units), unit_bytes)


def _stem(shard: str) -> str:
    """A shard's name without its format and compression suffixes (``a/part-3.jsonl.gz`` -> ``a/part-3``)."""
    folder, name = posixpath.split(shard)
    while True:
        stem, dot, suffix = name.rpartition(".")
        if not dot or not stem or f".{suffix.lower()}" not in {*INPUT_SUFFIXES, *COMPRESSIONS}:
            break
        name = stem
    return posixpath.join(folder, name)


def choose(corpus: Corpus, limit: int | None, sample: int | None, seed: int) -> Corpus:
    """The units that hold ``--limit``'s first rows (the last one cut), or ``--sample``'s seeded uniform
    sample of every row (each unit's share drawn from the multivariate hypergeometric law of the units' row
    counts, then drawn in the unit with a seed of its own). Both count rows by reading them: ``--limit``
    the first units, ``--sample`` every one."""
    if limit is None and sample is None:
        return corpus
    if limit is not None:
        chosen, left = [], limit
        for unit in corpus.units:
            rows = _count(unit, left)
            chosen.append(replace(unit, limit=left) if rows >= left else unit)
            left -= rows
            if left <= 0:
                break
        return replace(corpus, units=tuple(chosen))
    import numpy as np

    assert sample is not None
    counts = [_count(unit, None) for unit in corpus.units]
    draw = sample if sum(counts) > sample else sum(counts)
    shares = np.random.default_rng(seed).multivariate_hypergeometric(counts, draw)
    units = tuple(
        replace(unit, sample=int(k), seed=seed * 1_000_003 + index)
        for index, (unit, k) in enumerate(zip(corpus.units, shares, strict=True))
        if k
    )
    return replace(corpus, units=units)


def _count(unit: Unit, enough: int | None) -> int:
    """A unit's rows (read; at most ``enough``)."""
    source = unit.open(None)
    if (
        isinstance(source, UnitSource)
        and isinstance(source.inner, ParquetSource | CsvSource)
        and unit.pieces == 1
    ):
        return int(source.inner.total or 0)
    rows = 0
    for batch in source.batches():
        rows += batch.table.num_rows
        if enough is not None and rows >= enough:
            break
    return rows
