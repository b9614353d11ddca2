"""A dying engine: vLLM's engine process or a data-parallel worker killed mid-run stops the run with exit 2
and a message naming it, the committed chunks are kept, and a rerun completes with every row once; with
``--on-worker-death continue`` a data-parallel run goes on with the workers left."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import psutil
import pytest
from fault_runs import committed_parts, ids_once, judge_args, jurist, start, wait_for

TINY_JUDGE = """\
judge_params:
  prompt_template: "Question: {question}"
  include_explanation: true
  max_explanation_chars: 30
inference_config:
  engine_params: {gpu_memory_utilization: 0.05, enforce_eager: true}
"""


def engine_core(pid: int) -> psutil.Process | None:
    """vLLM's engine-core process among ``pid``'s descendants."""
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "EngineCore" in child.name() or "EngineCore" in " ".join(child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


@pytest.mark.engine
def test_killing_vllm_s_engine_process_exits_2_and_a_rerun_completes(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text(TINY_JUDGE)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} plus {i}?"}) + "\n" for i in range(400)))
    out = tmp_path / "out.parquet"
    args = judge_args(config, data, out, "--model", str(tiny_model_dir), "--chunk-size", "8")
    # the engine core in a process of its own, as on GPUs (jurist keeps it in-process on CPU by default)
    run = start(*args, env={"VLLM_ENABLE_V1_MULTIPROCESSING": "1"})
    try:
        wait_for(lambda: committed_parts(out) >= 2, "two committed chunks", limit=600)
        core = engine_core(run.pid)
        assert core is not None, "no EngineCore process"
        core.send_signal(signal.SIGKILL)
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate(timeout=60)
    assert run.returncode == 2, err[-3000:]
    assert "vLLM's engine process (EngineCore) died" in err and "rerun the same command to resume" in err
    kept = committed_parts(out)
    assert kept >= 2
    rerun = jurist(*args, timeout=900)
    assert rerun.returncode in (0, 3), rerun.stderr[-3000:]
    assert "resumed after" in rerun.stdout
    ids_once(out, 400)
