"""Judging a dataset on Ray: blocks of rows mapped over an actor pool, one jurist engine per actor.

``RayRun(engine, address).run_file(input, output)`` writes the same results file as
:meth:`jurist.engine.core.Engine.run_file` (the same columns, statuses, row order and run metadata; the same
fingerprint, so a run can start locally and resume on Ray, or the other way round):

* **Reading.** The driver reads the input with jurist's own readers and cuts it into the run's chunks, so row
  ids, column types, unreadable rows (``bad_input``) and row choice (``limit``/``sample``) are exactly a local
  run's; each chunk is one block of a Ray Dataset (``ray.data.from_items``). Ray Data's own file readers type
  JSON and CSV columns their own way and stop at a malformed line, which would change the output.
* **Judging.** ``Dataset.map_batches`` over an actor pool (``ActorPoolStrategy(size=concurrency)``, one block
  per call, ``num_gpus`` per actor, 1 on a cluster with GPUs): each actor builds one
  :class:`~jurist.engine.core.Engine` with the run's judges and a backend from ``backend_factory`` (by default
  each judge's ``inference_config``), loads its model once, and returns the block's assembled Arrow batch.
  This is Ray Data's LLM batch-inference shape (a stateful processor per replica, ``concurrency`` replicas,
  ``batch_size`` rows per call) with jurist's planning, constraints and parsing inside the replica.
* **Writing and resuming.** Blocks come back as they finish; the driver commits them in input order to the
  run's result store (:mod:`jurist.io.parts`), and keeps a block that finished ahead of an unfinished one in
  ``<output>.blocks/`` until its turn. A rerun skips every committed or kept block: a killed run loses only
  the blocks in flight.

Limits: the driver holds the input's blocks in Ray's object store (which spills to disk); a panel of several
models is refused (run one job per model); ``retry_failed`` runs locally only.
"""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from typing_extensions import Unpack

from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.engine.core import Engine
from jurist.engine.plan import chunk_row_ids, group_by_backend
from jurist.engine.run import BatchSource, FileRunOptions, RunContext, run_file
from jurist.engine.spec import Selection
from jurist.engine.summary import RunSummary
from jurist.errors import BackendError, ConfigError, JuristError
from jurist.io.sources import Batch, Chunk, RowSource

BLOCKS_MANIFEST = "_blocks.json"


def blocks_dir(output: Path) -> Path:
    return output.with_name(output.name + ".blocks")


class BlockStore:
    """Finished blocks that wait for an earlier one before they can be committed, one Parquet file each."""

    def __init__(self, output: Path, run_id: str, schema: pa.Schema) -> None:
        self.dir = blocks_dir(output)
        self.schema = schema
        manifest = self.dir / BLOCKS_MANIFEST
        known = json.loads(manifest.read_text()) if manifest.is_file() else {}
        if known.get("fingerprint") != run_id:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps({"fingerprint": run_id}))

    def _path(self, start: int, rows: int) -> Path:
        return self.dir / f"block-{start:012d}-{rows}.parquet"

    def has(self, start: int, rows: int) -> bool:
        return self._path(start, rows).is_file()

    def put(self, start: int, batch: pa.RecordBatch) -> None:
        path = self._path(start, batch.num_rows)
        temporary = path.with_name("." + path.name)
        pq.write_table(pa.Table.from_batches([batch], schema=self.schema), temporary)
        temporary.replace(path)

    def read(self, start: int, rows: int) -> pa.RecordBatch:
        """A kept block; it stays on disk until :meth:`discard` (after its rows are committed)."""
        table = pq.read_table(self._path(start, rows), schema=self.schema)
        return table.combine_chunks().to_batches()[0] if table.num_rows else self.schema.empty_table()

    def discard(self, start: int, rows: int) -> None:
        """Drop a block whose rows the result store has committed (a rerun skips committed rows, so a block
        left behind by a kill between the commit and this call is never used)."""
        self._path(start, rows).unlink(missing_ok=True)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


class _ChunkSource(RowSource):
    """One chunk as a source: what an actor's engine judges."""

    def __init__(self, schema: pa.Schema, source: str, chunk: Chunk) -> None:
        self.schema, self.source, self.chunk, self.total = schema, source, chunk, chunk.num_rows

    def batches(self) -> Iterator[Batch]:
        yield Batch(self.chunk.table, self.chunk.errors, self.chunk.numbers, self.chunk.records)

    def chunks(self, size: int, skip: int = 0) -> Iterator[Chunk]:
        yield self.chunk


def _ipc(table: pa.Table | pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write(table)
    return bytes(sink.getvalue().to_pybytes())


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.BufferReader(data)).read_all()


class JudgeBlocks:
    """A Ray Data actor: one engine, loaded once, judging one block per call (``batch_size=1``)."""

    def __init__(self, payload: bytes) -> None:
        spec = pickle.loads(payload)
        self.engine = Engine.from_spec(spec["run"], backend_factory=spec["factory"])
        self.schema: pa.Schema = spec["schema"]
        self.source: str = spec["source"]

    def __call__(self, batch: pa.Table) -> pa.Table:
        out: dict[str, list[Any]] = {"start": [], "rows": [], "batch": [], "outputs": []}
        for item in batch.to_pylist():
            errors = {int(k): v for k, v in json.loads(item["errors"]).items()}
            records = pickle.loads(item["records"]) if item["records"] is not None else None
            chunk = Chunk(_from_ipc(item["table"]), item["start"], errors, item["numbers"], records)
            source = _ChunkSource(self.schema, self.source, chunk)
            assembler = self.engine.assembler(source)
            sent = self.engine.tally.requests
            for judged, outputs, models in self.engine.judged(source):
                provenance = {j.name: j.provenance(models[j.name]) for j in self.engine.judges}
                ids = chunk_row_ids(judged, self.engine.id_column)
                record = assembler.batch(judged.table, ids, outputs, provenance)
                extra = (outputs, models, self.engine.describe_models(), self.engine.tally.requests - sent)
                out["start"].append(judged.start)
                out["rows"].append(judged.num_rows)
                out["batch"].append(_ipc(record))
                out["outputs"].append(pickle.dumps(extra))
        return pa.table(out, schema=_RESULT_SCHEMA)

    def __del__(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.close()


_RESULT_SCHEMA = pa.schema(
    [("start", pa.int64()), ("rows", pa.int64()), ("batch", pa.binary()), ("outputs", pa.binary())]
)


class RayRun:
    """Run an engine's judges on Ray. ``address``: ``local`` (or None) starts a local Ray instance, ``auto``
    joins the cluster this machine belongs to, anything else is a cluster address (``ray://host:10001`` or
    ``host:6379``); when Ray is already initialised in this process, that instance is used.

    ``concurrency``: actors (default: one per GPU of the cluster, else 2); ``num_gpus``: GPUs per actor
    (default 1 on a cluster with GPUs, else 0); ``num_cpus``: CPUs per actor; ``backend_factory``: a picklable
    ``(InferenceConfig) -> Backend`` (default: the engine's, i.e. ``create_backend`` unless it was given
    another); ``runtime_env``: passed to ``ray.init``.
    """

    def __init__(
        self,
        engine: Engine,
        address: str | None = None,
        *,
        concurrency: int | None = None,
        actors: int | None = None,
        num_gpus: float | None = None,
        num_cpus: float = 1.0,
        backend_factory: Callable[[InferenceConfig], Backend] | None = None,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        self.engine = engine
        self.address = None if address in (None, "", "local") else address
        self.concurrency = concurrency or actors
        self.num_gpus = num_gpus
        self.num_cpus = num_cpus
        self.backend_factory = backend_factory
        self.runtime_env = runtime_env
        self.sent_blocks = 0  # blocks given to Ray by the last run_file (skipped ones not counted)

    def _connect(self) -> Any:
        try:
            import ray
        except ImportError as exc:
            raise BackendError("--ray needs Ray: pip install 'jurist[ray]'") from exc
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.runtime_env:
                kwargs["runtime_env"] = self.runtime_env
            try:
                ray.init(address=self.address, **kwargs)
            except Exception as exc:
                raise BackendError(
                    f"could not reach Ray at {self.address or 'a new local instance'}: {exc}"
                ) from exc
        return ray

    def _payload(self, schema: pa.Schema, source: str) -> bytes:
        engine = self.engine
        if engine.shared_backend is not None:
            raise JuristError("on Ray every actor makes its own backend: pass backend_factory, not a backend")
        if len(group_by_backend(engine.judges)) > 1:
            raise JuristError(
                "a panel of several models cannot run on Ray yet (each actor would reload every model per "
                "block); run one job per model, or run the panel without --ray"
            )

        spec = {
            "run": engine.spec(Selection(source)),  # the judges and options; the rows come in blocks
            "factory": self.backend_factory or engine.backend_factory,
            "schema": schema,
            "source": source,
        }
        try:
            import ray.cloudpickle as cloudpickle
        except ImportError as exc:
            raise BackendError("--ray needs Ray: pip install 'jurist[ray]'") from exc
        return bytes(cloudpickle.dumps(spec))

    def run_file(
        self, input_path: Any, output_path: str | Path, **options: Unpack[FileRunOptions]
    ) -> RunSummary:
        """As :meth:`Engine.run_file`, on Ray: the same output file (the same fingerprint: either resumes
        what the other started), resumable per block. ``repair`` judges a damaged part's rows again on this
        machine's engine."""
        return run_file(self.engine, self.engine.spec, RayBatches(self), input_path, output_path, options)

    def _results(self, items: list[dict[str, Any]], payload: bytes) -> Iterator[dict[str, Any]]:
        """Each block's result as its actor finishes it (any order)."""
        if not items:
            return
        ray = self._connect()
        resources = ray.cluster_resources()
        gpus = float(resources.get("GPU", 0))
        num_gpus = self.num_gpus if self.num_gpus is not None else (1.0 if gpus else 0.0)
        concurrency = self.concurrency or (int(gpus // num_gpus) if num_gpus else 2)
        cpus = float(resources.get("CPU", 0))
        short = [
            f"{concurrency} x {need:g} {name} (the cluster has {have:g})"
            for name, need, have in (("GPU", num_gpus, gpus), ("CPU", self.num_cpus, cpus))
            if concurrency * need > have
        ]
        if short:  # Ray would wait for resources that never come
            raise ConfigError(f"the actor pool needs {'; '.join(short)}: lower --data-parallel")
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = False
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        judged = dataset.map_batches(
            JudgeBlocks,
            batch_size=1,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=max(1, min(concurrency, len(items)))),
            fn_constructor_kwargs={"payload": payload},
            num_gpus=num_gpus,
            num_cpus=self.num_cpus,
        )
        yield from judged.iter_rows()


class RayBatches(BatchSource):
    """A run's batches judged by a Ray actor pool (see :class:`RayRun`): blocks come back in any order
    and are yielded in input order, a block that finished early waiting in ``<output>.blocks/``."""

    def __init__(self, ray: RayRun) -> None:
        self.ray = ray
        self.kept: BlockStore | None = None
        self.pending: dict[int, int] = {}  # start -> rows, of every block not yet committed
        self.items: list[dict[str, Any]] = []
        self.described: dict[str, Any] = {}

    def start(self, run: RunContext) -> int:
        if run.overwrite:
            shutil.rmtree(blocks_dir(run.output), ignore_errors=True)
        self.kept = BlockStore(run.output, run.run_id, run.schema)
        chunk_size = run.engine.chunk_size
        for chunk in run.source.chunks(chunk_size, skip=run.store.rows):
            self.pending[chunk.start] = chunk.num_rows
            if not self.kept.has(chunk.start, chunk.num_rows):
                self.items.append(
                    {
                        "start": chunk.start,
                        "table": _ipc(chunk.table),
                        "errors": json.dumps({str(k): v for k, v in chunk.errors.items()}),
                        "numbers": list(chunk.input_numbers) if chunk.input_numbers is not None else None,
                        # the rows as read, when they were records: what judges render (never unified)
                        "records": pickle.dumps(list(chunk.records)) if chunk.records is not None else None,
                    }
                )
        self.ray.sent_blocks = len(self.items)
        sent = sum(self.pending[item["start"]] for item in self.items)
        return run.store.rows + sum(self.pending.values()) - sent

    def batches(self, run: RunContext) -> Iterator[pa.RecordBatch]:
        kept, pending, store = self.kept, self.pending, run.store
        assert kept is not None, "start() first"

        def ready() -> Iterator[pa.RecordBatch]:
            while store.rows in pending and kept.has(store.rows, pending[store.rows]):
                start = store.rows
                rows = pending.pop(start)
                yield kept.read(start, rows)  # the run commits it before asking again
                kept.discard(start, rows)  # only now: a run killed before the commit keeps the block

        yield from ready()
        payload = self.ray._payload(run.source.schema, run.source.source)
        for row in self.ray._results(self.items, payload):
            record = _from_ipc(row["batch"]).combine_chunks().to_batches()
            batch = record[0] if record else run.schema.empty_table().to_batches()[0]
            outputs, models, models_described, requests = pickle.loads(row["outputs"])
            run.summary.add(outputs, models)
            run.summary.requests += requests
            self.described.update(models_described)
            if run.progress is not None:
                run.progress.update(outputs)
            kept.put(row["start"], batch)
            yield from ready()
        if pending:
            first = min(pending)
            raise RuntimeError(f"Ray returned no result for {len(pending)} block(s) starting at {first}")

    def models(self, run: RunContext) -> dict[str, Any]:
        return self.described

    def done(self, run: RunContext) -> None:
        if self.kept is not None:
            self.kept.remove()
