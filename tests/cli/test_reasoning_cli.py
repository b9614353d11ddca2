"""A thinking judge from the command line, against a local server that speaks `vllm serve`'s protocol: the
reasoning arrives as an assistant message the server continues, the run summary counts the reasoning the
budget cut, --max-reasoning-cut-rate gates on it, and `jurist info` reports it
(batch files: tests/batch/test_batch_rounds.py)."""

from __future__ import annotations

import json
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
  reasoning: {budget_tokens: 64}
inference_config:
  engine: REMOTE_VLLM
  model: {model_name: fake}
"""


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Reason (cut short on questions saying "long"), then answer after the reasoning."""
    last = body["messages"][-1]
    assert last["role"] == "assistant" and body["continue_final_message"] is True
    assert body["add_generation_prompt"] is False
    question = body["messages"][-2]["content"]
    if "structured_outputs" not in body:
        assert last["content"] == "<think>" and body["stop"] == ["</think>"] and body["max_tokens"] == 64
        return 200, completion("and so on " * 20, "length") if "long" in question else completion("short")
    assert last["content"].startswith("<think>") and last["content"].endswith("</think>\n")
    return 200, completion(json.dumps({"judgment": "Yes"}))


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    with chat_server(answer) as srv:
        yield srv


def jurist(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *map(str, args)], capture_output=True, text=True, timeout=180
    )


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(JUDGE_YAML)
    data = tmp_path / "rows.jsonl"
    rows = [{"question": f"{'long' if i % 4 == 0 else 'brief'} {i}"} for i in range(12)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return config, data


def judge(config: Path, data: Path, out: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return jurist(
        "judge",
        "dataset",
        "-c",
        config,
        "-i",
        data,
        "-o",
        out,
        "--quiet",
        "--inference_config.remote_params.api_url",
        url,
        *extra,
    )


def test_the_summary_info_and_columns_count_the_cut_reasoning(
    server: ChatServer, files: tuple[Path, Path], tmp_path: Path
) -> None:
    config, data = files
    out = tmp_path / "out.parquet"
    result = judge(config, data, out, server.url)
    assert result.returncode == 0, result.stderr
    assert "the budget cut 3 of 12 rows (25.0 %)" in result.stdout
    table = pq.read_table(out)
    assert table["judge.status"].to_pylist() == ["ok"] * 12
    assert table["judge.reasoning_cut"].to_pylist() == [1 if i % 4 == 0 else 0 for i in range(12)]
    assert table["judge.reasoning"].to_pylist()[1] == "short"
    info = jurist("info", out)
    assert info.returncode == 0, info.stderr
    assert "reasoning cut by the budget: 3 of 12 rows" in info.stdout
    report = jurist("report", out, "-o", tmp_path / "report.html")
    assert report.returncode == 0, report.stderr
    assert "the budget cut 3 of 12 rows' reasoning" in (tmp_path / "report.html").read_text()
    strict = judge(config, data, tmp_path / "strict.parquet", server.url, "--max-reasoning-cut-rate", "0.2")
    assert strict.returncode == 3
    assert "the reasoning budget cut 3 of judge judge's 12 rows (25.0%, max 20.0%)" in strict.stderr
