"""The same batch file through vLLM's own ``run_batch`` and through ``jurist batch``, on the same model, one
after the other in one run: both outputs parsed line by line, and rows/s side by side.

The file (:mod:`batch_lines`, without bad lines: vLLM's ``run_batch`` stops at a line that is not JSON)
holds plain chat, ``json_schema``, ``json_object`` and ``logprobs`` lines asking for ``gpt-4o-mini``; vLLM
serves the default model (SmolLM2) under that name, and jurist maps it with ``--model-map``. Both engines
get the same KV-cache size, KV block size (32) and structured-output backend (guidance), eager mode and no
core held back; otherwise each runs as it does by default (vLLM's ``run_batch`` reads the whole file, sends
every request at once and writes at the end; jurist streams chunks and commits each). Rows/s is given over
the whole command (engine start included) and once the engine is up (vLLM: from its "Reading batch" log
line; jurist: its own summary, which times the model load).

    flock /tmp/jurist-engine.lock python benchmarks/batch_vs_vllm.py --lines 500

Writes benchmarks/results/batch_vs_vllm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from batch_lines import write_file
from common import RESULTS, ROOT
from jurist.backends.local.placement import cpu_kv_cache_bytes
from jurist.models.default_model import default_model_path
from jurist.openai_batch.shapes import OutputLine

READING = re.compile(r"(\d\d-\d\d \d\d:\d\d:\d\d)[^\n]*Reading batch from")


def parse(output: Path, source: Path) -> dict[str, Any]:
    """Every output line as OpenAI's output line shape, in input order; the answers by custom id."""
    ids = [json.loads(line)["custom_id"] for line in source.read_text().splitlines()]
    lines = [OutputLine.model_validate_json(raw) for raw in output.read_text().splitlines()]
    assert sorted(line.custom_id or "" for line in lines) == sorted(ids)
    answers = {}
    for line in lines:
        if line.error is None and line.response is not None and line.response.status_code == 200:
            content = line.response.body["choices"][0]["message"]["content"]
            assert isinstance(content, str)
            answers[line.custom_id] = content
    return {"lines": len(lines), "in_input_order": [x.custom_id for x in lines] == ids, "answers": answers}


def run(command: list[str], env: dict[str, str]) -> tuple[float, str, datetime]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    ended = datetime.now()
    assert done.returncode == 0, done.stderr[-3000:]
    return time.perf_counter() - started, done.stdout + done.stderr, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=500)
    args = parser.parse_args()
    model = str(default_model_path())
    kv_bytes = cpu_kv_cache_bytes(0.2)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="jurist-batch-vs-vllm-") as folder:
        source = write_file(Path(folder) / "requests.jsonl", args.lines, bad=False)
        vllm_out, jurist_out = Path(folder) / "vllm.jsonl", Path(folder) / "jurist.jsonl"
        vllm_command = [
            sys.executable, "-m", "vllm.entrypoints.openai.run_batch", "-i", str(source), "-o", str(vllm_out),
            "--model", model, "--served-model-name", "gpt-4o-mini", "--enforce-eager", "--block-size", "32",
            "--kv-cache-memory-bytes", str(kv_bytes), "--seed", "0",
            "--structured-outputs-config", json.dumps({"backend": "guidance"}),
        ]  # fmt: skip
        seconds, log, ended = run(vllm_command, env)
        reading = READING.search(log)
        loaded = None
        if reading:
            stamp = datetime.strptime(f"{ended.year}-{reading.group(1)}", "%Y-%m-%d %H:%M:%S")
            loaded = (ended - stamp).total_seconds()
        parsed = parse(vllm_out, source)
        results["vllm_run_batch"] = {
            "command": "python -m vllm.entrypoints.openai.run_batch " + " ".join(vllm_command[3:]),
            "wall_seconds": round(seconds, 1),
            "rows_per_s_wall": round(args.lines / seconds, 3),
            "seconds_after_engine_up": loaded,
            "rows_per_s_engine_up": round(args.lines / loaded, 3) if loaded else None,
            "answered": len(parsed["answers"]),
            "in_input_order": parsed["in_input_order"],
        }
        jurist_command = [
            sys.executable, "-m", "jurist", "batch", str(source), "-o", str(jurist_out), "-q",
            "--model-map", f"gpt-4o-mini={model}", "--engine-param", f"kv_cache_memory_bytes={kv_bytes}",
            "--summary-json", str(Path(folder) / "summary.json"),
        ]  # fmt: skip
        seconds, _, _ = run(jurist_command, env)
        summary = json.loads((Path(folder) / "summary.json").read_text())
        jurist_parsed = parse(jurist_out, source)
        results["jurist_batch"] = {
            "command": "jurist " + " ".join(jurist_command[3:]),
            "wall_seconds": round(seconds, 1),
            "rows_per_s_wall": round(args.lines / seconds, 3),
            "seconds_after_engine_up": round(summary["seconds"] - summary["load_seconds"], 1),
            "rows_per_s_engine_up": summary["lines_per_second_loaded"],
            "answered": len(jurist_parsed["answers"]),
            "in_input_order": jurist_parsed["in_input_order"],
        }
        same = sum(parsed["answers"].get(k) == v for k, v in jurist_parsed["answers"].items())
    result = {
        "benchmark": "batch_vs_vllm",
        "date": time.strftime("%Y-%m-%d"),
        "command": f"flock /tmp/jurist-engine.lock python benchmarks/batch_vs_vllm.py --lines {args.lines}",
        "model": "SmolLM2-135M-Instruct (embedded default), vLLM CPU engine, 2 cores",
        "lines": args.lines,
        "kv_cache_memory_bytes": kv_bytes,
        **results,
        "identical_answers": same,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "batch_vs_vllm.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
