"""A busy, a broken and a hung OpenAI-compatible server on 127.0.0.1, judged through ``jurist judge dataset``.

    python benchmarks/faults_remote.py [--rows 200] [--out FILE]

1. ``flaky``: every third request answered 429 with ``Retry-After: 1``, every fifth 500, the retry settings
   at their defaults: the rows ok, the requests sent, the wall time;
2. ``hung``: a server that accepts every connection and never answers, with ``timeout_s 1`` and
   ``max_retry_wait_s 3``: the exit code, the rows' statuses and the wall time (bounded by the budget).

Results go to ``benchmarks/results/faults_remote.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common import RESULTS, ROOT, header, write

sys.path.insert(0, str(ROOT / "tests" / "faults"))
from fault_servers import fault_server  # type: ignore[import-not-found]

JUDGE = """\
judge_params:
  prompt_template: "Q: {question}"
  include_explanation: true
inference_config:
  engine: REMOTE_VLLM
  model: {model_name: fake}
"""


def judge(folder: Path, rows: int, url: str, *extra: str) -> dict[str, Any]:
    config, data, out = folder / "judge.yaml", folder / "rows.jsonl", folder / "out.parquet"
    config.write_text(JUDGE)
    data.write_text("".join(json.dumps({"question": f"good question {i}"}) + "\n" for i in range(rows)))
    command = [sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(config), "-i", str(data)]
    command += ["-o", str(out), "-q", "--inference_config.remote_params.api_url", url, *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env, check=False)
    seconds = time.perf_counter() - started
    table = pq.read_table(out) if out.exists() else None
    statuses = collections.Counter(table.column("judge.status").to_pylist()) if table is not None else {}
    return {"exit_code": done.returncode, "seconds": round(seconds, 1), "statuses": dict(statuses)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "faults_remote.json")
    args = parser.parse_args()
    results = header("faults_remote")
    with tempfile.TemporaryDirectory() as tmp, fault_server(busy_every=3, broken_every=5) as server:
        flaky = judge(Path(tmp), args.rows, server.url)
        flaky.update(rows=args.rows, requests_sent=server.count, answered=server.answered)
    results["flaky"] = {"server": "1/3 429 Retry-After 1, 1/5 500", "settings": "defaults", **flaky}
    print("flaky", flaky)
    budget = ["--inference_config.remote_params.timeout_s", "1"]
    budget += ["--inference_config.remote_params.max_retry_wait_s", "3"]
    with tempfile.TemporaryDirectory() as tmp, fault_server(hold=600) as server:
        hung = judge(Path(tmp), 12, server.url, *budget)
        hung.update(rows=12, requests_sent=server.count)
    results["hung"] = {"server": "never answers", "settings": "timeout_s 1, max_retry_wait_s 3", **hung}
    print("hung", hung)
    write(results, args.out)


if __name__ == "__main__":
    main()
