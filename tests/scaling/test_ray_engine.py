"""The tiny random model judging a dataset of three shards on the two-node Ray cluster, from the command line
(every row ok, ids by shard and position, the engine in the manifest): the slow tier, as it loads vLLM in two
actors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus_data import write_shards
from installed import have
from jurist.io.dataset import MANIFEST
from jurist.io.results import ResultTable

pytestmark = [
    pytest.mark.skipif(not have("ray"), reason="ray not installed"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
]


@pytest.mark.slow
@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_tiny_model_on_ray_gives_every_row_ok(cluster: Any, tiny_model_dir: Path, tmp_path: Path) -> None:
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        "name: t\njudge_params:\n  prompt_template: 'Question: {question}'\n  judgment_type: BOOL\n"
        "inference_config:\n  engine_params: {gpu_memory_utilization: 0.05, enforce_eager: true}\n"
    )
    folder = tmp_path / "shards"
    write_shards(str(folder), 3, 6, "jsonl", ids=False)
    output = tmp_path / "tiny"
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(judge), "-i", str(folder),
        "-o", str(output), "--model", str(tiny_model_dir), "--chunk-size", "4", "-q",
        "--ray", cluster.address, "--data-parallel", "2",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "18 rows ->" in done.stdout and "ok 18" in done.stdout
    table = ResultTable.open(output).table
    assert table["row_id"].to_pylist() == [f"part-0000{s}.jsonl:{i}" for s in range(3) for i in range(6)]
    assert table["t.status"].to_pylist() == ["ok"] * 18
    assert json.loads((output / MANIFEST).read_text())["metadata"]["models"]["t"]["engine"] == "vllm"
