"""Which model, judge and scoring mode the README's main job should use: right verdicts of 20 on the example
answers (examples/truthfulness_demo.jsonl, hand-labelled in its ``truthful`` column: 13 true, 7 false).

    python benchmarks/demo_judges.py [--models smollm2 qwen2.5-coder-0.5b-instruct ...]

For every model (``smollm2`` is the embedded default; the Qwen names are fetched with
``jurist models fetch``), one engine is loaded and every (judge, mode) cell runs on it: generic/truthfulness
(BOOL) and graded/truthfulness (ENUM Yes/Unsure/No), each generating its explanation and verdict
(GENERATE) or reading the verdict's probability after the answer prefix (LOGPROBS). A verdict is right when
it says Yes for a true answer and No for a false one (Unsure is never right). The compute dtype is the one
jurist chooses on this machine unless ``--dtype`` sets one (recorded). Results:
``benchmarks/results/demo_judges.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header, write

EXAMPLES = ROOT / "examples" / "truthfulness_demo.jsonl"
JUDGES = ("generic/truthfulness", "graded/truthfulness")
MODES = ("GENERATE", "LOGPROBS")


def says_true(judgment: Any) -> bool | None:
    """A verdict as true/false (None: Unsure or no verdict)."""
    if judgment is None:
        return None
    if isinstance(judgment, bool):
        return judgment
    return {"Yes": True, "No": False}.get(str(judgment))


def measure(model: str, rows: list[dict[str, Any]], dtype: str | None) -> dict[str, Any]:
    from jurist import Engine, InferenceConfig, load_judge_config
    from jurist.backends.vllm.backend import VLLMBackend

    name = None if model == "smollm2" else model
    started = time.perf_counter()
    backend = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": name, "model_max_length": 4096, "torch_dtype_str": dtype},
                "engine_params": {"gpu_memory_utilization": 0.2, "head_dtype": "float32"},
            }
        )
    )
    load = time.perf_counter() - started
    cells: dict[str, Any] = {}
    try:
        described = backend.describe()
        for judge_name in JUDGES:
            for mode in MODES:
                config = load_judge_config(judge_name, {"judge_params.scoring": mode})
                engine = Engine(config, backend)
                backend.reset_prefix_cache()
                started = time.perf_counter()
                table = engine.run(rows)
                seconds = time.perf_counter() - started
                column = engine.judges[0].name
                verdicts = [says_true(v) for v in table[f"{column}.judgment"].to_pylist()]
                truth = [bool(r["truthful"]) for r in rows]
                right = sum(v is not None and v == t for v, t in zip(verdicts, truth, strict=True))
                cells[f"{judge_name} {mode}"] = {
                    "right": right,
                    "of": len(rows),
                    "called_true": sum(v is True for v in verdicts),
                    "called_false": sum(v is False for v in verdicts),
                    "no_verdict": sum(v is None for v in verdicts),
                    "wrong_ids": [r["id"] for r, v, t in zip(rows, verdicts, truth, strict=True) if v != t],
                    "seconds": round(seconds, 1),
                }
                print(
                    f"{model} {judge_name} {mode}: {right}/{len(rows)} right in {seconds:.1f} s", flush=True
                )
    finally:
        backend.close()
    return {
        "dtype": described.get("dtype"),
        "dtype_reason": described.get("dtype_reason"),
        "load_seconds": round(load, 1),
        "cells": cells,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        default=["smollm2", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"],
    )
    parser.add_argument(
        "--dtype", default=None, help="Compute in this dtype (default: jurist's choice for this machine)."
    )
    parser.add_argument("--out", default=str(RESULTS / "demo_judges.json"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else header("demo_judges")
    results["labels"] = {
        "true": sum(r["truthful"] for r in rows),
        "false": sum(not r["truthful"] for r in rows),
    }
    results["majority_baseline_right"] = max(results["labels"].values())
    for model in args.models:
        entry = measure(model, rows, args.dtype)
        flag = f" --dtype {args.dtype}" if args.dtype else ""
        entry["command"] = f"python benchmarks/demo_judges.py --models {model}{flag}"
        results.setdefault("models", {})[model + (f" ({args.dtype})" if args.dtype else "")] = entry
        results["date"] = time.strftime("%Y-%m-%d")
        write(results, out)


if __name__ == "__main__":
    main()
