"""A dataset in object storage, judged into object storage from the command line, as a user runs it:
``jurist judge dataset -i 's3://corpus/*.jsonl.gz' -o s3://corpus-scored/...`` against an S3 server on
127.0.0.1, in one process and on two data-parallel workers, equal row for row to a run over the shards merged
into one local file; the secret key it was given appears in no output, manifest, shard or log; a second run
on the same output is refused by the first run's lease; filter, report and info read the output by URL."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from corpus_data import write_jsonl, write_shards
from faults.fault_runs import REMOTE_JUDGE
from faults.fault_servers import fault_server
from jurist.io.results import ResultTable
from s3_server import S3Server, s3_env

SRC = str(Path(__file__).resolve().parents[2] / "src")


def jurist(s3: S3Server, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **s3.env, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def judge(s3: S3Server, config: Path, url: str, source: str, output: str, *extra: str) -> Any:
    done = jurist(
        s3, "judge", "dataset", "-c", str(config), "-i", source, "-o", output, "-q",
        "--inference_config.remote_params.api_url", url, "--chunk-size", "6", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_dataset_in_s3_is_judged_into_s3_in_one_process_and_on_workers(
    s3: S3Server, tmp_path: Path
) -> None:
    s3.bucket("corpus")
    s3.bucket("corpus-scored")
    with s3_env(s3):
        rows = write_shards("s3://corpus/", 4, 15, "jsonl.gz")
    config = tmp_path / "judge.yaml"
    config.write_text(REMOTE_JUDGE)
    merged = write_jsonl(tmp_path / "merged.jsonl", rows)
    runs = []
    with fault_server() as server:
        runs.append(judge(s3, config, server.url, str(merged), str(tmp_path / "whole.parquet")))
        runs.append(judge(s3, config, server.url, "s3://corpus/*.jsonl.gz", "s3://corpus-scored/one/"))
        runs.append(
            judge(
                s3,
                config,
                server.url,
                "s3://corpus/*.jsonl.gz",
                "s3://corpus-scored/two/",
                "--data-parallel",
                "2",
            )
        )
    assert "60 rows -> s3://corpus-scored/one/" in runs[1].stdout
    expected = pq.read_table(tmp_path / "whole.parquet")
    with s3_env(s3):
        for name in ("one", "two"):
            assert ResultTable.open(f"s3://corpus-scored/{name}/").table.equals(expected), name
    objects = s3.objects("corpus-scored")
    assert sorted(k for k in objects if k.startswith("one/") and not k.endswith("/")) == [
        "one/_manifest.json",
        *[f"one/part-{i:05d}.parquet" for i in range(4)],
    ]  # the lease is gone with its run
    # the command line reads the output by URL
    kept = tmp_path / "kept.parquet"
    filtered = jurist(s3, "filter", "s3://corpus-scored/one/", "-o", str(kept), "--where", "judge.score >= 1")
    assert filtered.returncode == 0, filtered.stderr
    assert pq.read_table(kept).num_rows == sum(
        1 for r in expected.column("judge.score").to_pylist() if r >= 1
    )
    info = jurist(s3, "info", "s3://corpus-scored/two/")
    assert info.returncode == 0 and "s3://corpus-scored/two/: finished" in info.stdout
    report = jurist(s3, "report", "s3://corpus-scored/one/", "-o", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr[-2000:]
    # the secret key is in none of the outputs, the logs, the manifests or the shards' metadata
    logs = [p.read_bytes() for p in Path("/tmp/jurist-logs").glob("corpus-scored*.log")]
    printed = [(d.stdout + d.stderr).encode() for d in (*runs, filtered, info, report)]
    seen = [*objects.values(), *logs, *printed, (tmp_path / "report.html").read_bytes(), kept.read_bytes()]
    assert logs and not [blob for blob in seen if s3.secret.encode() in blob]


def test_a_second_run_on_the_same_output_is_refused_at_once(s3: S3Server, tmp_path: Path) -> None:
    s3.bucket("leased")
    with s3_env(s3):
        write_shards("s3://leased/in/", 2, 10, "jsonl.gz")
    config = tmp_path / "judge.yaml"
    config.write_text(REMOTE_JUDGE)
    args = ["judge", "dataset", "-c", str(config), "-i", "s3://leased/in/", "-o", "s3://leased/out/", "-q"]
    with fault_server(pause_after=3) as server:
        args += ["--inference_config.remote_params.api_url", server.url]
        env = {**os.environ, **s3.env, "PYTHONPATH": SRC}
        first = subprocess.Popen([sys.executable, "-m", "jurist", *args], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            deadline = time.time() + 60
            while server.count <= 3 and time.time() < deadline:  # the first run holds its lease, and waits
                time.sleep(0.1)
            began = time.time()
            second = jurist(s3, *args)
            assert second.returncode == 2, second.stderr
            assert "another run is writing this output: pid" in second.stderr
            assert time.time() - began < 30
            server.gate.set()
            out, err = first.communicate(timeout=120)
            assert first.returncode == 0, err
        finally:
            first.kill()
    assert "20 rows -> s3://leased/out/" in out
