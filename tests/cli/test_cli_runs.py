"""``jurist judge dataset`` as a user runs it: a real subprocess against a local OpenAI-compatible server
(no model needed). Progress, quiet logs, exit codes, bad paths caught before anything is judged, resume,
``--overwrite``, stdin, ``--limit``, ``--sample``, ``jurist info``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from fake_server import ChatServer, chat_server, completion

JUDGE_YAML = """\
judge_params:
  prompt_template: "Q: {question}"
  include_explanation: true
inference_config:
  engine: REMOTE_VLLM
  model: {model_name: fake}
"""


def verdict(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    question = body["messages"][-1]["content"]
    if "garbage" in question:
        return 200, completion("not json")
    return 200, completion(
        json.dumps({"explanation": "ok", "judgment": "Yes" if "good" in question else "No"})
    )


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    with chat_server(verdict) as srv:
        yield srv


def setup(tmp_path: Path, rows: list[dict[str, Any]], template: str = JUDGE_YAML) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(template)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return config, data


def jurist(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=180, input=stdin
    )


def judge(config: Path, data: str | Path, out: Path, url: str, *extra: str, stdin: str | None = None) -> Any:
    return jurist(
        "judge",
        "dataset",
        "-c",
        str(config),
        "-i",
        str(data),
        "-o",
        str(out),
        "--inference_config.remote_params.api_url",
        url,
        *extra,
        stdin=stdin,
    )


ROWS = [{"question": f"good question {i}" if i % 3 else f"bad question {i}"} for i in range(30)]


def test_a_run_prints_a_summary_and_keeps_library_logs_out(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    out = tmp_path / "out.parquet"
    result = judge(config, data, out, server.url, "--chunk-size", "7")
    assert result.returncode == 0, result.stderr
    assert "30 rows -> " in result.stdout and "ok 30" in result.stdout
    assert len(result.stdout.splitlines()) < 8 and len(result.stderr.splitlines()) < 5
    assert (tmp_path / "out.parquet.log").is_file()
    table = pq.read_table(out)
    assert table.num_rows == 30 and table["judge.status"].to_pylist() == ["ok"] * 30
    info = jurist("info", str(out))
    assert info.returncode == 0, info.stderr
    assert "finished" in info.stdout and "judge judge" in info.stdout and "judge: ok 30" in info.stdout
    assert "fingerprint" in info.stdout and "versions: jurist" in info.stdout


def test_rerunning_a_finished_run_judges_nothing(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    out = tmp_path / "out.parquet"
    assert judge(config, data, out, server.url).returncode == 0
    sent = len(server.bodies)
    again = judge(config, data, out, server.url)
    assert again.returncode == 0 and "already holds the finished results" in again.stdout
    assert len(server.bodies) == sent


def test_another_runs_output_is_refused_then_overwritten(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    out = tmp_path / "out.parquet"
    assert judge(config, data, out, server.url, "--limit", "5").returncode == 0
    refused = judge(config, data, out, server.url)
    assert refused.returncode == 2 and "different run" in refused.stderr and str(out) in refused.stderr
    assert judge(config, data, out, server.url, "--overwrite").returncode == 0
    assert pq.read_table(out).num_rows == 30


@pytest.mark.parametrize("target", ["folder", "missing/../../../proc/x.parquet", "out.xlsx"])
def test_bad_output_paths_exit_2_before_any_request(server: ChatServer, tmp_path: Path, target: str) -> None:
    config, data = setup(tmp_path, ROWS)
    (tmp_path / "folder").mkdir()  # a folder is a results dataset's place, but not one of another program's
    (tmp_path / "folder" / "theirs.parquet").write_bytes(b"PAR1")
    out = tmp_path / target if not target.startswith("missing") else Path("/proc/jurist-test/x.parquet")
    result = judge(config, data, out, server.url)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error:") and len(result.stderr.splitlines()) <= 2
    assert server.bodies == []


def test_a_placeholder_no_row_fills_exits_3_naming_it(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS, JUDGE_YAML.replace("{question}", "{{input.nothing}}"))
    result = judge(config, data, tmp_path / "out.parquet", server.url)
    assert result.returncode == 3
    assert (
        "no output is ok" in result.stderr
        and "missing_input" in result.stderr
        and "input.nothing" in result.stderr
    )
    assert server.bodies == []  # no row reached the model


def test_a_dead_server_is_one_clear_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config, data = setup(tmp_path, ROWS)
    result = judge(config, data, tmp_path / "out.parquet", f"http://127.0.0.1:{port}/v1")
    assert result.returncode == 2
    assert "cannot reach the server" in result.stderr


def test_max_failure_rate(server: ChatServer, tmp_path: Path) -> None:
    rows = [{"question": "garbage" if i < 4 else f"good {i}"} for i in range(10)]
    config, data = setup(tmp_path, rows)
    lenient = judge(config, data, tmp_path / "a.parquet", server.url)
    assert lenient.returncode == 0
    strict = judge(config, data, tmp_path / "b.parquet", server.url, "--max-failure-rate", "0.2")
    assert strict.returncode == 3
    assert "40.0% of outputs are not ok" in strict.stderr and "parse_error" in strict.stderr


def test_stdin_limit_and_sample(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    piped = judge(config, "-", tmp_path / "s.jsonl", server.url, "--limit", "4", stdin=data.read_text())
    assert piped.returncode == 0, piped.stderr
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert [json.loads(x)["row_id"] for x in lines] == ["0", "1", "2", "3"]
    sampled = judge(config, data, tmp_path / "sample.parquet", server.url, "--sample", "5", "--seed", "2")
    assert sampled.returncode == 0
    ids = [int(i) for i in pq.read_table(tmp_path / "sample.parquet")["row_id"].to_pylist()]
    assert ids == sorted(ids) and len(ids) == 5


def test_quiet_keeps_the_summary(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    result = judge(config, data, tmp_path / "q.parquet", server.url, "--quiet")
    assert result.returncode == 0 and result.stderr == "" and "30 rows" in result.stdout


def test_keep_scores_and_filters_in_one_pass(server: ChatServer, tmp_path: Path) -> None:
    config, data = setup(tmp_path, ROWS)
    out = tmp_path / "scored.parquet"
    result = judge(config, data, out, server.url, "--keep", "judge.judgment")
    assert result.returncode == 0, result.stderr
    assert "kept 20 of 30 rows" in result.stdout  # "good" questions are judged Yes
    kept = pq.read_table(tmp_path / "scored.kept.parquet")
    assert all(q.startswith("good") for q in kept["question"].to_pylist())
    assert pq.read_table(out).num_rows == 30  # the full results stay
