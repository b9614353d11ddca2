"""Prompt variants of a built-in pairwise judge on the same LLMBar rows: accuracy, order consistency and the
first-shown rate, before and after a change to the prompt.

    python benchmarks/prompt_variants.py --model qwen2.5-coder-0.5b-instruct \\
        --sets Natural,Adversarial_Neighbor --variants base,ask,plain,ask_plain [--mode logprobs]

Each variant is the built-in ``pairwise/preference`` with a few keys changed (:data:`VARIANTS`); all run
on one engine of ``--model`` (the lm_head in float32 for LOGPROBS), over the same rows, both orders, and
are scored by :func:`jurist.bench.quality.quality` (accuracy with a 95 % Wilson interval; both decision
rules). ``base`` is the built-in as it is at the commit the run is made at: the file records which. Results
are merged into ``benchmarks/results/prompt_variants.json`` under (model, mode, sets, variant).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header
from judge_quality import llmbar_rows

ASK = (
    "[User request]\n{question}\n\n[Response A]\n{response_a}\n\n[Response B]\n{response_b}\n\n"
    "Which response follows the user request better: A or B?"
)
PLAIN_FORMAT = (
    '\n\nAnswer with a JSON object whose only key is "judgment": its value is "A" when Response A is '
    'better and "B" when Response B is better.'
)
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    # the task asked again at the end of the user turn, where a small model reads it last
    "ask": {"judge_params.prompt_template": ASK},
    # no example answer: the format's example shows the first label ({"judgment": "A"})
    "plain": {"judge_params.format_instructions": False, "system_suffix": PLAIN_FORMAT},
    "ask_plain": {
        "judge_params.prompt_template": ASK,
        "judge_params.format_instructions": False,
        "system_suffix": PLAIN_FORMAT,
    },
}


def variant_config(name: str, mode: str) -> Any:
    from jurist import load_judge_config

    settings = dict(VARIANTS[name])
    suffix = settings.pop("system_suffix", "")
    if mode == "logprobs":
        settings["judge_params.scoring"] = "LOGPROBS"
    config = load_judge_config("pairwise/preference", settings)
    if suffix:
        system = (config.judge_params.system_instruction or "").rstrip() + suffix
        config = load_judge_config(config, {"judge_params.system_instruction": system})
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--sets", default="Natural,Adversarial_Neighbor")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--mode", default="logprobs", choices=("logprobs", "generation"))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "prompt_variants.json")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")

    from jurist import Engine, InferenceConfig
    from jurist.backends.vllm.backend import VLLMBackend
    from jurist.bench.quality import quality
    from jurist.records import EngineUse

    rows = llmbar_rows(args.sets.split(","), args.limit)
    engine_config = InferenceConfig.model_validate(
        {
            "model": {"model_name": args.model, "model_max_length": 8192},
            "engine_params": {"gpu_memory_utilization": 0.2},
        }
    )
    use = EngineUse(label_scores=args.mode == "logprobs")  # the lm_head in float32, as a LOGPROBS run has
    backend = VLLMBackend(engine_config.model_copy(update={"use": use}))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    results = json.loads(args.out.read_text()) if args.out.exists() else header("prompt_variants")
    try:
        for name in args.variants.split(","):
            engine = Engine(variant_config(name, args.mode), backend)
            backend.reset_prefix_cache()
            started = time.perf_counter()
            outputs = engine.outputs(rows)
            seconds = time.perf_counter() - started
            judge = engine.judges[0]
            report = quality(judge, outputs[judge.name], [r["label"] for r in rows])
            by_set = {
                s: quality(
                    judge,
                    [o for o, r in zip(outputs[judge.name], rows, strict=True) if r["set"] == s],
                    [r["label"] for r in rows if r["set"] == s],
                )["accuracy"]
                for s in args.sets.split(",")
            }
            key = f"{args.model} | {args.mode} | {args.sets} | {name}"
            results.setdefault("runs", {})[key] = {
                "variant": name,
                "changes": VARIANTS[name],
                "commit": commit.stdout.strip(),
                "sets": args.sets.split(","),
                "rows": len(rows),
                "seconds": round(seconds, 1),
                "quality": report,
                "accuracy_by_set": by_set,
                "command": "python benchmarks/prompt_variants.py " + " ".join(sys.argv[1:]),
            }
            args.out.write_text(json.dumps(results, indent=2) + "\n")
            acc, first = report["accuracy"], report["first_shown_rate"]
            sets = ", ".join(f"{s} {a['estimate']:.3f}" for s, a in by_set.items())
            print(f"{key}: accuracy {acc['estimate']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}], first shown "
                  f"{first['estimate']:.3f}, by set {sets}", flush=True)  # fmt: skip
    finally:
        backend.close()


if __name__ == "__main__":
    main()
