"""Which rows to label: the coverage and width of the corrected estimate under each sampling strategy.

    python benchmarks/label_sampling.py [--rows 10000] [--budget 200] [--draws 1000] [--seed 0]

Each draw makes a fresh dataset of ``--rows`` rows judged by a yes/no judge in LOGPROBS mode: the judge's
P(yes) is ``p = sigmoid(z)`` with ``z ~ N(0, 2.5²)`` (most rows confident, some unsure), its score is ``p``
and its confidence ``max(p, 1 - p)``. The human labels come from one of two worlds:

* ``informative``: the label is yes with probability ``sigmoid(z + 0.6)``: the judge is biased (its mean
  is about 0.07 too low) and its errors sit where it is unsure, so its confidence predicts them;
* ``uninformative``: the label equals the judge's verdict with probability 0.8 on every row, however sure
  the judge says it is: its confidence tells nothing about its errors.

The target is the mean label over the dataset's rows. For each strategy of ``jurist label`` (uniform,
stratified by the verdict, active) the draw chooses rows with the plan's own code
(:func:`jurist.labels.sampling.design`, the budget in labels) and estimates the mean with the code
``jurist estimate`` runs (:func:`jurist.stats.estimate.corrected_mean`: plain PPI++ for equal
probabilities, inverse-probability-weighted PPI++ for active). It counts how often the 95 % interval
covers the true mean and reports the median width, the median number of labels drawn, and the ratio of
active's median width to uniform's: below 1, active needs fewer labels for the same width (about the
square of the ratio). Results: ``benchmarks/results/label_sampling.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS, header, write

WORLDS = ("informative", "uninformative")
STRATEGIES = ("uniform", "stratified", "active")


def dataset(world: str, rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(the judge's P(yes) per row, the human label per row as 1.0 / 0.0) of one simulated dataset."""
    z = rng.normal(0.0, 2.5, rows)
    p = 1.0 / (1.0 + np.exp(-z))
    if world == "informative":
        labels = rng.random(rows) < 1.0 / (1.0 + np.exp(-(z + 0.6)))
    else:
        verdict = p > 0.5
        labels = np.where(rng.random(rows) < 0.8, verdict, ~verdict)
    return p, labels.astype(float)


def one_draw(world: str, strategy: str, rows: int, budget: int, rng: np.random.Generator) -> dict[str, Any]:
    """One dataset, one plan, one estimate: whether its interval covers the truth, and its width."""
    from jurist.labels.file import Strategy
    from jurist.labels.sampling import design
    from jurist.stats.estimate import corrected_mean

    p, labels = dataset(world, rows, rng)
    verdicts = ["yes" if v > 0.5 else "no" for v in p]
    confidence = np.maximum(p, 1.0 - p)
    probabilities, drawn = design(
        Strategy(strategy),
        rows,
        budget,
        rng,
        groups=verdicts if strategy == "stratified" else None,
        confidences=[float(c) for c in confidence] if strategy == "active" else None,
    )
    targets: list[float | None] = [None] * rows
    for i in drawn:
        targets[int(i)] = float(labels[i])
    estimate = corrected_mean(targets, [float(v) for v in p], [float(v) for v in probabilities], 0.95)
    truth = float(labels.mean())
    return {
        "covered": estimate.ppi.low <= truth <= estimate.ppi.high,
        "width": estimate.ppi.width,
        "labels": len(drawn),
        "error": estimate.ppi.estimate - truth,
        "judge_bias": float(p.mean()) - truth,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--draws", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "label_sampling.json")
    args = parser.parse_args()

    worlds: dict[str, Any] = {}
    for w, world in enumerate(WORLDS):
        per_strategy: dict[str, Any] = {}
        for s, strategy in enumerate(STRATEGIES):
            rng = np.random.default_rng([args.seed, w, s])
            runs = [one_draw(world, strategy, args.rows, args.budget, rng) for _ in range(args.draws)]
            per_strategy[strategy] = {
                "coverage": float(np.mean([r["covered"] for r in runs])),
                "median_width": round(float(np.median([r["width"] for r in runs])), 5),
                "median_labels": float(np.median([r["labels"] for r in runs])),
                "mean_error": round(float(np.mean([r["error"] for r in runs])), 5),
                "mean_judge_bias": round(float(np.mean([r["judge_bias"] for r in runs])), 4),
            }
        ratio = per_strategy["active"]["median_width"] / per_strategy["uniform"]["median_width"]
        worlds[world] = {
            "strategies": per_strategy,
            "active_over_uniform_median_width": round(ratio, 4),
            "labels_for_uniform_width_share": round(ratio**2, 4),
        }
    results = {
        **header("label_sampling"),
        "data": "simulated",
        "rows": args.rows,
        "budget": args.budget,
        "draws": args.draws,
        "confidence": 0.95,
        "floor": 0.2,
        "worlds": worlds,
    }
    write(results, args.out)
    print(json.dumps({k: v for k, v in results.items() if k not in ("machine", "versions")}, indent=2))


if __name__ == "__main__":
    main()
