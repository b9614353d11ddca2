"""A reward head on people's pairs with pooled features, beside the last-token head of distil_recipe.py.

    python benchmarks/reward_features.py [--work /tmp/jurist-reward] [--out FILE]

The rows and split are distil_recipe.py's (LLMBar's 419 pairs and MT-Bench's 200; 500 pairs to fit on, 119
held out, seed 0); the judge its ``graded/instruction_following`` on Qwen2.5-Coder-0.5B, the layer its
reward head's pilot chose (12). For each pooled feature (``--pool last_mean``: the mean of the states of the
response's tokens after the last token's state; ``--pool mean``: the mean alone), ``jurist probe fit
--pairs pair --label-column preferred`` fits a Bradley-Terry head on the 500 fit pairs (every state from
vLLM's pooling runner; C by nested cross-validation, whose accuracy on the fit pairs the report gives), then
``jurist judge dataset`` judges the 238 held-out responses in PROBE with it, and the held-out accuracy is how
often the head scores people's preferred response of a pair higher. The last-token head's figure is
distil_recipe.py's (its committed results: the same rows, split, judge and layer).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, write
from distil_recipe import JUDGE, SMALL, fit_head, judged, pair_accuracy, response_rows, split, write_jsonl

LAYER = "12"
FEATURES = ("last_mean", "mean")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-reward"))
    parser.add_argument("--out", type=Path, default=RESULTS / "reward_features.json")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    rows = response_rows()
    fit_pairs, held_pairs, fit_rows, held = split(rows)
    fit_path, held_path = write_jsonl(work / "fit.jsonl", fit_rows), write_jsonl(work / "held.jsonl", held)
    preferred = {r["pair"]: r["side"] for r in rows if r["preferred"]}
    earlier = json.loads((RESULTS / "distil_recipe.json").read_text())
    results: dict[str, Any] = {
        **header("reward_features"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
        "judge": f"{SMALL} / {JUDGE} / PROBE (reward head on people's pairs, layer {LAYER})",
        "split": {"fit_pairs": len(fit_pairs), "held_pairs": len(held_pairs), "seed": 0},
        "last_token": {
            "held_out": earlier["against_people"]["reward_head_people"],
            "nested_cv_accuracy": earlier["reward_head"]["accuracy"],
            "from": "benchmarks/results/distil_recipe.json (" + earlier["date"] + ")",
        },
    }
    for feature in FEATURES:
        name = f"reward_{feature}"
        labels = ("--label-column", "preferred", "--pairs", "pair", "--layers", LAYER, "--pool", feature)
        fitted = fit_head(work, f"head_{name}", fit_path, *labels)
        run = judged(
            work, f"held_{name}", held_path, SMALL, "--judge_params.scoring", "PROBE",
            "--judge_params.probe", str(fitted["path"]),
        )  # fmt: skip
        report = fitted["report"]
        results[feature] = {
            "held_out": pair_accuracy(run["scores"], held_pairs, preferred),
            "nested_cv_accuracy": report.get("accuracy"),
            "c": report.get("c"),
            "baselines": report.get("baselines"),
            "feature_passes": report.get("feature_passes"),
        }
        write(results, args.out)
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write(results, args.out)
    print(json.dumps({k: results[k]["held_out"] for k in ("last_token", *FEATURES)}, indent=1))


if __name__ == "__main__":
    main()
