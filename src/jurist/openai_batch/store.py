"""A batch run's output lines, committed per chunk and merged into the output file at the end.

The lines of each finished chunk are committed through jurist's result store (:mod:`jurist.io.parts`:
Parquet parts plus a manifest in ``<output>.parts/``, each written atomically), so a ``kill -9`` loses at
most the chunks in flight, and a rerun of the same run (same input file and options: the fingerprint)
resumes after the committed lines. :func:`finish` writes the output file (JSON Lines, in input order)
atomically, with the run's metadata beside it in ``<output>.meta.json`` (what ``jurist info`` reads).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from jurist.io.parts import FINGERPRINT_KEY, OutputError, OutputPlan, ResultStore, check_output, meta_path

SCHEMA = pa.schema([("line", pa.int64()), ("custom_id", pa.string()), ("output", pa.string())])


def check_batch_output(output: Path, fingerprint: str, *, overwrite: bool = False) -> OutputPlan:
    """What a run does with ``output`` (start, resume, complete), checked before any model loads."""
    if output.suffix.lower() != ".jsonl":
        raise OutputError("a batch output is JSON Lines: give a name ending in .jsonl", source=str(output))
    return check_output(output, fingerprint, overwrite=overwrite)


def open_store(output: Path, fingerprint: str, metadata: Mapping[str, Any]) -> ResultStore:
    """The run's committed lines (``store.rows`` of them so far)."""
    return ResultStore(output, SCHEMA, fingerprint, metadata)


def commit(store: ResultStore, lines: list[tuple[int, str | None, dict[str, Any]]]) -> None:
    """Commit one chunk's output lines: (input line number, custom id, output line)."""
    batch = pa.record_batch(
        [
            pa.array([n for n, _, _ in lines], pa.int64()),
            pa.array([c for _, c, _ in lines], pa.string()),
            pa.array([json.dumps(o, ensure_ascii=False) for _, _, o in lines], pa.string()),
        ],
        schema=SCHEMA,
    )
    store.commit(batch)


def finish(store: ResultStore, metadata: Mapping[str, Any]) -> None:
    """Write the output file from the committed lines (atomically) and its metadata; remove the parts."""
    full = {**store.metadata, **metadata, FINGERPRINT_KEY: store.fingerprint}

    def lines(handle: IO[bytes]) -> None:
        for batch in store.batches():
            for text in batch.column("output").to_pylist():
                handle.write(text.encode("utf-8") + b"\n")

    _atomic(store.output, lines)
    text = json.dumps(full, indent=2, default=str).encode()
    _atomic(meta_path(store.output), lambda handle: handle.write(text))
    shutil.rmtree(store.dir, ignore_errors=True)


def _atomic(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write ``target`` through a temporary file in its folder, flushed to disk, then renamed into place."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    path = Path(temporary)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        path.replace(target)
    finally:
        path.unlink(missing_ok=True)
