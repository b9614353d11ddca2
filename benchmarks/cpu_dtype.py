"""bfloat16 against float32 on this machine's CPU: the same rows through vLLM's CPU engine in both dtypes,
with the CPU's flags recorded, and the dtype jurist chooses here when the config sets none.

    python benchmarks/cpu_dtype.py [--model qwen2.5-coder-0.5b-instruct] [--rows 32] [--generate-rows 8]
                                   [--rounds 2]

generic/truthfulness on the first ``--rows`` pointwise LLMBar rows, scored by LOGPROBS (one prefill per
row: prompt tokens/s), then generating its explanation and verdict on the first ``--generate-rows`` rows
(completion tokens/s: the two dtypes may write answers of different lengths, so tokens/s, not rows/s, is
compared). Each mode gets the engine a run gives it: LOGPROBS the float32 lm_head jurist asks for when a
judge reads label probabilities, generation the model's own (on CPU vLLM casts a float32 head's weight at
every decoding step, which would slow bfloat16 generation). Each round measures both dtypes, in alternating
order (bf16 first in odd rounds), empties the prefix cache before each measurement and runs one row first
so that the first call's allocations are not counted. The ratios are float32 over bfloat16 within a round;
the JSON keeps every round. Results: ``benchmarks/results/cpu_dtype.json`` (one entry per CPU model,
merged into the file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, llmbar_pointwise_rows

DTYPES = ("bfloat16", "float32")


def engine(model: str, dtype: str, head: str) -> Any:
    from jurist import InferenceConfig
    from jurist.backends.vllm.backend import VLLMBackend

    config = {
        "model": {"model_name": model, "model_max_length": 4096, "torch_dtype_str": dtype},
        "engine_params": {"gpu_memory_utilization": 0.2, "head_dtype": head},
    }
    return VLLMBackend(InferenceConfig.model_validate(config))


def timed(run: Any, rows: list[dict[str, Any]], backend: Any) -> tuple[Any, float]:
    run(rows[:1])  # the first call's allocations are not counted
    backend.reset_prefix_cache()
    started = time.perf_counter()
    table = run(rows)
    return table, time.perf_counter() - started


def measure(model: str, dtype: str, rows: list[dict[str, Any]], generate_rows: int) -> dict[str, Any]:
    """Both modes as a run sets up their engines: LOGPROBS with the float32 head jurist asks for when a
    judge reads label probabilities, generation with the model's own head (head_dtype auto)."""
    from jurist import Engine, load_judge_config

    started = time.perf_counter()
    backend = engine(model, dtype, "float32")
    load = time.perf_counter() - started
    try:
        scored = Engine(
            load_judge_config("generic/truthfulness", {"judge_params.scoring": "LOGPROBS"}), backend
        )
        table, prefill_seconds = timed(scored.run, rows, backend)
        described = backend.describe()
    finally:
        backend.close()
    backend = engine(model, dtype, "auto")
    try:
        generate = Engine(load_judge_config("generic/truthfulness"), backend)
        generated, generate_seconds = timed(generate.run, rows[:generate_rows], backend)
        head = backend.describe().get("head_dtype")
    finally:
        backend.close()
    prompt_tokens = sum(table["truthfulness.prompt_tokens"].to_pylist())
    completion_tokens = sum(generated["truthfulness.completion_tokens"].to_pylist())
    return {
        "dtype": described.get("dtype"),
        "load_seconds": round(load, 1),
        "logprobs": {
            "rows": len(rows),
            "head_dtype": described.get("head_dtype"),
            "ok": table["truthfulness.status"].to_pylist().count("ok"),
            "prompt_tokens": prompt_tokens,
            "seconds": round(prefill_seconds, 2),
            "prompt_tokens_per_s": round(prompt_tokens / prefill_seconds, 1),
        },
        "generate": {
            "rows": generate_rows,
            "head_dtype": head,
            "ok": generated["truthfulness.status"].to_pylist().count("ok"),
            "completion_tokens": completion_tokens,
            "seconds": round(generate_seconds, 2),
            "rows_per_s": round(generate_rows / generate_seconds, 3),
            "completion_tokens_per_s": round(completion_tokens / generate_seconds, 1),
        },
    }


def cpu() -> dict[str, Any]:
    """The CPU's model, its bfloat16 flags, torch's view of it and jurist's choice on it."""
    import torch

    from jurist.backends.local.dtype import bf16_features, choose_dtype, cpu_flags
    from jurist.engine.metadata import machine

    flags = cpu_flags()
    chosen = choose_dtype(None, on_cpu=True)
    wide = sorted(f for f in flags if f.startswith(("avx", "amx")) or f in ("fma", "f16c", "bf16"))
    return {
        "model": machine()["cpu"],
        "vector_flags": wide,
        "bf16_features": list(bf16_features()),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "jurist_chooses": chosen.dtype,
        "why": chosen.reason,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--generate-rows", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS / "cpu_dtype.json"))
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    rows = llmbar_pointwise_rows(args.rows)
    rounds = []
    for index in range(args.rounds):
        order = DTYPES if index % 2 == 0 else DTYPES[::-1]
        runs = {dtype: measure(args.model, dtype, rows, args.generate_rows) for dtype in order}
        bf16, fp32 = runs["bfloat16"], runs["float32"]
        rounds.append(
            {
                "order": list(order),
                "runs": runs,
                "prefill_ratio_fp32_over_bf16": round(
                    fp32["logprobs"]["prompt_tokens_per_s"] / bf16["logprobs"]["prompt_tokens_per_s"], 3
                ),
                "generate_ratio_fp32_over_bf16": round(
                    fp32["generate"]["completion_tokens_per_s"] / bf16["generate"]["completion_tokens_per_s"],
                    3,
                ),
            }
        )
        print(
            f"round {index + 1}: prefill bf16 {bf16['logprobs']['prompt_tokens_per_s']} tok/s, "
            f"fp32 {fp32['logprobs']['prompt_tokens_per_s']} tok/s; generate bf16 "
            f"{bf16['generate']['completion_tokens_per_s']} tok/s, "
            f"fp32 {fp32['generate']['completion_tokens_per_s']} tok/s",
            flush=True,
        )
    machine_cpu = cpu()
    entry = {
        "command": f"python benchmarks/cpu_dtype.py --model {args.model} --rows {args.rows} "
        f"--generate-rows {args.generate_rows} --rounds {args.rounds}",
        "model": args.model,
        "cpu": machine_cpu,
        "rounds": rounds,
        "median_prefill_ratio_fp32_over_bf16": statistics.median(
            r["prefill_ratio_fp32_over_bf16"] for r in rounds
        ),
        "median_generate_ratio_fp32_over_bf16": statistics.median(
            r["generate_ratio_fp32_over_bf16"] for r in rounds
        ),
    }
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else header("cpu_dtype")
    results.setdefault("machines", {})[
        machine_cpu["model"] + " / " + ",".join(machine_cpu["bf16_features"])
    ] = entry
    results["date"] = time.strftime("%Y-%m-%d")
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: v for k, v in entry.items() if k != "rounds"}, indent=2))


if __name__ == "__main__":
    main()
