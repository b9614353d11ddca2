"""``--ray`` on a local Ray instance started here (2 CPUs): the scripted backend gives the local run's output
row for row (and metadata), the tiny random model gives every row ok, and a run killed with SIGKILL and
restarted judges no finished block again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import scaling_backends as sb

from installed import have
from jurist import Engine, ScriptedBackend
from jurist.engine.ray_job import RayRun, blocks_dir
from jurist.errors import BackendError, ConfigError
from jurist.io.parts import MANIFEST, parts_dir

pytestmark = [
    pytest.mark.skipif(not have("ray"), reason="ray not installed"),
    # Ray Data 2.60 sets fields it deprecated itself when it builds its context
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
]
HERE = Path(__file__).parent
JOB = HERE / "ray_job_runner.py"


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=200 * 2**20,
        runtime_env={"env_vars": {"PYTHONPATH": str(HERE)}},
    )
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def write_rows(path: Path, n: int) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {"question": "q" * (i % 7 + 1) + str(i), "response_a": "first", "response_b": "second"}
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


def metadata(path: Path) -> dict[str, Any]:
    return dict(json.loads(pq.read_schema(path).metadata[b"jurist"]))


def test_rows_render_as_read_on_ray_whatever_their_neighbours(cluster: str, tmp_path: Path) -> None:
    # each row's question is an object with keys of its own: an Arrow table of the block would give every
    # row the others' keys as nulls; the actors render the records as read
    source = tmp_path / "nested.jsonl"
    source.write_text("".join(json.dumps({"question": {f"k{i}": i}}) + "\n" for i in range(6)))
    local, remote = tmp_path / "local.parquet", tmp_path / "ray.parquet"
    Engine(sb.JUDGE, chunk_size=3, backend_factory=sb.scripted_for).run_file(source, local)
    engine = Engine(sb.JUDGE, chunk_size=3, backend_factory=sb.scripted_for)
    RayRun(engine, concurrency=2).run_file(source, remote)
    seen = pq.read_table(remote).column("j.explanation").to_pylist()  # the prompt's last 12 characters
    assert seen == pq.read_table(local).column("j.explanation").to_pylist()
    assert not any("null" in text for text in seen)
    assert seen[0].endswith('"k0": 0}')


def test_scripted_on_ray_equals_the_local_run(cluster: str, tmp_path: Path) -> None:
    source = write_rows(tmp_path / "rows.jsonl", 47)
    local, remote = tmp_path / "local.parquet", tmp_path / "ray.parquet"
    Engine([sb.JUDGE, sb.PAIR], chunk_size=6, backend_factory=sb.scripted_for).run_file(source, local)
    engine = Engine([sb.JUDGE, sb.PAIR], chunk_size=6, backend_factory=sb.scripted_for)
    run = RayRun(engine, concurrency=2)
    summary = run.run_file(source, remote)
    assert run.sent_blocks == 8 and summary.rows == 47
    assert summary.judges["p"].statuses["ok"] == 47
    assert pq.read_table(remote).equals(pq.read_table(local))
    ours, theirs = metadata(remote), metadata(local)
    assert ours["fingerprint"] == theirs["fingerprint"]
    assert ours["judges"] == theirs["judges"] and ours["rows"] == theirs["rows"] == 47
    assert not blocks_dir(remote).exists() and not parts_dir(remote).exists()
    # more actors than the cluster has CPUs would wait forever: refused with the reason
    with pytest.raises(ConfigError, match=r"3 x 1 CPU \(the cluster has 2\)"):
        RayRun(engine, concurrency=3).run_file(source, tmp_path / "too_many.parquet")
        # a finished run is recognised, locally and on Ray alike
    assert RayRun(engine).run_file(source, remote).complete
    assert Engine([sb.JUDGE, sb.PAIR], chunk_size=6).run_file(source, remote).complete


@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_tiny_model_on_ray_gives_every_row_ok(cluster: str, tiny_model_dir: Path, tmp_path: Path) -> None:
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        "name: t\njudge_params:\n  prompt_template: 'Question: {question}'\n  judgment_type: BOOL\n"
        "inference_config:\n  engine_params: {gpu_memory_utilization: 0.05}\n"
    )
    source = write_rows(tmp_path / "rows.jsonl", 20)
    output = tmp_path / "tiny.parquet"
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(judge), "-i", str(source),
        "-o", str(output), "--model", str(tiny_model_dir), "--chunk-size", "5", "-q",
        "--ray", cluster, "--data-parallel", "2",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "20 rows ->" in done.stdout and "ok 20" in done.stdout
    table = pq.read_table(output)
    assert table["row_id"].to_pylist() == [str(i) for i in range(20)]
    assert table["t.status"].to_pylist() == ["ok"] * 20
    assert metadata(output)["models"]["t"]["engine"] == "vllm"


def finished_rows(output: Path) -> int:
    manifest = parts_dir(output) / MANIFEST
    committed = int(json.loads(manifest.read_text())["rows"]) if manifest.is_file() else 0
    kept = sum(int(p.stem.rsplit("-", 1)[1]) for p in blocks_dir(output).glob("block-*.parquet"))
    return committed + kept


@pytest.mark.slow  # a run resuming on Ray stays in the default tier (test_a_local_run_resumes_on_ray)
def test_a_killed_run_does_not_judge_finished_blocks_again(cluster: str, tmp_path: Path) -> None:
    rows, chunk = 120, 10
    source = write_rows(tmp_path / "rows.jsonl", rows)
    whole = tmp_path / "whole.parquet"
    Engine(sb.JUDGE, chunk_size=chunk, backend_factory=sb.scripted_for).run_file(source, whole)
    output = tmp_path / "killed.parquet"
    command = [sys.executable, str(JOB), cluster, str(source), str(output), str(chunk)]
    process = subprocess.Popen([*command, "0.5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while finished_rows(output) < 3 * chunk and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    _, err = process.communicate()
    assert process.returncode == -signal.SIGKILL, err[-2000:]
    done_before = finished_rows(output)
    assert 3 * chunk <= done_before < rows
    assert not output.exists()

    rerun = subprocess.run([*command, "0"], capture_output=True, text=True, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert summary["resumed_from"] == done_before
    assert summary["sent_blocks"] * chunk == rows - done_before  # no finished block was sent again
    assert summary["requests"] == rows - done_before
    assert pq.read_table(output).equals(pq.read_table(whole))


def test_a_local_run_resumes_on_ray(cluster: str, tmp_path: Path) -> None:
    source = write_rows(tmp_path / "rows.jsonl", 60)
    whole = tmp_path / "whole.parquet"
    Engine(sb.JUDGE, chunk_size=10, backend_factory=sb.scripted_for).run_file(source, whole)
    stops_after_three_chunks = sb.failing_after(30)  # 3 chunks of 10
    output = tmp_path / "resumed.parquet"
    local = Engine(
        sb.JUDGE, chunk_size=10, backend_factory=lambda _: ScriptedBackend(stops_after_three_chunks)
    )
    with pytest.raises(BackendError):
        local.run_file(source, output)
    run = RayRun(Engine(sb.JUDGE, chunk_size=10, backend_factory=sb.scripted_for), concurrency=2)
    summary = run.run_file(source, output)
    assert summary.resumed_from == 30 and run.sent_blocks == 3 and summary.requests == 30
    assert pq.read_table(output).equals(pq.read_table(whole))
