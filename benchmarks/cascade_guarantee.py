"""Does the cascade's agreement guarantee hold? A simulation with known accuracy-by-confidence curves.

Two simulated judges; each row gets, for each, a confidence ``c`` uniform in [0.5, 1) and a verdict that
agrees with the label with probability ``accuracy(c)`` (stage 1: ``0.2 + 0.8 c``, from 0.6 to 1.0;
stage 2: ``0.5 + 0.5 c``, from 0.75 to 1.0). For each of ``--draws`` calibration sets of ``--labels``
rows, :func:`jurist.stats.selective.calibrate_cascade` chooses both thresholds (target ``--target``,
``--delta``, the last stage abstaining below its threshold so that every kept verdict is covered), and the
agreement of the kept verdicts is measured on ``--fresh`` fresh rows. The guarantee says: agreement >=
target in at least ``1 - delta`` of the draws.

    python benchmarks/cascade_guarantee.py [--draws 1000] [--labels 500] [--target 0.9] [--delta 0.1]

Writes benchmarks/results/cascade_guarantee.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from jurist.stats.selective import calibrate_cascade

CURVES: tuple[Callable[[float], float], ...] = (lambda c: 0.2 + 0.8 * c, lambda c: 0.5 + 0.5 * c)
CURVE_TEXT = ("0.2 + 0.8 c", "0.5 + 0.5 c")


def draw_rows(rng: random.Random, n: int) -> list[list[tuple[float, bool]]]:
    """Per stage, each row's (confidence, agrees with the label)."""
    out = []
    for curve in CURVES:
        stage = []
        for _ in range(n):
            c = 0.5 + 0.5 * rng.random()
            stage.append((c, rng.random() < curve(c)))
        out.append(stage)
    return out


def kept_agreement(
    rows: list[list[tuple[float, bool]]], thresholds: list[float | None]
) -> tuple[float, float, list[float]]:
    """Agreement of kept verdicts, coverage (share kept) and share decided per stage, on ``rows``."""
    n = len(rows[0])
    kept = right = 0
    per_stage = [0] * len(rows)
    for i in range(n):
        for stage, threshold in enumerate(thresholds):
            c, ok = rows[stage][i]
            if threshold is not None and c >= threshold:
                kept += 1
                right += ok
                per_stage[stage] += 1
                break
    return (
        (right / kept if kept else 1.0),
        kept / n,
        [k / n for k in per_stage],
    )  # nothing kept: nothing wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--fresh", type=int, default=200_000)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "cascade_guarantee.json"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    fresh = draw_rows(random.Random(args.seed + 1), args.fresh)
    agreements, coverages, shares, thresholds_seen = [], [], [], []
    for _ in range(args.draws):
        labelled = draw_rows(rng, args.labels)
        stages = [([c for c, _ in stage], [ok for _, ok in stage]) for stage in labelled]
        choices = calibrate_cascade(stages, args.target, args.delta, abstain=True)
        thresholds = [c.threshold if c is not None else None for c in choices]
        agreement, coverage, per_stage = kept_agreement(fresh, thresholds)
        agreements.append(agreement)
        coverages.append(coverage)
        shares.append(per_stage)
        thresholds_seen.append(thresholds)
    held = sum(a >= args.target for a in agreements) / args.draws
    kept_some = [a for a, c in zip(agreements, coverages, strict=True) if c > 0]
    result = {
        "benchmark": "cascade_guarantee",
        "setup": {
            "draws": args.draws,
            "labelled_rows": args.labels,
            "fresh_rows": args.fresh,
            "target_agreement": args.target,
            "delta": args.delta,
            "seed": args.seed,
            "stages": [{"confidence": "uniform [0.5, 1)", "accuracy": text} for text in CURVE_TEXT],
            "abstain": True,
        },
        "realized_rate": held,
        "draws_keeping_nothing": args.draws - len(kept_some),
        "realized_rate_among_draws_keeping_rows": sum(a >= args.target for a in kept_some) / len(kept_some)
        if kept_some
        else None,
        "guarantee": f">= {1 - args.delta}",
        "agreement_of_draws_keeping_rows": {
            "mean": statistics.fmean(kept_some),
            "min": min(kept_some),
            "p10": sorted(kept_some)[len(kept_some) // 10],
        }
        if kept_some
        else None,
        "coverage": {"mean": statistics.fmean(coverages), "min": min(coverages), "max": max(coverages)},
        "share_decided_by_stage": [statistics.fmean(s[k] for s in shares) for k in range(len(CURVES))],
        "threshold_mean": [
            statistics.fmean(found)
            if (found := [x for t in thresholds_seen if (x := t[k]) is not None])
            else None
            for k in range(len(CURVES))
        ],
        "stages_keeping_nothing": [sum(t[k] is None for t in thresholds_seen) for k in range(len(CURVES))],
        "seconds": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
