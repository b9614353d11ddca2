"""A results dataset: one Parquet shard per unit of work under a folder or prefix (local or URL), and a
manifest at its root.

``<root>/<unit>.parquet`` holds one unit's results (:mod:`jurist.io.units` names it after its input shard);
``<root>/_manifest.json`` the run's fingerprint and metadata and each unit's status (``ok``, ``bad``: its
shard could not be read, ``skipped``), rows and counts; ``<root>/_jurist.lease`` (or, on a local disk, the
lock file ``_jurist.lock``) says which run is writing. Names that start with ``_`` or ``.`` are not data:
``pyarrow.dataset.dataset(root)`` and DuckDB's ``read_parquet('<root>/**/*.parquet')`` skip them.

**Commit.** Object stores have no rename, so a unit's shard is written whole and appears whole: on a local
disk under a hidden name, renamed into place; at a URL from a local spool file, in one upload (an object
appears complete or not at all). The shard's footer holds the unit's manifest entry (the run's fingerprint,
the unit, its rows and counts), written in that same file, so a unit is committed exactly when its shard is
at its name: readers, and a rerun, trust nothing else. A retried unit rewrites the same name. The driver
gathers the entries into ``_manifest.json`` as units finish (at most every few seconds, and at the end);
a rerun reads the footers of the shards the manifest does not list yet.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jurist.errors import InputError
from jurist.io.location import Place, is_url
from jurist.io.parts import OutputError

logger = logging.getLogger("jurist")

MANIFEST = "_manifest.json"
SHARDS = ".shards"  # a results file's dataset, beside it while its run goes on (<output>.shards/)
LEASE = "_jurist.lease"
UNIT_KEY = b"jurist.unit"  # in each shard's footer: its manifest entry
FLUSH_S = 5.0  # the manifest is rewritten at most this often while a run goes on
LEASE_TTL_S = 60.0  # a lease not renewed for this long belongs to a run that is gone


def shard_file(name: str) -> str:
    return f"{name}.parquet"


@dataclass(frozen=True)
class ShardWriter:
    """Writes a run's unit shards from any process (it pickles; no credentials in it): the dataset at
    ``root``, shards of ``schema`` (with the run's metadata), stamped with the run's ``fingerprint``."""

    root: Place
    schema: pa.Schema
    fingerprint: str

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[ShardFile]:
        """A unit's shard being written: :meth:`ShardFile.write` its batches, :meth:`ShardFile.commit` it.
        Left without a commit (an error, a bad shard), nothing appears."""
        target = self.root.child(shard_file(name))
        local = target.local
        if local is not None:
            local.parent.mkdir(parents=True, exist_ok=True)
            spool = local.with_name(f".{local.name}.{uuid.uuid4().hex[:8]}")
        else:
            handle, path = tempfile.mkstemp(prefix="jurist-shard-", suffix=".parquet")
            os.close(handle)
            spool = Path(path)
        shard = ShardFile(self, name, target, spool)
        try:
            yield shard
        finally:
            shard.close()
            spool.unlink(missing_ok=True)


class ShardFile:
    """One unit's shard being written (see :meth:`ShardWriter.open`)."""

    def __init__(self, writer: ShardWriter, name: str, target: Place, spool: Path) -> None:
        self.writer, self.name, self.target, self.spool = writer, name, target, spool
        self.rows = 0
        self._parquet: Any = pq.ParquetWriter(spool, writer.schema, compression="zstd")

    def write(self, batch: pa.RecordBatch) -> None:
        self._parquet.write_batch(batch)
        self.rows += batch.num_rows

    def commit(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Close the shard with its manifest ``entry`` (fingerprint, name, rows added) in its footer and put
        it at its name in one step; the entry as written."""
        full = {**entry, "fingerprint": self.writer.fingerprint, "unit": self.name, "rows": self.rows}
        self._parquet.add_key_value_metadata({UNIT_KEY: json.dumps(full, default=str)})
        self._parquet.close()
        self._parquet = None
        local = self.target.local
        if local is not None:
            with self.spool.open("rb") as written:
                os.fsync(written.fileno())
            self.spool.replace(local)
        else:
            fs, path = self.target.fs()
            with self.spool.open("rb") as source, fs.open_output_stream(path, compression=None) as sink:
                while block := source.read(1 << 22):
                    sink.write(block)
        return full

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None


class ResultsDataset:
    """The driver's side of a results dataset at ``root``: what it holds, its manifest, committed units."""

    def __init__(self, root: Place) -> None:
        self.root = root
        self._written = 0.0
        self.entries: dict[str, dict[str, Any]] = {}
        self.head: dict[str, Any] = {}

    # ------------------------------------------------------------------------------- reading
    def manifest(self) -> dict[str, Any] | None:
        fs, path = self.root.fs()
        try:
            with fs.open_input_stream(posixpath.join(path, MANIFEST)) as stream:
                value = json.loads(stream.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise OutputError(f"its {MANIFEST} cannot be read: {exc}", source=self.root.url) from exc
        return value if isinstance(value, dict) else None

    def shards(self) -> dict[str, str]:
        """The shards present, by unit name: their paths in the filesystem."""
        import pyarrow.fs as pafs

        fs, path = self.root.fs()
        found = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        out = {}
        for info in found:
            relative = posixpath.relpath(info.path, path)
            hidden = any(p.startswith(("_", ".")) for p in relative.split("/"))
            if info.type == pafs.FileType.File and relative.endswith(".parquet") and not hidden:
                out[relative[: -len(".parquet")]] = info.path
        return out

    def committed(
        self, fingerprint: str, names: Iterable[str] | None = None, present: Mapping[str, str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """The entries of the units committed by the run ``fingerprint`` (among ``names``): each shard at its
        name whose entry (in the manifest, else in its footer) names that run. ``present``: :meth:`shards`,
        when the caller has listed them already."""
        known = (self.manifest() or {}).get("units", {})
        present = self.shards() if present is None else present
        wanted = present.keys() if names is None else [n for n in names if n in present]
        out = {}
        fs, _ = self.root.fs()
        for name in wanted:
            entry = known.get(name)
            if entry is None or entry.get("status") != "ok":
                try:
                    footer = pq.read_metadata(present[name], filesystem=fs).metadata or {}
                except (OSError, pa.ArrowException):
                    continue  # not a whole shard: judged again
                raw = footer.get(UNIT_KEY)
                entry = {**json.loads(raw), "status": "ok"} if raw else None
            if entry is not None and entry.get("fingerprint") == fingerprint:
                out[name] = entry
        return out

    # ------------------------------------------------------------------------------- writing
    def check(self, fingerprint: str, *, overwrite: bool = False) -> str:
        """What a run ``fingerprint`` does here: ``start`` (nothing here, or ``overwrite`` removed another
        run's results), ``resume`` or ``complete``. Refused (:class:`OutputError`): another run's results,
        or a folder of files that are not jurist's."""
        manifest = self.manifest()
        if manifest is None:
            if self.shards():
                raise OutputError(
                    f"holds Parquet files but no {MANIFEST}: not a jurist results dataset; choose another "
                    "output",
                    source=self.root.url,
                )
            return "start"
        if manifest.get("fingerprint") == fingerprint and not overwrite:
            return "complete" if manifest.get("status") == "complete" else "resume"
        if not overwrite:
            raise OutputError(
                "holds the results of a different run (other judges, input or options); pass --overwrite to "
                "replace them, or choose another output",
                source=self.root.url,
            )
        self.remove()
        return "start"

    def prune(self, names: Iterable[str], present: Mapping[str, str] | None = None) -> None:
        """Remove the shards of units not in ``names`` (a file gone from the input, or sliced otherwise)."""
        keep = set(names)
        fs, _ = self.root.fs()
        for name, path in (self.shards() if present is None else present).items():
            if name not in keep:
                logger.info("%s: no such unit in this run's input; its shard is removed", path)
                fs.delete_file(path)

    def remove(self) -> None:
        """Remove the shards and the manifest (``--overwrite``)."""
        self.prune(())
        fs, path = self.root.fs()
        with contextlib.suppress(FileNotFoundError):
            fs.delete_file(posixpath.join(path, MANIFEST))

    def begin(self, fingerprint: str, metadata: Mapping[str, Any], entries: Mapping[str, Any]) -> None:
        """Start (or resume) writing: the manifest with the run's fingerprint and metadata and the units
        already committed."""
        self.head = {"fingerprint": fingerprint, "status": "running", "metadata": dict(metadata)}
        self.entries = {name: dict(entry) for name, entry in entries.items()}
        self.flush(force=True)

    def record(self, name: str, entry: Mapping[str, Any]) -> None:
        """A unit's entry (committed, bad or skipped); the manifest is rewritten every few seconds."""
        self.entries[name] = dict(entry)
        self.flush()

    def flush(self, *, force: bool = False, **extra: Any) -> None:
        if not force and time.monotonic() - self._written < FLUSH_S:
            return
        ok = [e for e in self.entries.values() if e.get("status") == "ok"]
        body = {**self.head, **extra, "rows": sum(int(e["rows"]) for e in ok), "units": self.entries}
        _write_text(self.root.child(MANIFEST), json.dumps(body, indent=1, default=str) + "\n")
        self._written = time.monotonic()

    def finish(self, metadata: Mapping[str, Any]) -> None:
        """The run is over: the manifest says so, with the metadata known at the end."""
        self.head["metadata"] = {**self.head["metadata"], **metadata}
        self.flush(force=True, status="complete")

    # ------------------------------------------------------------------------------- as a table
    def files(self, *, needed: bool = True) -> tuple[list[str], dict[str, Any]]:
        """The committed shards' paths, in the order of the units, and the manifest; ``needed``: with none
        committed, an :class:`InputError`."""
        manifest = self.manifest()
        if manifest is None:
            raise InputError(f"no {MANIFEST}: not a jurist results dataset", source=self.root.url)
        present = self.shards()
        done = self.committed(str(manifest.get("fingerprint")), present=present)
        files = [present[n] for n in manifest.get("units", {}) if n in done]
        if needed and not files:
            raise InputError("holds no committed shards yet", source=self.root.url)
        return files, manifest

    def read(self, columns: Sequence[str] | None = None) -> tuple[pa.Table, dict[str, Any]]:
        """The committed shards' rows (in the order of the units), and the run's metadata."""
        import pyarrow.dataset as pads

        files, manifest = self.files()
        dataset = pads.dataset(files, format="parquet", filesystem=self.root.fs()[0])
        wanted = None if columns is None else [c for c in columns if c in dataset.schema.names]
        metadata = dict(manifest.get("metadata", {}), fingerprint=manifest.get("fingerprint"))
        return dataset.to_table(columns=wanted), metadata


def committed_units(output: str | Path) -> str | None:
    """What a run into ``output`` (a results dataset, or a file whose dataset is still beside it) has
    committed, in words; None when it is not a dataset run's output."""
    for candidate in (str(output), str(output) + SHARDS):
        if is_results_dataset(candidate):
            _, found = dataset_metadata(candidate)
            rows, units = found["committed_rows"], sum(found["unit_statuses"].values())
            return f"{rows} rows are committed in {found['parts']} of {units} unit shard(s) in {candidate}"
    return None


def dataset_metadata(text: str | Path) -> tuple[bool, dict[str, Any]]:
    """Whether a results dataset's run is complete, and its metadata with what is committed (``jurist
    info``): the rows and units committed, in the shape a running results file's metadata has."""
    manifest = ResultsDataset(Place.of(str(text))).manifest() or {}
    units = manifest.get("units", {})
    statuses: dict[str, int] = {}
    for entry in units.values():
        statuses[entry.get("status", "?")] = statuses.get(entry.get("status", "?"), 0) + 1
    metadata = {
        **manifest.get("metadata", {}),
        "fingerprint": manifest.get("fingerprint"),
        "committed_rows": manifest.get("rows", 0),
        "parts": statuses.get("ok", 0),
        "unit_statuses": statuses,
    }
    return manifest.get("status") == "complete", metadata


def is_results_dataset(text: str | Path) -> bool:
    """Whether ``text`` is a results dataset (a folder or prefix with jurist's manifest)."""
    text = str(text)
    if not is_url(text) and not Path(text).is_dir():
        return False
    try:
        return ResultsDataset(Place.of(text)).manifest() is not None
    except (InputError, OSError):
        return False


def _write_text(place: Place, text: str) -> None:
    local = place.local
    if local is not None:
        from jurist.io.parts import write_atomic

        local.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(local, lambda path: path.write_text(text, encoding="utf-8"))
        return
    fs, path = place.fs()
    with fs.open_output_stream(path, compression=None) as sink:
        sink.write(text.encode("utf-8"))


class Lease:
    """Which run writes a results dataset at a URL (object stores have no lock): ``_jurist.lease`` holds its
    fingerprint, host, pid and the time it was last renewed (every quarter of ``ttl``). A second run is
    refused while the lease is live: renewed within ``ttl``, or, from the same host, held by a live
    process. After writing its lease a run reads it back a moment later, so that of two runs that start
    together only one goes on."""

    def __init__(self, root: Place, fingerprint: str, ttl: float = LEASE_TTL_S, settle: float = 1.0) -> None:
        self.place, self.fingerprint, self.ttl, self.settle = root.child(LEASE), fingerprint, ttl, settle
        self.token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> dict[str, Any] | None:
        try:
            with self.place.open_input_stream() as stream:
                value = json.loads(stream.read())
        except (FileNotFoundError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _live(self, held: Mapping[str, Any]) -> bool:
        if held.get("token") == self.token:
            return False
        if held.get("host") == socket.gethostname():
            try:
                os.kill(int(held.get("pid", 0)), 0)
            except (OSError, ValueError):
                return False
            return True
        return time.time() - float(held.get("renewed", 0)) < self.ttl

    def _refuse(self, held: Mapping[str, Any]) -> OutputError:
        age = time.time() - float(held.get("renewed", 0))
        return OutputError(
            f"another run is writing this output: pid {held.get('pid')} on host {held.get('host')}, started "
            f"{held.get('started')}, its lease renewed {age:.0f} s ago. Wait for it to end, or stop it (its "
            f"committed units are kept, and a rerun resumes); a lease that is not renewed lapses after "
            f"{self.ttl:.0f} s ({self.place})",
            source=str(self.place).rsplit("/", 1)[0],
        )

    def _write(self) -> None:
        info = {
            "token": self.token,
            "fingerprint": self.fingerprint,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": getattr(self, "started", None),
            "renewed": time.time(),
        }
        _write_text(self.place, json.dumps(info))

    def acquire(self) -> None:
        held = self._read()
        if held is not None and self._live(held):
            raise self._refuse(held)
        self.started = datetime.now(UTC).isoformat(timespec="seconds")
        self._write()
        time.sleep(self.settle)
        held = self._read()
        if held is not None and held.get("token") != self.token:
            raise self._refuse(held)
        self._thread = threading.Thread(target=self._renew, daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            with contextlib.suppress(OSError):
                self._write()

    def release(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(10)
        self._thread = None
        held = self._read()
        if held is not None and held.get("token") == self.token:
            fs, path = self.place.fs()
            with contextlib.suppress(OSError):
                fs.delete_file(path)
