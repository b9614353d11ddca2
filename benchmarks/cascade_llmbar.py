"""A cascade on the real engine: stage 1 the embedded SmolLM2 (pairwise, LOGPROBS) on vLLM, stage 2 a
scripted stand-in for a bigger judge, over LLMBar rows whose labels are the calibration set.

The stand-in (no bigger model is on this machine) gives, per row, a confidence ``c`` uniform in [0.5, 1)
from a seeded hash and a verdict that agrees with LLMBar's label with probability ``0.6 + 0.4 c``. Its
costs (no tokens, microseconds) are not a real model's: of the compute saved, only the stage-2 requests
(and rows) avoided mean anything here; the report's token and second figures for stage 2 are the
stand-in's.

    flock /tmp/jurist-engine.lock python benchmarks/cascade_llmbar.py [--files Natural.json ...]

Writes benchmarks/results/cascade_llmbar.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from common import RESULTS, llmbar_source, run_calibrated_cascade, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", default=["Natural.json"])
    parser.add_argument("--target", type=float, default=0.8)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--out", type=Path, default=RESULTS / "cascade_llmbar.json")
    args = parser.parse_args()
    from jurist.backends import create_backend
    from jurist.backends.scripted import ScriptedBackend
    from jurist.config.cascade import stage_configs
    from jurist.config.inference import InferenceConfig
    from jurist.records import LabelRequest, LabelScores

    folder = llmbar_source().parent
    rows = [r for name in args.files for r in json.loads((folder / name).read_text())]
    better = {}
    for r in rows:
        better[r["output_1"]] = int(r["label"]) == 1
        better[r["output_2"]] = int(r["label"]) != 1

    def stand_in(request: LabelRequest) -> LabelScores:
        text = request.messages[-1].content
        first = text.split("[Response A]\n", 1)[1].split("\n\n[Response B]\n", 1)[0].strip()
        second = text.split("\n\n[Response B]\n", 1)[1].strip()
        key = "\x1f".join(sorted((first, second)))

        def uniform(salt: str) -> float:
            return int.from_bytes(hashlib.sha256((salt + key).encode()).digest()[:8], "big") / 2**64

        c = 0.5 + 0.5 * uniform("c")
        right = uniform("r") < 0.6 + 0.4 * c
        first_better = better.get(first, better.get(first + "\n", True))
        p_first = c if (first_better if right else not first_better) else 1 - c
        labels = dict(zip(request.labels, (math.log(p_first), math.log(1 - p_first)), strict=True))
        return LabelScores(labels, "stop")

    def factory(config: InferenceConfig) -> Any:
        if config.model.model_name == "stand-in":
            return ScriptedBackend([], model_id="stand-in (scripted)", labels=stand_in)
        return create_backend(config)

    common = {
        "judge_params.scoring": "LOGPROBS",
        "judge_params.include_explanation": False,
        "inference_config.model.model_max_length": 4096,
    }
    small = {
        **common,
        "inference_config.engine_params": {"gpu_memory_utilization": 0.2, "enforce_eager": True},
    }
    big = {**common, "inference_config.model.model_name": "stand-in"}
    from jurist.config.loading import load_judge_config

    configs = stage_configs(
        [load_judge_config("pairwise/preference", small, name="smollm2"),
         load_judge_config("pairwise/preference", big, name="stand_in")]
    )  # fmt: skip
    outcome = run_calibrated_cascade(configs, rows, args.target, args.delta, backend_factory=factory)
    data, meta, agree = outcome.rows, outcome.cascade, outcome.agreement
    truth = ["a" if int(r["label"]) == 1 else "b" for r in data]
    p_a = [r["smollm2.p_a"] for r in data]
    stage_1 = {
        "winners": dict(Counter(r["smollm2.winner"] for r in data)),
        "position_consistent_share": sum(bool(r["smollm2.position_consistent"]) for r in data) / len(data),
        "mean_p_first_by_order": {
            key: sum(r[f"smollm2.{key}_p_first"] for r in data) / len(data) for key in ("ab", "ba")
        },
        "accuracy_of_order_averaged_p_a": sum(
            (p > 0.5 and t == "a") or (p < 0.5 and t == "b") for p, t in zip(p_a, truth, strict=True)
        )
        / len(data),
    }
    result = {
        "benchmark": "cascade_llmbar",
        "rows": len(rows),
        "files": args.files,
        "stage_1": "embedded SmolLM2-135M-Instruct on vLLM (CPU), pairwise/preference, LOGPROBS",
        "stage_2": "scripted stand-in for a bigger judge: confidence c ~ U[0.5, 1), agrees with the label "
        "with probability 0.6 + 0.4 c",
        "target_agreement": args.target,
        "delta": args.delta,
        "notes": outcome.notes,
        "calibration": meta["calibration"],
        "report": meta["report"],
        "stage_1_diagnostics": stage_1,
        "agreement_with_labels": {name: agree[name] for name in ("smollm2", "stand_in", "cascade")},
        "summary": {k: outcome.summary[k] for k in ("rows", "seconds", "model_load_seconds", "requests")},
    }
    write(result, args.out)
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
