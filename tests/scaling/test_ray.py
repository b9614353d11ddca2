"""``--ray`` on a Ray cluster of two worker nodes started here (``ray.cluster_utils.Cluster``, every node on
127.0.0.1, one CPU each, and a head node that runs no actor): each actor reads its units from storage, judges
them and writes their shards itself, and only each unit's counts come back. The output equals a one-process
run over the same shards merged into one file (the scripted backend; a dataset in S3 from the command line);
the driver opens no shard but the first (for its columns); killing a worker node mid-run leaves every row
judged once (Ray restarts the actor on the node that replaces it and retries its unit); a killed driver's
rerun judges only the units not committed; a judge in a Ray Data pipeline of one's own. The tiny model on
Ray is test_ray_engine.py's."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scaling_backends as sb

from corpus_data import make_rows, shard_bytes, write_jsonl, write_shards
from installed import have
from jurist.config.models import JudgeConfig
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import ConfigError
from jurist.io.dataset import MANIFEST
from jurist.io.results import ResultTable
from jurist.launch import Placement, launch
from s3_server import S3Server, s3_env

pytestmark = [
    pytest.mark.skipif(not have("ray"), reason="ray not installed"),
    # Ray Data 2.60 sets fields it deprecated itself when it builds its context
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
]
HERE = Path(__file__).parent
SRC = str(HERE.parents[1] / "src")
JUDGES = (JudgeConfig.model_validate(sb.JUDGE), JudgeConfig.model_validate(sb.PAIR))


def run(
    inputs: Any, output: Path | str, placement: Placement, factory: Any = None, **options: Any
) -> RunSummary:
    spec = RunSpec(JUDGES, Selection(inputs), RunOptions(**{"chunk_size": 7, **options}))
    launched = launch(spec, placement, output=output, backend_factory=factory or sb.scripted_for)
    try:
        return launched.run(output)
    finally:
        launched.close()


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, pa.Table]:
    """Four JSONL.gz shards and a Parquet shard, and a one-process run's results over them merged."""
    folder = tmp_path / "corpus"
    every = write_shards(str(folder), 4, 20, "jsonl.gz")
    tail = make_rows(30, len(every))
    (folder / "tail.parquet").write_bytes(shard_bytes(tail, "parquet", row_group=10))
    whole = tmp_path / "whole.parquet"
    run(str(write_jsonl(tmp_path / "merged.jsonl", every + tail)), whole, Placement())
    return folder, pq.read_table(whole)


def test_on_ray_the_workers_read_and_write_and_the_driver_sees_counts(
    cluster: Any, corpus: tuple[Path, pa.Table], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurist.engine import ray_units
    from jurist.io.units import Unit

    folder, expected = corpus
    opened: list[str] = []
    real_open = Unit.open
    monkeypatch.setattr(
        Unit, "open", lambda self, *a, **k: opened.append(self.name) or real_open(self, *a, **k)
    )
    received: list[int] = []  # the size of what each actor sends back to the driver
    real_judge = ray_units.RayExecutor.judge_units

    def judge_units(self: Any, job: Any, units: Any) -> Any:
        for result in real_judge(self, job, units):
            received.append(len(pickle.dumps(result)))
            yield result

    monkeypatch.setattr(ray_units.RayExecutor, "judge_units", judge_units)
    out = tmp_path / "out"
    summary = run(str(folder), out, Placement(ray=cluster.address, data_parallel=2))
    assert summary.rows == 110 and summary.units == 5 and summary.requests == 3 * 110
    assert ResultTable.open(out).table.equals(expected)
    assert opened == ["part-00000"]  # in the driver: the first shard's first rows, for the columns
    assert len(received) == 5 and max(received) < 4096  # a unit's entry, not its rows
    described = json.loads((out / MANIFEST).read_text())["metadata"]["models"]
    assert set(described) == {"j", "p"}
    # more actors than the cluster has CPUs would wait forever: refused with the reason
    with pytest.raises(ConfigError, match=r"3 x 1 CPU \(the cluster has 2\)"):
        run(str(folder), tmp_path / "too_many", Placement(ray=cluster.address, data_parallel=3))


def test_a_dataset_in_s3_on_ray_from_the_command_line(cluster: Any, s3: S3Server, tmp_path: Path) -> None:
    from faults.fault_runs import REMOTE_JUDGE
    from faults.fault_servers import fault_server

    s3.bucket("ray-corpus")
    with s3_env(s3):
        rows = write_shards("s3://ray-corpus/in/", 3, 12, "jsonl.gz")
    config = tmp_path / "judge.yaml"
    config.write_text(REMOTE_JUDGE)
    env = {**os.environ, **s3.env, "PYTHONPATH": SRC}
    outputs = {"whole": str(tmp_path / "whole.parquet"), "ray": "s3://ray-corpus/scored/"}
    with fault_server() as server:
        for name, source, extra in (
            ("whole", str(write_jsonl(tmp_path / "merged.jsonl", rows)), []),
            ("ray", "s3://ray-corpus/in/*.jsonl.gz", ["--ray", cluster.address, "--data-parallel", "2"]),
        ):
            command = [
                sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(config), "-i", source,
                "-o", outputs[name], "-q", "--chunk-size", "5",
                "--inference_config.remote_params.api_url", server.url, *extra,
            ]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)
            assert done.returncode == 0, done.stderr[-3000:]
            assert s3.secret not in done.stdout + done.stderr
    with s3_env(s3):
        assert ResultTable.open(outputs["ray"]).table.equals(pq.read_table(outputs["whole"]))


def test_killing_a_worker_node_mid_run_leaves_every_row_judged_once(
    cluster: Any, corpus: tuple[Path, pa.Table], tmp_path: Path
) -> None:
    folder, expected = corpus
    out = tmp_path / "out"
    victim = next(iter(cluster.worker_nodes))
    done: list[RunSummary | BaseException] = []

    def judge() -> None:  # the driver's run in a thread: Ray removes a node from the main thread only
        try:
            placement = Placement(ray=cluster.address, data_parallel=2)
            done.append(run(str(folder), out, placement, sb.SlowFor(0.2), chunk_size=5))
        except BaseException as exc:
            done.append(exc)

    driver = threading.Thread(target=judge)
    driver.start()
    deadline = time.time() + 120
    while not list(out.glob("*.parquet")) and time.time() < deadline:
        time.sleep(0.05)
    killed = [len(list(out.glob("*.parquet")))]
    cluster.remove_node(victim, allow_graceful=False)
    cluster.add_node(num_cpus=1, object_store_memory=100 * 2**20, env_vars=cluster.node_env)
    driver.join(300)
    summary = done[0]
    assert isinstance(summary, RunSummary), summary
    assert killed and killed[0] < 5  # the node died mid-run
    assert summary.rows == 110
    table = ResultTable.open(out).table
    assert table.num_rows == 110 and len(set(table.column("row_id").to_pylist())) == 110
    assert table.drop_columns(["j.model", "p.model"]).equals(expected.drop_columns(["j.model", "p.model"]))


def test_a_killed_driver_s_rerun_judges_only_the_units_not_committed(
    cluster: Any, corpus: tuple[Path, pa.Table], tmp_path: Path
) -> None:
    folder, _ = corpus
    out = tmp_path / "out"
    command = [sys.executable, str(HERE / "ray_job_runner.py"), cluster.address, str(folder), str(out), "5"]
    driver = subprocess.Popen([*command, "0.3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 180
    while len(list(out.glob("*.parquet"))) < 2 and time.time() < deadline and driver.poll() is None:
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    _, err = driver.communicate()
    assert driver.returncode == -signal.SIGKILL, err[-2000:]
    committed = {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert 2 <= len(committed) < 5
    rerun = subprocess.run([*command, "0"], capture_output=True, text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads(rerun.stdout.strip().splitlines()[-1])
    resumed = sum(20 if n.startswith("part") else 30 for n in committed)
    assert summary["units"] == 5 - len(committed) and summary["resumed_from"] == resumed
    assert {
        n: t for n, t in ((p.name, p.stat().st_mtime_ns) for p in out.glob("*.parquet")) if n in committed
    } == committed
    assert ResultTable.open(out).table.num_rows == 110


def test_a_judge_in_a_ray_data_pipeline_of_ones_own(cluster: Any, tmp_path: Path) -> None:
    import ray

    from jurist import Engine
    from jurist.engine.ray_units import JudgeRows

    rows = make_rows(12, ids=True)
    ray.init(address=cluster.address, ignore_reinit_error=True, log_to_driver=False)
    judged = ray.data.from_items(rows).map_batches(
        JudgeRows,
        fn_constructor_kwargs={"judges": [sb.JUDGE], "backend_factory": sb.scripted_for},
        batch_size=5,
        batch_format="pyarrow",
        concurrency=2,
        num_cpus=1,
    )
    got = sorted(judged.take_all(), key=lambda r: r["row_id"])
    local = Engine(sb.JUDGE, backend_factory=sb.scripted_for).run(rows).to_pylist()
    assert got == sorted(local, key=lambda r: r["row_id"])
    assert {r["j.status"] for r in got} == {"ok"}
