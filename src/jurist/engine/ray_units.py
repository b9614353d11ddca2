"""Judging on Ray: the units of a dataset run on an actor pool, and a judge for your own Ray Data pipeline.

:class:`RayExecutor` is the Ray executor of a dataset run (:class:`~jurist.engine.corpus.CorpusRun`). It
starts ``actors`` Ray actors, each of which builds the run's :class:`~jurist.engine.core.Engine` from its spec
once and loads its model (Ray Data LLM's shape: a stateful processor per replica), and hands them unit
descriptors (a shard's URL, a slice of it) through Ray's own ``ray.util.ActorPool``, a unit at a time per
actor. For each unit the actor reads the shard from storage itself, judges it, writes the unit's shard to the
results dataset itself and returns only the unit's manifest entry
(:func:`~jurist.engine.units.judge_unit`). So the driver's memory and traffic grow with the number of units,
not the rows, and the cluster reads and writes in parallel. Ray places the actors and retries: they are
created with ``max_restarts=-1`` and ``max_task_retries=-1``, so an actor whose process or node is lost is
started again where there is room and its unit is judged again (the retried unit rewrites the same shard).
Every node needs the input and the output at the same URL (object storage, or a filesystem all nodes mount).

:class:`JudgeRows` is a judge for a Ray Data pipeline of your own (``Dataset.map_batches``: Ray Data LLM's
processor shape), which returns every batch with jurist's columns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.engine.spec import RunOptions, RunSpec
from jurist.engine.units import UnitJob, UnitResult, judge_unit, load
from jurist.errors import BackendError, ConfigError
from jurist.io.sources import TableSource
from jurist.io.units import Unit


def connect(address: str | None, runtime_env: Mapping[str, Any] | None = None) -> Any:
    """Ray, initialised here if it is not yet: ``local`` starts a new local instance (even where this machine
    already runs a cluster), ``auto`` joins this machine's cluster, ``None`` follows Ray's own rule
    (``RAY_ADDRESS``, else this machine's latest cluster, else a new instance), anything else is a cluster
    address."""
    try:
        import ray
    except ImportError as exc:
        raise BackendError("--ray needs Ray: pip install 'jurist[ray]'") from exc
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if runtime_env:
            kwargs["runtime_env"] = dict(runtime_env)
        target = address or None
        try:
            ray.init(address=target, **kwargs)
        except Exception as exc:
            raise BackendError(f"could not reach Ray at {target or 'its default address'}: {exc}") from exc
    return ray


class UnitActor:
    """A Ray actor: the run's engine, built from its ``spec`` with backends from ``factory``, its model loaded
    once; :meth:`judge` judges one unit."""

    def __init__(self, spec: RunSpec, factory: Callable[[InferenceConfig], Backend]) -> None:
        from jurist.engine.core import Engine

        self.engine = Engine.from_spec(spec, backend_factory=factory)
        load(self.engine)

    def ready(self) -> bool:
        return True

    def judge(self, job: UnitJob, unit: Unit) -> UnitResult:
        return judge_unit(self.engine, job, unit)


class RayExecutor:
    """A dataset run's units on a Ray actor pool (see the module). ``actors``: the pool's size (default:
    one per GPU of the cluster, else 2); ``num_gpus``: GPUs per actor (default 1 on a cluster with GPUs,
    else 0); ``num_cpus``: CPUs per actor; ``factory``: a picklable ``(InferenceConfig) -> Backend``."""

    def __init__(
        self,
        spec: RunSpec,
        factory: Callable[[InferenceConfig], Backend],
        address: str | None = None,
        *,
        actors: int | None = None,
        num_gpus: float | None = None,
        num_cpus: float = 1.0,
        runtime_env: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec, self.factory, self.address = spec, factory, address
        self.actors, self.num_gpus, self.num_cpus, self.runtime_env = actors, num_gpus, num_cpus, runtime_env
        self._described: dict[str, Any] = {}
        self._handles: list[Any] = []

    def _pool(self, ray: Any) -> tuple[int, float]:
        """The actors and GPUs per actor, refused when the cluster cannot hold them (Ray would wait)."""
        resources = ray.cluster_resources()
        gpus, cpus = float(resources.get("GPU", 0)), float(resources.get("CPU", 0))
        num_gpus = self.num_gpus if self.num_gpus is not None else (1.0 if gpus else 0.0)
        actors = self.actors or (int(gpus // num_gpus) if num_gpus else 2)
        short = [
            f"{actors} x {need:g} {name} (the cluster has {have:g})"
            for name, need, have in (("GPU", num_gpus, gpus), ("CPU", self.num_cpus, cpus))
            if actors * need > have
        ]
        if short:
            raise ConfigError(f"the actor pool needs {'; '.join(short)}: lower --data-parallel")
        return max(1, actors), num_gpus

    def start(self) -> float:
        """Start the actors (once) and wait until each has loaded its model; the seconds that took."""
        if self._handles:
            return 0.0
        began = time.perf_counter()
        ray = connect(self.address, self.runtime_env)
        actors, num_gpus = self._pool(ray)
        options = {
            "num_cpus": self.num_cpus,
            "num_gpus": num_gpus,
            "max_restarts": -1,
            "max_task_retries": -1,
        }
        remote = ray.remote(**options)(UnitActor)
        self._handles = [remote.remote(self.spec, self.factory) for _ in range(actors)]
        try:
            ray.get([handle.ready.remote() for handle in self._handles])
        except ray.exceptions.RayError as exc:
            self.close()
            raise BackendError(f"a Ray actor could not start: {exc}") from exc
        return time.perf_counter() - began

    def judge_units(self, job: UnitJob, units: Sequence[Unit]) -> Iterator[UnitResult]:
        from ray.exceptions import RayError
        from ray.util.actor_pool import ActorPool

        self.start()
        pool = ActorPool(self._handles)
        try:
            for result in pool.map_unordered(lambda actor, unit: actor.judge.remote(job, unit), list(units)):
                self._described = self._described or result.described
                yield result
        except RayError as exc:
            raise BackendError(f"a Ray actor failed: {exc}; the units committed so far are kept") from exc

    def described(self) -> dict[str, Any]:
        return self._described

    def close(self) -> None:
        """Stop the actors (their models go with them)."""
        if self._handles:
            import ray

            for handle in self._handles:
                ray.kill(handle)
            self._handles = []


class JudgeRows:
    """A judge for ``ray.data.Dataset.map_batches``: ``judges`` (configs, built-in names or paths), ``model``
    and ``engine`` for every judge, ``overrides`` (dotted config keys, as on the command line), ``options``
    (:class:`~jurist.engine.spec.RunOptions`; ``id_column`` names the column that identifies rows, else a
    row's id is its position in its batch) and ``backend_factory``. Each call returns the batch as jurist
    writes it: ``row_id``, the input columns and every judge's columns::

        ds.map_batches(JudgeRows, concurrency=4, num_gpus=1, batch_size=512, batch_format="pyarrow",
                       fn_constructor_kwargs={"judges": ["generic/truthfulness"], "model": MODEL})
    """

    def __init__(
        self,
        judges: Sequence[Any],
        *,
        model: str | None = None,
        engine: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        options: RunOptions | None = None,
        backend_factory: Callable[[InferenceConfig], Backend] | None = None,
    ) -> None:
        from jurist.config.loading import load_judge_config
        from jurist.engine.core import Engine

        settings = dict(overrides or {})
        if model is not None:
            settings["inference_config.model.model_name"] = model
        if engine is not None:
            settings["inference_config.engine"] = engine
        configs = [load_judge_config(j, settings) if isinstance(j, str) else j for j in judges]
        self.engine = Engine(configs, backend_factory=backend_factory, options=options or RunOptions())

    def __call__(self, batch: pa.Table | Mapping[str, Any]) -> pa.Table:
        table = batch if isinstance(batch, pa.Table) else pa.table(dict(batch))
        return self.engine.run(TableSource(table, "<ray batch>"))
