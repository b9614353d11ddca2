"""Datasets of several shards for the tests of dataset runs: rows whose judgments depend on the row alone
(scaling_backends answers from the prompt), written as JSONL.gz or Parquet shards, locally or at a URL."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def make_rows(n: int, start: int = 0, *, ids: bool = True) -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + n):
        row = {"question": "q" * (i % 7 + 1) + str(i), "response_a": "first", "response_b": "second"}
        out.append({"id": f"row-{i:06d}", **row} if ids else row)
    return out


def shard_bytes(rows: Sequence[dict[str, Any]], fmt: str, row_group: int = 1000) -> bytes:
    """``rows`` as one shard's bytes: ``jsonl.gz``, ``jsonl`` or ``parquet`` (``row_group`` rows a group)."""
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(list(rows)), sink, row_group_size=row_group)
        return sink.getvalue()
    text = "".join(json.dumps(r) + "\n" for r in rows).encode()
    return gzip.compress(text, mtime=0) if fmt == "jsonl.gz" else text


def write_shards(
    root: str, shards: int, per_shard: int, fmt: str = "jsonl.gz", *, ids: bool = True, row_group: int = 1000
) -> list[dict[str, Any]]:
    """``shards`` shards of ``per_shard`` rows under ``root`` (a folder, or a URL: written through pyarrow's
    filesystem), named ``part-00000.<fmt>``...; every row, in order."""
    import pyarrow.fs as pafs

    every: list[dict[str, Any]] = []
    fs, base = pafs.FileSystem.from_uri(root) if "://" in root else (pafs.LocalFileSystem(), root)
    if "://" not in root:
        Path(root).mkdir(parents=True, exist_ok=True)
    for number in range(shards):
        rows = make_rows(per_shard, number * per_shard, ids=ids)
        every.extend(rows)
        with fs.open_output_stream(f"{base.rstrip('/')}/part-{number:05d}.{fmt}", compression=None) as sink:
            sink.write(shard_bytes(rows, fmt, row_group))
    return every


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
