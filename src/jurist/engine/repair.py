"""Mending a resumed run's damaged store: judging again exactly the rows of its damaged parts.

:func:`jurist.io.store_check.damaged_parts` finds the parts that are missing, unreadable or wrong. Without
``repair`` the run stops and names them (exit 2 on the command line, before any model loads); with it, the
rows of each damaged part, and only those, are read again from the input, judged, and written under the
part's own name, so the merged output still holds every row once, in order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import IO

import pyarrow as pa

from jurist.io.parts import OutputError, ResultStore
from jurist.io.sources import Batch, Chunk, RowSource
from jurist.io.store_check import Damage, damaged_parts, refuse_damage

logger = logging.getLogger("jurist")
JudgeBatches = Callable[[RowSource], Iterator[pa.RecordBatch]]


class DamagedRows(RowSource):
    """The rows of some parts of another source: one chunk per part, exactly its rows."""

    def __init__(self, inner: RowSource, damage: Sequence[Damage]) -> None:
        self.inner, self.damage = inner, list(damage)
        self.source, self.schema, self.replayable = inner.source, inner.schema, inner.replayable
        self.total = sum(d.rows for d in self.damage)

    def batches(self) -> Iterator[Batch]:
        for chunk in self.chunks(1):
            yield Batch(chunk.table, dict(chunk.errors), chunk.input_numbers)

    def chunks(self, size: int, skip: int = 0) -> Iterator[Chunk]:
        """Each damaged part's rows as one chunk, whatever ``size`` (``skip`` must be 0)."""
        if skip:
            raise ValueError("the rows of damaged parts are not skipped into")
        for damage in self.damage:
            chunk = next(self.inner.chunks(damage.rows, damage.start), None)
            if chunk is None or chunk.num_rows != damage.rows:
                raise OutputError(
                    f"the input no longer holds rows {damage.start}-{damage.start + damage.rows - 1} of "
                    f"{damage.file}; pass --overwrite to start afresh",
                    source=self.source,
                )
            yield chunk


def mend_store(
    judge_batches: JudgeBatches,
    source: RowSource,
    store: ResultStore,
    *,
    repair: bool,
    note: str | None = None,
    stream: IO[str] | None = None,
) -> None:
    """Check every committed part of ``store``; stop naming the damaged ones, or with ``repair`` judge their
    rows again with ``judge_batches`` (an engine's ``iter_batches``) and rewrite them. ``note``: a line from
    :func:`~jurist.io.store_check.check_manifest` to show on ``stream`` too."""
    if note:
        _tell(note, stream)
    damage = damaged_parts(store)
    if not damage:
        return
    if not repair:
        refuse_damage(store, damage)
    if not source.replayable:
        raise OutputError(f"{source.source} cannot be read again to judge the damaged parts' rows")
    numbers = {part["file"]: number for number, part in enumerate(store.parts)}
    batches = judge_batches(DamagedRows(source, damage))
    for found, batch in zip(damage, batches, strict=True):
        store.rewrite(numbers[found.file], batch)
        _tell(f"repaired: {found.describe()}; its rows were judged again", stream)


def _tell(line: str, stream: IO[str] | None) -> None:
    logger.warning("%s", line)
    if stream is not None:
        print(line, file=stream, flush=True)
