"""A JSONL file's chunks cut without parsing them, to be parsed where they are judged.

A data-parallel run whose workers judge whole chunks (:mod:`jurist.engine.host_parallel`) would otherwise
parse every line in the parent, which then feeds the workers no faster than one process reads JSON.
:func:`raw_chunks` cuts a JSONL file into the run's chunks of unparsed lines (a split of the file's bytes,
nothing per value) and :meth:`RawChunk.parse` turns one into the :class:`~jurist.io.sources.Chunk` that
:meth:`~jurist.io.sources.RowSource.chunks` would have given: the same records, the same unreadable rows
and reasons (naming the line), the same columns, typed by the schema the source fixed from its first rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from jurist.io.records import RecordTyper, parse_line
from jurist.io.sources import Chunk, JsonlSource, RowSource, typed_batch


@dataclass(frozen=True)
class RawChunk:
    """Rows ``start`` onwards of a JSONL stream, as lines not yet parsed (``numbers``: their line numbers)."""

    start: int
    numbers: list[int]
    lines: list[bytes]

    def parse(self, typer: RecordTyper) -> Chunk:
        """The chunk, parsed and typed as the source itself reads it: ``typer`` holds the source's name and
        fixed schema (one typer for a stream's chunks: a column that appears late is reported once)."""
        items = []
        for number, raw in zip(self.numbers, self.lines, strict=True):
            where = f"{typer.source} line {number}"
            record, reason = parse_line(raw, where)
            items.append((record, where, reason))
        batch = typed_batch(typer, items)
        return Chunk(batch.table, self.start, batch.errors, None, batch.records)


def can_cut_raw(source: RowSource) -> bool:
    """Whether :func:`raw_chunks` can cut this source: a JSONL file (not stdin, no row selection)."""
    return type(source) is JsonlSource and source.replayable


def raw_chunks(source: JsonlSource, size: int, skip: int = 0) -> Iterator[RawChunk]:
    """The file in chunks of ``size`` unparsed lines (the last may be shorter), after its first ``skip``
    rows; a chunk holds the rows :meth:`~jurist.io.sources.RowSource.chunks` gives at the same place."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    lines = itertools.islice(source.lines(), skip, None)
    start = skip
    while block := list(itertools.islice(lines, size)):
        numbers, raws = zip(*block, strict=True)
        yield RawChunk(start, list(numbers), list(raws))
        start += len(block)
