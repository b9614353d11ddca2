"""What the fault tests share: a judge config and rows on disk, and ``jurist judge dataset`` run as a user
runs it (a subprocess of this worktree's code, bounded in time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

REMOTE_JUDGE = """\
judge_params:
  prompt_template: "Q: {question}"
  include_explanation: true
inference_config:
  engine: REMOTE_VLLM
  model: {model_name: fake}
"""


def rows(count: int) -> list[dict[str, Any]]:
    return [{"id": i, "question": f"{'good' if i % 3 else 'bad'} question {i}"} for i in range(count)]


def setup(tmp_path: Path, count: int, template: str = REMOTE_JUDGE) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(template)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(count)))
    return config, data


def jurist(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def judge_args(config: Path, data: Path, out: Path, *extra: str) -> list[str]:
    return ["judge", "dataset", "-c", str(config), "-i", str(data), "-o", str(out), "-q", *extra]


def ids_once(path: Path, count: int) -> list[dict[str, Any]]:
    """The output's rows, checked to hold every input row exactly once, in order."""
    table = pq.read_table(path)
    assert table.num_rows == count
    assert [int(v) for v in table.column("row_id").to_pylist()] == list(range(count))
    return table.to_pylist()
