"""LOGPROBS scoring vs generation, on the same judge, engine and rows.

    python benchmarks/scoring_modes.py [--rows 200] [--judge generic/instruction_following] [--model PATH]

On LLMBar rows (each Natural-set instruction with each of its two outputs) and the embedded SmolLM2 model
by default. ``generate`` runs the judge as configured (the built-in writes an explanation, then its
verdict, under the judge's regex); ``logprobs`` reads the verdict's label distribution after one prefill.
The prefix cache is emptied before each measurement; the two modes alternate ``--repeats`` times and the
faster run of each is kept. Results go to ``benchmarks/results/scoring_modes.json``.
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
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--judge", default="generic/instruction_following")
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "scoring_modes.json")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")

    from jurist import Engine, InferenceConfig, load_judge_config
    from jurist.backends.vllm import VLLMBackend

    source = SHARED_LLMBAR if SHARED_LLMBAR.exists() else LOCAL_LLMBAR
    records = json.loads(source.read_text(encoding="utf-8"))
    rows = [{"request": r["input"], "response": r[k]} for k in ("output_1", "output_2") for r in records]
    rows = rows[: args.rows]
    backend = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": args.model, "model_max_length": 4096},
                "engine_params": {"gpu_memory_utilization": 0.2},
            }
        )
    )
    engines = {
        "generate": Engine(load_judge_config(args.judge), backend),
        "logprobs": Engine(load_judge_config(args.judge, {"judge_params.scoring": "LOGPROBS"}), backend),
    }
    for engine in engines.values():
        engine.run(rows[:2])  # warm-up

    def measure(mode: str) -> dict[str, Any]:
        engine = engines[mode]
        name = engine.judges[0].name
        backend.reset_prefix_cache()
        started = time.perf_counter()
        table = engine.run(rows)
        seconds = time.perf_counter() - started
        statuses = table[f"{name}.status"].to_pylist()
        verdicts = table[f"{name}.judgment"].to_pylist()
        return {
            "rows": len(rows),
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "ok": statuses.count("ok"),
            "yes_share": round(sum(v is True for v in verdicts) / len(rows), 3),
            "output_tokens": sum(table[f"{name}.completion_tokens"].to_pylist()),
        }

    runs: dict[str, list[dict[str, Any]]] = {"generate": [], "logprobs": []}
    for _ in range(args.repeats):
        for mode in runs:
            runs[mode].append(measure(mode))
            print(mode, runs[mode][-1], flush=True)
    backend.close()
    best = {mode: min(r, key=lambda x: x["seconds"]) for mode, r in runs.items()}
    results = {
        "benchmark": "scoring_modes",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        },
        "data": str(source),
        "judge": args.judge,
        "model": backend.model_id,
        "runs": runs,
        "generate": best["generate"],
        "logprobs": best["logprobs"],
        "logprobs_over_generate": round(best["logprobs"]["rows_per_s"] / best["generate"]["rows_per_s"], 2),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("generate", "logprobs", "logprobs_over_generate")}, indent=2))


if __name__ == "__main__":
    main()
