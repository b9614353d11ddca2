"""Judging on Ray: the units of a dataset run on an actor pool, and a judge for your own Ray Data pipeline.

:class:`RayExecutor` is the Ray executor of a dataset run (:class:`~jurist.engine.corpus.CorpusRun`). The
driver sends only unit descriptors (a shard's URL, a slice of it) through a Ray Dataset
(``ray.data.from_items``) to ``Dataset.map_batches`` over an actor pool (``ActorPoolStrategy``): each actor
builds the run's :class:`~jurist.engine.core.Engine` from its spec once, loads its model, and for each unit
reads the shard from storage itself, judges it, writes the unit's shard to the results dataset itself and
returns only the unit's manifest entry (:func:`~jurist.engine.units.judge_unit`). So the driver's memory and
traffic grow with the number of units, not the rows, and the cluster reads and writes in parallel. Ray does
the scheduling, and the retrying: Ray Data's actors restart (``max_restarts``) and their calls are retried
(``max_task_retries``) when an actor or its node is lost, and a retried unit rewrites the same shard. Every
node needs the input and the output at the same URL (object storage, or a filesystem all nodes mount).

:class:`JudgeRows` is a judge for a Ray Data pipeline of your own, Ray Data LLM's processor shape::

    ds = ray.data.read_parquet("s3://corpus/")
    judged = ds.map_batches(
        JudgeRows,
        fn_constructor_kwargs={"judges": ["generic/truthfulness"], "model": "Qwen/Qwen2.5-7B-Instruct"},
        concurrency=4, num_gpus=1, batch_size=512, batch_format="pyarrow",
    )

returns every batch with jurist's columns (``row_id``, each judge's fields, score, status, provenance).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.engine.spec import RunOptions, RunSpec
from jurist.engine.units import UnitJob, UnitResult, judge_unit
from jurist.errors import BackendError, ConfigError
from jurist.io.sources import TableSource
from jurist.io.units import Unit


def connect(address: str | None, runtime_env: Mapping[str, Any] | None = None) -> Any:
    """Ray, initialised here if it is not yet: ``None``/``local`` starts a local instance, ``auto`` joins
    this machine's cluster, anything else is a cluster address."""
    try:
        import ray
    except ImportError as exc:
        raise BackendError("--ray needs Ray: pip install 'jurist[ray]'") from exc
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if runtime_env:
            kwargs["runtime_env"] = dict(runtime_env)
        target = None if address in (None, "", "local") else address
        try:
            ray.init(address=target, **kwargs)
        except Exception as exc:
            raise BackendError(f"could not reach Ray at {target or 'a new local instance'}: {exc}") from exc
    return ray


class _UnitActor:
    """A Ray Data actor: the run's engine, loaded once; each call judges one unit (``batch_size=1``)."""

    def __init__(self, payload: bytes) -> None:
        from jurist.engine.core import Engine

        spec, factory, self.job = pickle.loads(payload)
        self.engine = Engine.from_spec(spec, backend_factory=factory)

    def __call__(self, batch: pa.Table) -> pa.Table:
        results = [
            judge_unit(self.engine, self.job, pickle.loads(raw)) for raw in batch.column("unit").to_pylist()
        ]
        return pa.table({"result": [pickle.dumps(r) for r in results]})

    def __del__(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.close()


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

    def start(self) -> float:
        connect(self.address, self.runtime_env)
        return 0.0

    def _pool(self, ray: Any, units: int) -> tuple[int, float]:
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
        return max(1, min(actors, units)), num_gpus

    def judge_units(self, job: UnitJob, units: Sequence[Unit]) -> Iterator[UnitResult]:
        if not units:
            return
        import ray.cloudpickle as cloudpickle

        ray = connect(self.address, self.runtime_env)
        actors, num_gpus = self._pool(ray, len(units))
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = False
        context.enable_progress_bars = False
        items = [{"unit": pickle.dumps(unit)} for unit in units]
        payload = cloudpickle.dumps((self.spec, self.factory, job))
        judged = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _UnitActor,
            batch_size=1,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=actors, max_tasks_in_flight_per_actor=1),
            fn_constructor_kwargs={"payload": payload},
            num_gpus=num_gpus,
            num_cpus=self.num_cpus,
        )
        for row in judged.iter_rows():
            result: UnitResult = pickle.loads(row["result"])
            self._described = self._described or result.described
            yield result

    def described(self) -> dict[str, Any]:
        return self._described

    def close(self) -> None:
        return None


class JudgeRows:
    """A judge for ``ray.data.Dataset.map_batches`` (see the module): ``judges`` (configs, built-in names or
    paths), ``model`` and ``engine`` for every judge, ``overrides`` (dotted config keys, as on the command
    line), ``options`` (:class:`~jurist.engine.spec.RunOptions`; ``id_column`` names the column that
    identifies rows, else a row's id is its position in its batch) and ``backend_factory``. Each call
    returns the batch as jurist writes it: ``row_id``, the input columns and every judge's columns."""

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
        source = TableSource(table, "<ray batch>")
        schema = self.engine.schema_for(source)
        return pa.Table.from_batches(list(self.engine.iter_batches(source)), schema=schema)

    def __del__(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.close()
