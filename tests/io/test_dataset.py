"""A results dataset's commit protocol: a shard appears whole with its manifest entry in its footer, or not at
all; what a rerun trusts; another run's results and foreign folders refused; the lease of a dataset at a
URL."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

from jurist.io.dataset import LEASE, MANIFEST, Lease, ResultsDataset, ShardWriter
from jurist.io.location import Place
from jurist.io.parts import OutputError

SCHEMA = pa.schema([("row_id", pa.string()), ("score", pa.float64())])


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "row_id": [str(i) for i in range(start, start + n)],
            "score": [i / 10 for i in range(start, start + n)],
        },
        schema=SCHEMA,
    )


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_shard_appears_whole_with_its_entry_or_not_at_all(tmp_path: Path) -> None:
    writer = ShardWriter(Place.of(tmp_path), SCHEMA, "fp1")
    with writer.open("sub/a") as shard:
        shard.write(batch(0, 3))
        assert files(tmp_path) == [f"sub/.a.parquet.{shard.spool.name.rsplit('.', 1)[1]}"]  # hidden meanwhile
        shard.write(batch(3, 2))
        entry = shard.commit({"status": "ok", "counts": {"rows": 5}})
    assert entry["rows"] == 5 and entry["fingerprint"] == "fp1" and entry["unit"] == "sub/a"
    with pytest.raises(RuntimeError), writer.open("b") as shard:
        shard.write(batch(0, 1))
        raise RuntimeError("the engine died")
    assert files(tmp_path) == ["sub/a.parquet"]  # nothing of the failed unit, not even its spool
    # readers of the folder see the committed shard, and nothing else
    assert pads.dataset(str(tmp_path), format="parquet").to_table().num_rows == 5
    dataset = ResultsDataset(Place.of(tmp_path))
    assert dataset.committed("fp1") == {
        "sub/a": {**entry, "status": "ok"}
    }  # from the footer: no manifest yet
    assert dataset.committed("another run") == {}


def test_the_manifest_gathers_the_entries_and_a_rerun_trusts_only_whole_shards(tmp_path: Path) -> None:
    root = Place.of(tmp_path)
    writer = ShardWriter(root, SCHEMA, "fp")
    entries = {}
    for name in ("u0", "u1"):
        with writer.open(name) as shard:
            shard.write(batch(0, 2))
            entries[name] = shard.commit({"status": "ok"})
    dataset = ResultsDataset(root)
    dataset.begin(
        "fp", {"judges": []}, {"u0": entries["u0"], "u1": {"status": "pending"}, "u2": {"status": "pending"}}
    )
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert list(manifest["units"]) == ["u0", "u1", "u2"] and manifest["status"] == "running"
    # u1 was committed after the manifest was last written: its footer says so; a torn u2 is not trusted
    (tmp_path / "u2.parquet").write_bytes(b"PAR1 torn")
    assert set(ResultsDataset(root).committed("fp")) == {"u0", "u1"}
    table, metadata = ResultsDataset(root).read()
    assert table.num_rows == 4 and metadata["fingerprint"] == "fp"


def test_another_runs_results_and_foreign_folders_are_refused(tmp_path: Path) -> None:
    root = Place.of(tmp_path / "out")
    assert ResultsDataset(root).check("fp") == "start"
    with ShardWriter(root, SCHEMA, "fp").open("u0") as shard:
        shard.commit({"status": "ok"})
    dataset = ResultsDataset(root)
    dataset.begin("fp", {}, {"u0": {"status": "ok", "rows": 0}})
    assert dataset.check("fp") == "resume"
    dataset.finish({})
    assert dataset.check("fp") == "complete"
    with pytest.raises(OutputError, match="results of a different run"):
        dataset.check("other")
    assert dataset.check("other", overwrite=True) == "start"
    assert files(tmp_path / "out") == []
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "theirs.parquet").write_bytes(b"x")
    with pytest.raises(OutputError, match="not a jurist results dataset"):
        ResultsDataset(Place.of(foreign)).check("fp", overwrite=True)
    assert (foreign / "theirs.parquet").exists()


def write_lease(root: Path, **fields: object) -> None:
    (root / LEASE).write_text(json.dumps({"token": "theirs", "renewed": time.time(), **fields}))


def test_a_live_lease_refuses_a_second_run_and_a_dead_one_is_taken(tmp_path: Path) -> None:
    root = Place.of(tmp_path)
    host = socket.gethostname()
    write_lease(tmp_path, host=host, pid=os.getpid(), started="then")  # this process: alive
    with pytest.raises(OutputError, match=rf"another run is writing this output: pid {os.getpid()} on host"):
        Lease(root, "fp", settle=0).acquire()
    write_lease(tmp_path, host="elsewhere", pid=1)  # another machine, renewed just now
    with pytest.raises(OutputError, match="host elsewhere"):
        Lease(root, "fp", settle=0).acquire()
    write_lease(tmp_path, host="elsewhere", pid=1, renewed=time.time() - 120)  # lapsed
    lease = Lease(root, "fp", ttl=1.0, settle=0)
    lease.acquire()
    held = json.loads((tmp_path / LEASE).read_text())
    assert held["fingerprint"] == "fp" and held["pid"] == os.getpid()
    time.sleep(0.6)  # renewed every quarter of the ttl
    assert json.loads((tmp_path / LEASE).read_text())["renewed"] > held["renewed"]
    lease.release()
    assert not (tmp_path / LEASE).exists()
    # a process that is gone, on this host: its lease is taken at once
    write_lease(tmp_path, host=host, pid=2**22 + 12345)
    taken = Lease(root, "fp", settle=0)
    taken.acquire()
    taken.release()


def test_of_two_runs_that_take_the_lease_together_one_goes_on(tmp_path: Path) -> None:
    root = Place.of(tmp_path)
    leases = [Lease(root, "fp", settle=0.5) for _ in range(2)]
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def take(lease: Lease) -> None:
        start.wait()
        try:
            lease.acquire()
            outcomes.append("holds")
        except OutputError:
            outcomes.append("refused")

    threads = [threading.Thread(target=take, args=(lease,)) for lease in leases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["holds", "refused"]
    for lease in leases:
        lease.release()
