"""A cascade whose first stage is a generation judge sampled N times (its confidence the samples'
agreement), on the real engine: the embedded SmolLM2 on vLLM, ``generic/instruction_following`` (yes/no)
over LLMBar's responses, each labelled by whether it is the one that follows the instruction (LLMBar
builds every pair so that exactly one does). Stage 2 is the same judge scored with LOGPROBS on the same
model (one engine; no bigger model is on this machine). The labels are the calibration set.

Besides the cascade's own report it records how often stage 1's verdict is right at each level of sample
agreement: whether the agreement is a usable confidence for this model at all.

    flock /tmp/jurist-engine.lock python benchmarks/cascade_samples.py [--samples 5] [--pairs 100]

Writes benchmarks/results/cascade_samples.json.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from common import RESULTS, llmbar_labelled_answers, run_calibrated_cascade, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--target", type=float, default=0.7)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--out", type=Path, default=RESULTS / "cascade_samples.json")
    args = parser.parse_args()
    from jurist.config.cascade import stage_configs
    from jurist.config.loading import load_judge_config

    rows = llmbar_labelled_answers(args.pairs)
    common = {
        "judge_params.include_explanation": False,
        "inference_config.model.model_max_length": 4096,
        "inference_config.engine_params": {"gpu_memory_utilization": 0.2, "enforce_eager": True},
    }
    sampled = {
        **common,
        "judge_params.samples": args.samples,
        "inference_config.generation.temperature": args.temperature,
    }
    scored = {**common, "judge_params.scoring": "LOGPROBS"}
    configs = stage_configs(
        [load_judge_config("generic/instruction_following", sampled, name="sampled"),
         load_judge_config("generic/instruction_following", scored, name="logprobs")]
    )  # fmt: skip
    outcome = run_calibrated_cascade(configs, rows, args.target, args.delta)
    by_level: dict[float, list[bool]] = defaultdict(list)
    for row in outcome.rows:
        if row["sampled.status"] == "ok":
            level = round(row["sampled.sample_agreement"], 3)
            by_level[level].append(row["sampled.judgment"] == row["label"])
    levels = {
        str(level): {"rows": len(right), "agreement_with_labels": round(sum(right) / len(right), 4)}
        for level, right in sorted(by_level.items())
    }
    result = {
        "benchmark": "cascade_samples",
        "rows": len(rows),
        "file": "Natural.json",
        "stage_1": f"embedded SmolLM2-135M-Instruct on vLLM (CPU), generic/instruction_following, "
        f"{args.samples} samples at temperature {args.temperature}",
        "stage_2": "the same model and judge, LOGPROBS",
        "target_agreement": args.target,
        "delta": args.delta,
        "notes": outcome.notes,
        "calibration": outcome.cascade["calibration"],
        "report": outcome.cascade["report"],
        "stage_1_agreement_with_labels_by_sample_agreement": levels,
        "yes_share_of_labels": sum(r["label"] for r in rows) / len(rows),
        "agreement_with_labels": {
            name: outcome.agreement[name]
            for name in ("sampled", "logprobs", "cascade")
            if name in outcome.agreement
        },
        "summary": {k: outcome.summary[k] for k in ("rows", "seconds", "model_load_seconds", "requests")},
    }
    write(result, args.out)
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
