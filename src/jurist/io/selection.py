"""Choosing rows of a source: the first ``limit`` rows, or a seeded uniform sample of them."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.sources import Batch, RowSource


class LimitSource(RowSource):
    """The first ``limit`` rows of another source."""

    def __init__(self, inner: RowSource, limit: int) -> None:
        if limit < 1:
            raise InputError(f"--limit must be at least 1, got {limit}")
        self.inner, self.limit = inner, limit
        self.source, self.schema, self.replayable = inner.source, inner.schema, inner.replayable
        self.total = limit if inner.total is None else min(limit, inner.total)

    def batches(self) -> Iterator[Batch]:
        left = self.limit
        for batch in self.inner.batches():
            if left <= 0:
                return
            if batch.table.num_rows > left:
                batch = Batch(
                    batch.table.slice(0, left),
                    {i: e for i, e in batch.errors.items() if i < left},
                    None if batch.numbers is None else batch.numbers[:left],
                    None if batch.records is None else batch.records[:left],
                )
            left -= batch.table.num_rows
            yield batch

    def identity(self) -> dict[str, Any]:
        return {**self.inner.identity(), "limit": self.limit}


class SampleSource(RowSource):
    """A uniform random sample of ``size`` rows of another source (seeded reservoir sampling), in order."""

    def __init__(self, inner: RowSource, size: int, seed: int = 0) -> None:
        if size < 1:
            raise InputError(f"--sample must be at least 1, got {size}")
        self.inner, self.size, self.seed = inner, size, seed
        self.source, self.schema = inner.source, inner.schema
        self.total = size if inner.total is None else min(size, inner.total)

    def batches(self) -> Iterator[Batch]:
        rng = random.Random(self.seed)
        kept: list[tuple[int, Mapping[str, Any], str | None]] = []
        seen = 0
        for batch in self.inner.batches():
            rows = batch.rows()
            for i, row in enumerate(rows):
                number = batch.numbers[i] if batch.numbers is not None else seen
                item = (number, row, batch.errors.get(i))
                if len(kept) < self.size:
                    kept.append(item)
                else:
                    slot = rng.randrange(seen + 1)
                    if slot < self.size:
                        kept[slot] = item
                seen += 1
        kept.sort(key=lambda item: item[0])
        records = [row for _, row, _ in kept]
        table = pa.Table.from_pylist(records, schema=self.schema)
        errors = {i: e for i, (_, _, e) in enumerate(kept) if e is not None}
        yield Batch(table, errors, [number for number, _, _ in kept], records)

    def identity(self) -> dict[str, Any]:
        return {**self.inner.identity(), "sample": self.size, "seed": self.seed}
