"""Two layers concatenated against one, for the graded teacher's 0.5B student past 3,000 labels.

    python benchmarks/distil_layers.py --work WORK [--out FILE]

WORK is distil_labels.py's (its rows, split, teacher grades and layer-18 state caches are read, not run
again). The 0.5B's last-token state at each layer of ``LAYERS`` for every one of the 3,714 responses,
through vLLM's pooling runner on the model cut after that layer (the same path PROBE judging takes; each
layer a pass of its own, cached by chunk). For each feature (one layer, or two layers' states side by
side), C is chosen by 5-fold cross-validation on the 3,000 fit rows (grid ``CS``, the targets'
log-likelihood, as ``probe fit`` chooses it), the head fitted on them and measured on the 714 held-out rows:
Spearman with the teacher's expected grade and F1 of the keep class at 10, 30 and 50 %, as
distil_labels.py measures them. Each pass's seconds per row (the engine's start not counted) are the cost.

Beside each measured F1 at a 30 % keep rate: the F1 a scorer with the same Spearman would have if it and the
teacher were jointly Gaussian (simulated, :func:`gaussian_keep_f1`), and the Spearman such a scorer needs
for an F1 of 0.85 (:func:`spearman_for_keep_f1`): how far a rank correlation carries a keep decision.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS, header, write
from distil_graded import COLUMN, JUDGE, STUDENTS, expected_grade, graded_states
from distil_labels import CS, GRADES, column, measured
from distil_recipe import response_rows, split

LAYERS = (12, 18)
KEEP = 0.3
PAIRS = ((12, 18),)


def gaussian_keep_f1(spearman: float, rate: float, n: int = 400_000, seed: int = 0) -> float:
    """The F1 of the keep class (both sides keep the top ``rate``) between two jointly Gaussian scores whose
    Spearman correlation is ``spearman`` (Pearson ``2 sin(pi rho / 6)``), from ``n`` simulated rows."""
    rng = np.random.default_rng(seed)
    r = 2 * np.sin(np.pi * spearman / 6)
    x = rng.standard_normal(n)
    y = r * x + np.sqrt(1 - r * r) * rng.standard_normal(n)
    k = round(rate * n)
    return float(np.isin(np.argsort(-x)[:k], np.argsort(-y)[:k]).sum() / k)


def spearman_for_keep_f1(target: float, rate: float) -> float:
    """The Spearman correlation at which :func:`gaussian_keep_f1` reaches ``target`` (bisection)."""
    low, high = 0.0, 1.0
    for _ in range(20):
        middle = (low + high) / 2
        low, high = (middle, high) if gaussian_keep_f1(middle, rate) < target else (low, middle)
    return (low + high) / 2


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-graded"))
    parser.add_argument("--out", type=Path, default=RESULTS / "distil_layers.json")
    args = parser.parse_args()
    work: Path = args.work
    from jurist.probe.fit import FitSettings, choose, row_probabilities, train

    results: dict[str, Any] = {
        **header("distil_layers"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
    }
    curated = response_rows()
    generated = [json.loads(line) for line in (work / "generated.jsonl").read_text().splitlines()]
    fit_pairs, _, curated_fit, curated_held = split(curated)
    fit_set = set(fit_pairs)
    order = np.random.default_rng(0)
    fit_rows = curated_fit + [r for r in generated if r["pair"] in fit_set]
    held = curated_held + [r for r in generated if r["pair"] not in fit_set]
    fit_rows = [fit_rows[i] for i in order.permutation(len(fit_rows))]
    held = [held[i] for i in order.permutation(len(held))]
    teacher_file = work / "teacher_all.parquet"
    grade = column([teacher_file], f"{COLUMN}.score")
    reference = np.asarray([grade[r["id"]] for r in held])
    is_generated = np.asarray([r["set"].startswith("Generated ") for r in held])

    states: dict[int, dict[str, Any]] = {}
    truth: dict[str, Any] = {}
    results["passes"] = {}
    for layer in LAYERS:
        cache = work / ("head_student_0.5b.json.states" if layer == 18 else f"layer{layer}.states")
        by_id: dict[str, Any] = {}
        run, seconds = 0, 0.0
        for part in (curated_fit, curated_held, generated):  # distil_labels.py's order: its chunks cached
            model = STUDENTS["student_0.5b"]["model"]
            found, got = graded_states(JUDGE, model, part, teacher_file, layer, cache)
            run, seconds = run + got.run, seconds + got.seconds
            for i, row in enumerate(part):
                by_id[row["id"]] = got.states[i, :, 0]
                truth[row["id"]] = (found.truth[i], found.soft[i])
        states[layer] = by_id
        results["passes"][str(layer)] = {
            "rows_run": run,
            "seconds_per_row": round(seconds / run, 4) if run else None,
        }
        write(results, args.out)
    shape = found.shape

    def stacked(layers: tuple[int, ...], rows: list[dict[str, Any]]) -> np.ndarray:
        return np.stack([np.concatenate([states[k][r["id"]] for k in layers], axis=-1) for r in rows])

    fit_truth = np.stack([truth[r["id"]][0] for r in fit_rows])
    fit_soft = np.stack([truth[r["id"]][1] for r in fit_rows])
    settings = FitSettings(cs=CS, inner_folds=5, seed=0)
    results["features"] = {}
    for layers in [(k,) for k in LAYERS] + list(PAIRS):
        began = time.perf_counter()
        x = stacked(layers, fit_rows)
        _, c, grid = choose(shape, x[:, :, None], fit_truth, settings, np.random.default_rng(0), fit_soft)
        head = train(shape, x, fit_truth, c, fit_soft)
        guess = expected_grade(row_probabilities(shape, head, stacked(layers, held)), GRADES)
        name = "+".join(map(str, layers))
        found_here = measured(guess, reference, is_generated)
        results["features"][name] = {
            "c": c,
            "cv_log_likelihood": {str(k[1]): round(v, 4) for k, v in grid.items()},
            "fit_seconds": round(time.perf_counter() - began, 1),
            **found_here,
            "keep_30_f1_if_gaussian": round(gaussian_keep_f1(found_here["all"]["spearman"], KEEP), 4),
        }
        print(name, results["features"][name]["all"], flush=True)
        write(results, args.out)
    results["spearman_for_keep_30_f1_0.85_if_gaussian"] = round(spearman_for_keep_f1(0.85, KEEP), 4)
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write(results, args.out)


if __name__ == "__main__":
    main()
