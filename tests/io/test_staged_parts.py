"""Parts written by another process (a data-parallel worker) and committed by the run's: renamed into place
in their turn, refused out of turn, and swept away when a killed run's store is opened again."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jurist.io.parts import STAGED, ResultStore, parts_dir


def batch(start: int, rows: int) -> pa.RecordBatch:
    return pa.record_batch({"row_id": [str(i) for i in range(start, start + rows)]})


def test_staged_parts_commit_in_their_turn_and_read_as_written_here(tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    schema = batch(0, 1).schema
    store = ResultStore(output, schema, "run-1", {"judges": []})
    writer = pickle.loads(pickle.dumps(store.writer))  # what a worker process gets
    second = writer.stage(batch(3, 4), 3)
    first = writer.stage(batch(0, 3), 0)
    with pytest.raises(ValueError, match=r"rows 3\+ cannot follow 0 committed rows"):
        store.commit_staged(second)
    store.commit_staged(first)
    store.commit_staged(second)
    assert store.rows == 7 and not list(parts_dir(output).glob(f"{STAGED}*"))
    here = tmp_path / "here.parquet"
    local = ResultStore(here, schema, "run-1", {"judges": []})
    local.commit(batch(0, 3))
    local.commit(batch(3, 4))
    for name in ("part-000000.parquet", "part-000001.parquet"):  # the same files, metadata included
        assert pq.read_table(parts_dir(output) / name).equals(pq.read_table(parts_dir(here) / name))
        assert (
            pq.read_schema(parts_dir(output) / name).metadata
            == pq.read_schema(parts_dir(here) / name).metadata
        )
    # a worker of a killed run left a staged part behind: the next run's store sweeps it away
    writer.stage(batch(7, 2), 7)
    again = ResultStore(output, schema, "run-1", {"judges": []})
    assert again.rows == 7 and not list(parts_dir(output).glob(f"{STAGED}*"))
