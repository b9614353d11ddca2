"""Judging a unit of work: the one function every executor runs, wherever it runs.

In this process, in a data-parallel worker or in a Ray actor, a unit is judged the same way
(:func:`judge_unit`): the worker reads the unit from storage itself (:meth:`~jurist.io.units.Unit.open`),
judges it chunk by chunk on its engine, writes the unit's shard to the results dataset itself
(:class:`~jurist.io.dataset.ShardWriter`, committed in one step with its manifest entry in its footer) and
returns only that entry: the unit's status, rows and counts. No row goes back to the process that planned
the run. A unit whose shard cannot be read comes back ``bad``, with the reason, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from jurist.engine.summary import RunSummary
from jurist.io.dataset import ShardWriter
from jurist.io.units import ShardError, Unit


@dataclass(frozen=True)
class UnitJob:
    """What a worker needs, besides its engine, to judge a run's units: the dataset's columns (``schema``),
    the writer of the run's shards, whether rows' ids name their shard (``labelled``: a dataset of several
    files) and the id columns (which CSV shards keep as text)."""

    schema: pa.Schema
    writer: ShardWriter
    labelled: bool
    id_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnitResult:
    """A unit judged: its name, its manifest entry (``status`` ``ok`` with ``rows`` and ``counts``, or
    ``bad`` with ``error``) and what judged it (the engine's models, described)."""

    name: str
    entry: dict[str, Any]
    described: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.entry.get("status") == "ok"

    def counts(self) -> RunSummary:
        return RunSummary.from_counts(self.entry["counts"]) if self.ok else RunSummary()


def judge_unit(engine: Any, job: UnitJob, unit: Unit) -> UnitResult:
    """Read ``unit``, judge every row on ``engine`` (an :class:`~jurist.engine.core.Engine`), write its shard
    and return its entry (see the module)."""
    sent = engine.tally.requests
    counts = RunSummary()
    try:
        source = unit.open(job.schema, job.id_columns, label=job.labelled)
        with job.writer.open(unit.name) as shard:
            for _, batch, outputs, models in engine.assembled(source):
                shard.write(batch)
                counts.add(outputs, models)
            counts.requests = engine.tally.requests - sent
            entry = {"status": "ok", "shard": unit.shard, "input": unit.identity(), "counts": counts.counts()}
            entry = shard.commit(entry)
    except ShardError as exc:
        return UnitResult(unit.name, {"status": "bad", "shard": unit.shard, "error": str(exc)}, {})
    return UnitResult(unit.name, entry, engine.describe_models())


def load(engine: Any) -> None:
    """Load the model of ``engine``'s judges now (a worker's or an actor's start), not at its first
    request."""
    from jurist.engine.lazy import LazyBackend

    modelled = [j for j in engine.judges if j.needs_model]
    backend = engine.backend_for(modelled[0]) if modelled else None
    if isinstance(backend, LazyBackend):
        backend.real()


class Executor(Protocol):
    """Where a run's units are judged: :meth:`judge_units` yields each unit's result as it finishes (any
    order); :meth:`start` loads what judges them (the seconds it took), :meth:`described` says what judged
    them, :meth:`close` frees it."""

    def start(self) -> float: ...

    def judge_units(self, job: UnitJob, units: Sequence[Unit]) -> Iterator[UnitResult]: ...

    def described(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class InProcess:
    """The units judged one after another on this process's engine."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._described: dict[str, Any] = {}

    def start(self) -> float:
        return 0.0

    def judge_units(self, job: UnitJob, units: Sequence[Unit]) -> Iterator[UnitResult]:
        for unit in units:
            result = judge_unit(self.engine, job, unit)
            self._described.update(result.described)
            yield result

    def described(self) -> dict[str, Any]:
        return self._described or self.engine.describe_models()

    def close(self) -> None:
        return None
