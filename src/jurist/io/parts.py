"""Results that survive a crash: Parquet parts plus a manifest, committed atomically per chunk.

While a run goes on, its results live in ``<output>.parts/``: one Parquet file per committed chunk
(``part-000000.parquet``, ...) and ``_manifest.json``, which lists the committed parts, the rows they hold
and the run's fingerprint. A part is written to a temporary name, flushed to disk and renamed; only then
does the manifest (written the same way) name it. A ``kill -9`` therefore loses at most the chunk in
flight, and everything committed is readable at any time (``pyarrow.dataset.dataset(dir)``).

When the run ends, :meth:`ResultStore.finish` merges the parts into the output file (Parquet, Arrow IPC or
JSONL, by extension; JSONL's run metadata goes beside it in ``<output>.meta.json``), atomically, and
removes the parts. :func:`check_output` decides, before any model loads, what a run may do with an output
path: start, resume, report it complete, or refuse.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from jurist.errors import InputError
from jurist.io.disk import space_for
from jurist.io.formats import output_format
from jurist.io.writers import OutputWriter

MANIFEST = "_manifest.json"  # a leading "_" keeps it out of pyarrow.dataset.dataset(dir)
FINGERPRINT_KEY = "fingerprint"
PART_KEY = b"jurist.part"  # in each part's schema: the run's fingerprint, the part's first row and its rows
Action = Literal["start", "resume", "complete"]


class OutputError(InputError):
    """An output path that a run cannot write (a folder, no permission, another run's results)."""


@dataclass(frozen=True)
class OutputPlan:
    """What a run does with its output: ``start`` afresh, ``resume`` after ``committed`` rows, or find it
    ``complete`` already."""

    action: Action
    committed: int = 0


def parts_dir(output: Path) -> Path:
    return output.with_name(output.name + ".parts")


def meta_path(output: Path) -> Path:
    """Where a JSONL output's run metadata goes (Parquet and Arrow files hold it in their schema)."""
    return output.with_name(output.name + ".meta.json")


def read_metadata(output: Path) -> dict[str, Any] | None:
    """The run metadata of a finished output file, or None when it has none."""
    fmt = output_format(output)
    if fmt == "jsonl":
        sidecar = meta_path(output)
        return json.loads(sidecar.read_text(encoding="utf-8")) if sidecar.is_file() else None
    schema = pq.read_schema(output) if fmt == "parquet" else pa.ipc.open_file(str(output)).schema
    raw = (schema.metadata or {}).get(b"jurist")
    return json.loads(raw) if raw else None


def running_metadata(output: Path) -> dict[str, Any] | None:
    """The metadata of a run still going on (or interrupted) into ``output``, with the rows committed."""
    manifest = _manifest(parts_dir(output))
    if manifest is None:
        return None
    return {
        **manifest.get("metadata", {}),
        "committed_rows": manifest.get("rows", 0),
        "parts": len(manifest.get("parts", [])),
    }


def _manifest(directory: Path) -> dict[str, Any] | None:
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def check_output(output: Path, fingerprint: str, *, overwrite: bool = False) -> OutputPlan:
    """Check an output path before any model loads, and say what the run does with it.

    Refused (:class:`OutputError`, naming the path): an unknown extension, a folder, a folder that cannot be
    created or written, and results of a different run (unless ``overwrite``: they are then removed).
    """
    source = str(output)
    if output.is_dir():
        raise OutputError("is a folder; give a file name such as results.parquet", source=source)
    output_format(output)
    parent = output.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder {parent}: {exc.strerror or exc}", source=source) from exc
    try:
        handle, probe = tempfile.mkstemp(prefix=".jurist-probe-", dir=parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(
            f"the folder {parent} is not writable: {exc.strerror or exc}", source=source
        ) from exc
    if output.exists() and not os.access(output, os.W_OK):
        raise OutputError("exists and is not writable", source=source)
    directory = parts_dir(output)
    manifest = _manifest(directory)
    if manifest is not None and manifest.get(FINGERPRINT_KEY) == fingerprint and not overwrite:
        return OutputPlan("resume", int(manifest.get("rows", 0)))
    if output.exists() and not overwrite:
        try:
            metadata = read_metadata(output)
        except (OSError, ValueError, pa.ArrowInvalid):
            metadata = None
        if metadata is not None and metadata.get(FINGERPRINT_KEY) == fingerprint:
            return OutputPlan("complete")
        raise OutputError(
            "already exists and holds the results of a different run (other judges, input or options); "
            "pass --overwrite to replace it, or choose another output",
            source=source,
        )
    if directory.exists():
        if manifest is not None and not overwrite:
            raise OutputError(
                f"{directory} holds the partial results of a different run; pass --overwrite to discard them",
                source=source,
            )
        shutil.rmtree(directory)
    if overwrite and output.exists():
        output.unlink()
        meta_path(output).unlink(missing_ok=True)
    return OutputPlan("start")


STAGED = ".staged-"  # a part written by a data-parallel worker, not yet committed (and not a dataset file)


@dataclass(frozen=True)
class StagedPart:
    """A chunk's part written by another process (:meth:`PartWriter.stage`), waiting for its turn: its file,
    first row and rows, and the columns the run keeps beside its parts (a panel's agreement), if any."""

    path: Path
    start: int
    rows: int
    kept: pa.RecordBatch | None = None


@dataclass(frozen=True)
class PartWriter:
    """Writes a run's parts as its :class:`ResultStore` does, from any process (it pickles): each part a
    Parquet file of the run's schema, stamped with the run's fingerprint, its first row and its rows."""

    dir: Path
    schema: pa.Schema
    fingerprint: str
    output: str

    def write(self, target: Path, batch: pa.RecordBatch, start: int) -> None:
        """Write ``batch`` (rows ``start`` onwards) to ``target``, atomically."""
        own = {FINGERPRINT_KEY: self.fingerprint, "start": start, "rows": batch.num_rows}
        schema = self.schema.with_metadata({**(self.schema.metadata or {}), PART_KEY: json.dumps(own)})
        table = pa.Table.from_batches([batch], schema=self.schema).replace_schema_metadata(schema.metadata)
        with space_for(target, table.nbytes, "a committed part", source=self.output):
            write_atomic(target, lambda path: pq.write_table(table, path, compression="zstd"))

    def stage(self, batch: pa.RecordBatch, start: int, kept: pa.RecordBatch | None = None) -> StagedPart:
        """Write a chunk's part under a staging name, for the run's process to commit in its turn."""
        path = self.dir / f"{STAGED}{start:012d}.parquet"
        self.write(path, batch, start)
        return StagedPart(path, start, batch.num_rows, kept)


class ResultStore:
    """A run's committed results: parts and a manifest in ``<output>.parts/``."""

    def __init__(
        self, output: Path, schema: pa.Schema, fingerprint: str, metadata: Mapping[str, Any]
    ) -> None:
        self.output = output
        self.dir = parts_dir(output)
        self.schema = schema
        self.fingerprint = fingerprint
        self.metadata = dict(metadata)
        self.dir.mkdir(parents=True, exist_ok=True)
        manifest = _manifest(self.dir)
        if manifest is not None and manifest.get(FINGERPRINT_KEY) == fingerprint:
            self.parts: list[dict[str, Any]] = list(manifest.get("parts", []))
        else:
            self.parts = []
        self.rows = sum(int(p["rows"]) for p in self.parts)
        listed = {p["file"] for p in self.parts}
        for stray in self.dir.glob("part-*"):  # written by a run killed before its manifest named it
            if stray.name not in listed:
                stray.unlink()
        for staged in self.dir.glob(f"{STAGED}*"):  # staged by a worker of a run killed before its commit
            staged.unlink()
        self.writer = PartWriter(self.dir, schema, fingerprint, str(output))
        """What writes this store's parts, in this process or in a data-parallel worker."""

    def commit(self, batch: pa.RecordBatch) -> None:
        """Write one chunk's results as a part, then name it in the manifest (each step atomic)."""
        part = {"file": f"part-{len(self.parts):06d}.parquet", "start": self.rows, "rows": batch.num_rows}
        self._write_part(part, batch)
        self._name(part)

    def commit_staged(self, staged: StagedPart) -> None:
        """Commit a part another process wrote (:meth:`PartWriter.stage`): renamed into place, then named in
        the manifest. It must hold the rows right after those committed."""
        if staged.start != self.rows:
            raise ValueError(f"a part of rows {staged.start}+ cannot follow {self.rows} committed rows")
        name = f"part-{len(self.parts):06d}.parquet"
        staged.path.replace(self.dir / name)
        part = {"file": name, "start": self.rows, "rows": staged.rows}
        self._name(part)

    def _name(self, part: dict[str, Any]) -> None:
        """Add a written part to the manifest."""
        self.parts.append(part)
        self.rows += int(part["rows"])
        manifest = {
            FINGERPRINT_KEY: self.fingerprint,
            "rows": self.rows,
            "parts": self.parts,
            "metadata": self.metadata,
        }
        text = json.dumps(manifest, indent=1) + "\n"
        with space_for(self.dir / MANIFEST, len(text), "the manifest", source=str(self.output)):
            write_atomic(self.dir / MANIFEST, lambda path: path.write_text(text))

    def _write_part(self, part: Mapping[str, Any], batch: pa.RecordBatch) -> None:
        self.writer.write(self.dir / part["file"], batch, part["start"])

    def rewrite(self, number: int, batch: pa.RecordBatch) -> None:
        """Write committed part ``number`` again (its rows judged again after it was damaged)."""
        part = self.parts[number]
        if batch.num_rows != part["rows"]:
            raise ValueError(f"{part['file']} holds {part['rows']} rows, not {batch.num_rows}")
        self._write_part(part, batch)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The committed results, in order."""
        for part in self.parts:
            yield from pq.read_table(self.dir / part["file"], schema=self.schema).to_batches()

    def column_parts(self, names: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
        """The committed values of the columns ``names`` (those the schema has), in row order, one part at a
        time (memory holds one part's), read from the parts alone (cheap: Parquet reads only those columns).
        Nothing when the schema has none of them."""
        present = [n for n in names if n in self.schema.names]
        if not present:
            return
        for part in self.parts:
            table = pq.read_table(self.dir / part["file"], columns=present)
            yield {name: table.column(name).to_pylist() for name in present}

    def finish(self, metadata: Mapping[str, Any]) -> None:
        """Merge the parts into the output file (atomically), with the run's metadata; remove the parts."""
        full = {**self.metadata, **metadata, FINGERPRINT_KEY: self.fingerprint}
        text = json.dumps(full, default=str)
        needed = sum((self.dir / part["file"]).stat().st_size for part in self.parts)
        with (
            space_for(self.output, needed, "the merged output"),
            OutputWriter(self.output, self.schema, metadata={"jurist": text}) as writer,
        ):
            for batch in self.batches():
                writer.write(batch)
        if output_format(self.output) == "jsonl":
            write_atomic(
                meta_path(self.output), lambda path: path.write_text(json.dumps(full, indent=2, default=str))
            )
        shutil.rmtree(self.dir, ignore_errors=True)


def write_atomic(target: Path, write: Any) -> None:
    """Write ``target`` through a temporary file in its folder, flushed to disk, then renamed into place."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    path = Path(temporary)
    try:
        write(path)
        with path.open("rb") as written:
            os.fsync(written.fileno())
        path.replace(target)
    finally:
        path.unlink(missing_ok=True)
