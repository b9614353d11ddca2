"""Pairwise scheduling: both orders of every row in one batch vs two separate passes, on one engine.

    python benchmarks/pairwise_schedule.py [--rows 100] [--repeats 2] [--model PATH] [--out FILE]

On LLMBar's Natural set with the built-in ``pairwise/preference`` judge and the embedded SmolLM2 model
by default. ``one_batch`` is what jurist does: the two orders of a row are adjacent requests in one call,
so the second order finds the judge's prefix (and the question) in the prefix cache. ``two_passes``
sends every row's first order in one call, then every row's second order in another, as a harness that
runs the judge twice would. The prefix cache is emptied before each measurement; the two schedules
alternate ``--repeats`` times and the faster run of each is kept. Results go to
``benchmarks/results/pairwise_schedule.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_LLMBAR = ROOT.parent / "shared" / "data" / "llmbar" / "Natural.json"
LOCAL_LLMBAR = ROOT / "examples" / "llmbar" / "Natural.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--model", default=None)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "pairwise_schedule.json"
    )
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")

    from jurist import Engine, InferenceConfig, load_judge_config
    from jurist.backends.vllm import VLLMBackend

    source = SHARED_LLMBAR if SHARED_LLMBAR.exists() else LOCAL_LLMBAR
    rows = json.loads(source.read_text(encoding="utf-8"))[: args.rows]
    backend = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": args.model, "model_max_length": 4096},
                "engine_params": {"gpu_memory_utilization": 0.2},
            }
        )
    )
    engine = Engine(load_judge_config("pairwise/preference"), backend)
    judge = engine.judges[0]
    engine.run(rows[:2])  # warm-up
    per_row = [judge.requests_for(row) for row in rows]

    def measure(schedule: str) -> dict[str, Any]:
        backend.reset_prefix_cache()
        before = backend.prefix_cache_stats()
        started = time.perf_counter()
        if schedule == "one_batch":
            completions = backend.generate([r for pair in per_row for r in pair])
        else:
            first = backend.generate([pair[0] for pair in per_row])
            second = backend.generate([pair[1] for pair in per_row])
            completions = [c for pair in zip(first, second, strict=True) for c in pair]
        seconds = time.perf_counter() - started
        after = backend.prefix_cache_stats()
        outputs = [judge.combine(completions[2 * i : 2 * i + 2]) for i in range(len(rows))]
        queries = after["queries"] - before["queries"]
        return {
            "rows": len(rows),
            "requests": len(completions),
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "prefix_cache_hit_rate": round((after["hits"] - before["hits"]) / queries, 3)
            if queries
            else None,
            "ok": sum(o.status == "ok" for o in outputs),
        }

    runs: dict[str, list[dict[str, Any]]] = {"one_batch": [], "two_passes": []}
    for _ in range(args.repeats):
        for schedule in ("one_batch", "two_passes"):
            runs[schedule].append(measure(schedule))
            print(schedule, runs[schedule][-1], flush=True)
    backend.close()
    best = {k: min(v, key=lambda r: r["seconds"]) for k, v in runs.items()}
    results = {
        "benchmark": "pairwise_schedule",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        },
        "data": str(source),
        "judge": "pairwise/preference",
        "model": backend.model_id,
        "runs": runs,
        "one_batch": best["one_batch"],
        "two_passes": best["two_passes"],
        "one_batch_over_two_passes": round(
            best["one_batch"]["rows_per_s"] / best["two_passes"]["rows_per_s"], 3
        ),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(
        json.dumps(
            {k: results[k] for k in ("one_batch", "two_passes", "one_batch_over_two_passes")}, indent=2
        )
    )


if __name__ == "__main__":
    main()
