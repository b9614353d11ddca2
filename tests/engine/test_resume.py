"""Output that survives a crash: kill -9 a run at three points, rerun it, and get the uninterrupted run's
output row for row, without sending an already-judged row again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jurist import Engine, InputError, ScriptedBackend
from jurist.engine.spec import Selection
from jurist.io.parts import MANIFEST, check_output, parts_dir
from jurist.launch import Placement, launch

JOB = Path(__file__).with_name("resume_job.py")
ROWS = 200
CHUNK = 20


def start(source: Path, output: Path, delay: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(JOB), str(source), str(output), str(CHUNK), str(delay)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def committed(output: Path) -> int:
    manifest = parts_dir(output) / MANIFEST
    if not manifest.is_file():
        return 0
    try:
        return int(json.loads(manifest.read_text())["rows"])
    except (ValueError, KeyError):
        return 0


def finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-2000:]
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(json.dumps({"question": f"question {i} " + "x" * (i % 13)}) + "\n" for i in range(ROWS))
    )
    return path


def test_kill_at_three_points_then_rerun_equals_an_uninterrupted_run(source: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole.parquet"
    finish(start(source, whole, 0.0))
    output = tmp_path / "resumed.parquet"
    sent = 0
    for kill_after in (1 * CHUNK, 4 * CHUNK, 7 * CHUNK):
        process = start(source, output, 0.05)
        deadline = time.time() + 120
        while committed(output) < kill_after and time.time() < deadline and process.poll() is None:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.communicate()
        assert not output.exists()  # only parts so far
        assert pq.read_table(parts_dir(output)).num_rows == committed(output) >= kill_after
    before = committed(output)
    summary = finish(start(source, output, 0.0))
    sent += summary["requests"]
    assert summary["resumed_from"] == before
    assert sent == ROWS - before  # no committed row was sent again
    assert not parts_dir(output).exists()
    resumed, reference = pq.read_table(output), pq.read_table(whole)
    assert resumed.num_rows == ROWS
    assert resumed.drop_columns([]).equals(reference)  # row for row, column for column
    assert (
        json.loads(resumed.schema.metadata[b"jurist"])["fingerprint"]
        == json.loads(reference.schema.metadata[b"jurist"])["fingerprint"]
    )


def test_a_finished_run_is_not_judged_again(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    finish(start(source, output, 0.0))
    summary = finish(start(source, output, 0.0))
    assert summary["complete"] is True and summary["requests"] == 0


def test_another_runs_output_is_refused_unless_overwritten(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    Engine(
        {"name": "j", "judge_params": {"prompt_template": "Q: {question}"}},
        ScriptedBackend([json.dumps({"judgment": "Yes"})], cycle=True),
    ).run_file(source, output)
    other = {"name": "k", "judge_params": {"prompt_template": "Question: {question}"}}
    backend = ScriptedBackend([json.dumps({"judgment": "No"})], cycle=True)
    with pytest.raises(InputError, match="different run"):
        Engine(other, backend).run_file(source, output)
    assert backend.requests == []
    Engine(other, backend).run_file(source, output, overwrite=True)
    assert pq.read_table(output)["k.judgment"].to_pylist() == [False] * ROWS


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("folder", "is a folder"),
        ("out.xlsx", "unknown output format"),
        ("/proc/jurist/out.parquet", "cannot create"),
    ],
)
def test_bad_output_paths_are_refused_before_any_work(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "folder").mkdir()
    path = Path(name) if name.startswith("/") else tmp_path / name
    with pytest.raises(InputError, match=message):
        check_output(path, "fingerprint")


def test_retry_failed_rejudges_only_the_failed_rows(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    calls: list[str] = []

    def flaky(request: Any) -> str:
        text = request.messages[-1].content
        calls.append(text)
        return "garbage" if text.endswith("x") else json.dumps({"judgment": "Yes"})

    judge = {"name": "j", "judge_params": {"prompt_template": "Q: {question}"}}
    Engine(judge, ScriptedBackend(flaky)).run_file(source, output)
    first = pq.read_table(output)
    failed = [i for i, s in enumerate(first["j.status"].to_pylist()) if s != "ok"]
    assert failed and len(failed) < ROWS
    calls.clear()
    fixed = ScriptedBackend([json.dumps({"judgment": "No"})], cycle=True)
    spec = Engine(judge, fixed).spec(Selection(source))
    summary = launch(spec, Placement(retry_failed=True), backend=fixed).run(output)
    assert len(fixed.requests) == len(failed)  # only the failed rows were sent
    assert summary.retried == {"j": len(failed)}
    second = pq.read_table(output)
    assert second.num_rows == ROWS
    statuses = second["j.status"].to_pylist()
    assert statuses == ["ok"] * ROWS
    judgments = second["j.judgment"].to_pylist()
    assert [judgments[i] for i in failed] == [False] * len(failed)
    kept = [i for i in range(ROWS) if i not in failed]
    assert [judgments[i] for i in kept] == [True] * len(kept)
    assert not os.path.exists(f"{output}.parts")
