"""Coverage of PPI++ intervals by simulation: a biased judge, a known true mean, many labelled slices.

    python benchmarks/ppi_coverage.py [--rows 20000] [--labels 200] [--draws 1000] [--seed 0]

Each draw makes a fresh population: human labels (1 with probability 0.7, the true mean) and a judge's
P(yes) that leans toward yes (a logistic of 1.5 + 2 (label - 0.5) + normal noise), so that the judge's own
mean is about 0.1 too high. ``--labels`` random rows keep their labels; the rest only have the judge's
score. It counts how often the 95 % PPI++ interval (:func:`jurist.stats.estimate.ppi_mean`) covers 0.7,
and the same for the labels-only interval and the judge-only interval, with the median ratio of the PPI++
interval's width to the labels-only one. Results: ``benchmarks/results/ppi_coverage.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from common import RESULTS, header, write

TRUE_MEAN = 0.7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--draws", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "ppi_coverage.json")
    args = parser.parse_args()

    from jurist.stats.estimate import ppi_mean

    rng = np.random.default_rng(args.seed)
    covered = {"ppi": 0, "labels_only": 0, "judge_only": 0}
    ratios, lambdas, gains, judge_means = [], [], [], []
    for _ in range(args.draws):
        labels = rng.binomial(1, TRUE_MEAN, args.rows).astype(float)
        scores = 1 / (1 + np.exp(-(1.5 + 2.0 * (labels - 0.5) + rng.normal(0.0, 1.0, args.rows))))
        picked = rng.permutation(args.rows)
        chosen, rest = picked[: args.labels], picked[args.labels :]
        estimate = ppi_mean(labels[chosen], scores[chosen], scores[rest], confidence=0.95)
        for kind in covered:
            interval = getattr(estimate, kind)
            covered[kind] += interval.low <= TRUE_MEAN <= interval.high
        ratios.append(estimate.ppi.width / estimate.labels_only.width)
        lambdas.append(estimate.lam)
        gains.append(estimate.effective_labels)
        judge_means.append(estimate.judge_only.estimate)
    results = {
        **header("ppi_coverage"),
        "data": "simulated",
        "rows": args.rows,
        "labels": args.labels,
        "draws": args.draws,
        "true_mean": TRUE_MEAN,
        "confidence": 0.95,
        "coverage": {kind: count / args.draws for kind, count in covered.items()},
        "median_width_ratio_ppi_over_labels_only": round(float(np.median(ratios)), 4),
        "narrower_than_labels_only_share": float(np.mean(np.asarray(ratios) < 1)),
        "median_lambda": round(float(np.median(lambdas)), 4),
        "median_effective_labels": round(float(np.median(gains)), 1),
        "mean_judge_only_estimate": round(float(np.mean(judge_means)), 4),
    }
    write(results, args.out)
    print(json.dumps({k: v for k, v in results.items() if k not in ("machine", "versions")}, indent=2))


if __name__ == "__main__":
    main()
