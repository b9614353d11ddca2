"""The lm_head in float32 against the model's bfloat16: exact ties and distinct values of LOGPROBS scores,
and the speed of both, on one real model.

    python benchmarks/head_dtype.py [--model qwen2.5-coder-0.5b-instruct] [--rows 30] [--generate-rows 8]

``pairwise/preference`` with ``scoring: LOGPROBS`` on the first ``--rows`` rows of LLMBar Natural, both
orders, once with ``engine_params.head_dtype: float32`` (jurist's default) and once with ``model`` (the
weights' bfloat16); then the same judge generating its explanation and verdict on the first
``--generate-rows`` rows, both ways, for the cost of the float32 head when tokens are decoded. One engine
at a time (each loaded, measured, closed); the prefix cache is emptied before each measurement. A row
"ties" when its order-averaged ``p_a`` is exactly 0.5. Results: ``benchmarks/results/head_dtype.json``
(one entry per model, merged into the file).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, llmbar_records


def engine_config(model: str | None, head: str) -> dict[str, Any]:
    return {
        "model": {"model_name": model, "model_max_length": 8192},
        "engine_params": {"gpu_memory_utilization": 0.2, "head_dtype": head},
    }


def measure(model: str | None, head: str, rows: list[dict[str, Any]], generate_rows: int) -> dict[str, Any]:
    from jurist import Engine, InferenceConfig, load_judge_config
    from jurist.backends.vllm.backend import VLLMBackend

    started = time.perf_counter()
    backend = VLLMBackend(InferenceConfig.model_validate(engine_config(model, head)))
    load = time.perf_counter() - started
    try:
        scored = load_judge_config("pairwise/preference", {"judge_params.scoring": "LOGPROBS"})
        logprobs = Engine(scored, backend)
        generate = Engine(load_judge_config("pairwise/preference"), backend)
        logprobs.run(rows[:1])  # the first call's allocations are not the score's cost
        backend.reset_prefix_cache()
        started = time.perf_counter()
        table = logprobs.run(rows)
        seconds = time.perf_counter() - started
        p_a = table["preference.p_a"].to_pylist()
        backend.reset_prefix_cache()
        started = time.perf_counter()
        generated = generate.run(rows[:generate_rows])
        generate_seconds = time.perf_counter() - started
        described = backend.describe()
    finally:
        backend.close()
    valid = [p for p in p_a if p is not None]
    tokens = sum(generated["preference.completion_tokens"].to_pylist())
    return {
        "head_dtype": described.get("head_dtype"),
        "model_dtype": described.get("dtype"),
        "load_seconds": round(load, 1),
        "logprobs": {
            "rows": len(rows),
            "scored": len(valid),
            "exact_ties": sum(p == 0.5 for p in valid),
            "distinct_p_a": len(set(valid)),
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "p_a": valid,
        },
        "generate": {
            "rows": generate_rows,
            "ok": generated["preference.status"].to_pylist().count("ok"),
            "completion_tokens": tokens,
            "seconds": round(generate_seconds, 2),
            "rows_per_s": round(generate_rows / generate_seconds, 3),
            "tokens_per_s": round(tokens / generate_seconds, 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--generate-rows", type=int, default=8)
    parser.add_argument("--out", default=str(RESULTS / "head_dtype.json"))
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    records = llmbar_records(args.rows)
    runs = {head: measure(args.model, head, records, args.generate_rows) for head in ("float32", "model")}
    fp32, model = runs["float32"], runs["model"]
    entry = {
        "command": f"python benchmarks/head_dtype.py --model {args.model} --rows {args.rows} "
        f"--generate-rows {args.generate_rows}",
        "runs": runs,
        "logprobs_speed_ratio_fp32_over_model": round(
            fp32["logprobs"]["rows_per_s"] / model["logprobs"]["rows_per_s"], 3
        ),
        "generate_speed_ratio_fp32_over_model": round(
            fp32["generate"]["tokens_per_s"] / model["generate"]["tokens_per_s"], 3
        ),
    }
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else header("head_dtype")
    results.setdefault("models", {})[args.model] = entry
    results["date"] = time.strftime("%Y-%m-%d")
    out.write_text(json.dumps(results, indent=2) + "\n")
    for head, run in runs.items():
        lp, gen = run["logprobs"], run["generate"]
        print(
            f"{args.model} head {head}: {lp['exact_ties']}/{lp['scored']} exact ties, {lp['distinct_p_a']} "
            f"distinct p_a, {lp['rows_per_s']} rows/s (LOGPROBS); {gen['tokens_per_s']} tokens/s generating"
        )


if __name__ == "__main__":
    main()
