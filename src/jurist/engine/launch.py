"""How a run spec is run: locally, on N engine processes (data parallel) or on Ray; the one place that
chooses.

``start(spec, Placement(...))`` returns the engine and the batch source of the run; a
:class:`~jurist.engine.run.Run` over them does the rest. The command line builds the spec from its options
and calls this; Python users can do the same, or call :meth:`~jurist.engine.core.Engine.run_file`.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurist.backends import create_backend
from jurist.backends.parallel import OnWorkerDeath, data_parallel_factory
from jurist.engine.core import Engine
from jurist.engine.ray_job import RayBatches, RayRun
from jurist.engine.run import BatchSource, LocalBatches, RetryBatches
from jurist.engine.spec import RunSpec
from jurist.errors import JuristError


@dataclass(frozen=True)
class Placement:
    """Where a run's judging happens. ``data_parallel``: engine processes per model on this machine (with
    ``ray``: actors); ``ray``: ``local``, ``auto`` or a cluster address (None: no Ray); ``retry_failed``:
    re-judge only a finished run's failed rows (local only); ``on_worker_death``: with data parallel, whether
    a dead engine process stops the run or its requests go to the processes left."""

    data_parallel: int | None = None
    ray: str | None = None
    retry_failed: bool = False
    on_worker_death: OnWorkerDeath = "stop"


def start(spec: RunSpec, placement: Placement = Placement()) -> tuple[Engine, BatchSource]:
    """The engine of a run and where its judged batches come from."""
    if placement.ray is not None and placement.retry_failed:
        raise JuristError("--retry-failed runs without --ray")
    parallel = placement.data_parallel or 1
    local_parallel = parallel > 1 and placement.ray is None
    death = placement.on_worker_death
    factory = data_parallel_factory(parallel, create_backend, death) if local_parallel else None
    engine = Engine.from_spec(spec, backend_factory=factory)
    if placement.ray is not None:
        return engine, RayBatches(RayRun(engine, placement.ray, actors=placement.data_parallel))
    return engine, RetryBatches() if placement.retry_failed else LocalBatches()
