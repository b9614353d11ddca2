"""``--retry-failed``: re-judge, in a finished run, only the (row, judge) pairs whose status is not ``ok``.

The previous results are read once to find the failed pairs; the input rows they belong to are judged
again (by the judges that failed on any row; a judge's new output replaces its old one only where the old
one failed); then the previous results are rewritten chunk by chunk with those outputs in place, the panel's
and the calibrations' columns computed again. Output row ``i`` is input row ``i`` of the run's stream (after
its limit or sample), which is what pairs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa

from jurist.engine.assemble import Assembler
from jurist.engine.stream import Outputs
from jurist.engine.summary import RunSummary
from jurist.io.opening import open_source
from jurist.io.sources import Batch, Chunk, RowSource
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput

Judged = Callable[[RowSource, Sequence[Judge]], Iterator[tuple[Chunk, Outputs, dict[str, str]]]]


class PickedRows(RowSource):
    """The rows of another source at the given stream positions, in order; :attr:`positions` lists them."""

    def __init__(self, inner: RowSource, wanted: set[int], chunk_size: int) -> None:
        self.inner, self.wanted, self.chunk_size = inner, wanted, chunk_size
        self.source, self.schema = inner.source, inner.schema
        self.total = len(wanted)
        self.positions: list[int] = []

    def batches(self) -> Iterator[Batch]:
        self.positions = []
        for chunk in self.inner.chunks(self.chunk_size):
            picked = [i for i in range(chunk.num_rows) if chunk.start + i in self.wanted]
            if not picked:
                continue
            numbers = chunk.numbers
            errors = {n: chunk.errors[i] for n, i in enumerate(picked) if i in chunk.errors}
            self.positions += [chunk.start + i for i in picked]
            records = None if chunk.records is None else [chunk.records[i] for i in picked]
            table = chunk.table.take(pa.array(picked, pa.int64()))
            yield Batch(table, errors, [numbers[i] for i in picked], records)


def retry_batches(
    judges: Sequence[Judge],
    judged: Judged,
    assembler: Assembler,
    source: RowSource,
    previous: Path,
    chunk_size: int,
    summary: RunSummary,
) -> Iterator[pa.RecordBatch]:
    """The previous results of a run over ``source``, with its failed pairs judged again. ``judged(source,
    judges)`` judges rows (the engine's :meth:`~jurist.engine.core.Engine.judged`)."""
    results = open_source(previous)
    failed: dict[str, set[int]] = {j.name: set() for j in judges}
    offset = 0
    for batch in results.batches():
        for name, rows in failed.items():
            statuses = batch.table.column(f"{name}.status").to_pylist()
            rows.update(offset + i for i, status in enumerate(statuses) if status != "ok")
        offset += batch.table.num_rows
    wanted = set().union(*failed.values())
    again = [j for j in judges if failed[j.name]]
    outputs: dict[str, dict[int, JudgeOutput]] = {j.name: {} for j in again}
    models: dict[str, str] = {}
    if wanted:
        picked = PickedRows(source, wanted, chunk_size)
        done = 0
        for _, chunk_outputs, chunk_models in judged(picked, again):
            models.update(chunk_models)
            count = len(next(iter(chunk_outputs.values())))
            for name, outs in chunk_outputs.items():
                for position, output in zip(picked.positions[done : done + count], outs, strict=True):
                    if position in failed[name]:
                        outputs[name][position] = output
            done += count
    summary.retried = {name: len(replaced) for name, replaced in outputs.items()}
    provenance = {j.name: j.provenance(models.get(j.name, "")) for j in judges}
    for chunk in results.chunks(chunk_size):
        start, end = chunk.start, chunk.start + chunk.num_rows
        replacements = {
            name: {p - start: o for p, o in outs.items() if start <= p < end}
            for name, outs in outputs.items()
        }
        batch = assembler.rebuild(chunk.table, replacements, provenance)
        summary.add_batch(batch, [j.name for j in judges])
        yield batch
