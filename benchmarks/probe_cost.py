"""A head against its judge's LOGPROBS on engine VLLM: the cost per row and accuracy on held-out pairs.

    python benchmarks/probe_cost.py --model qwen2.5-coder-1.5b-instruct --fit-per-set 30 --test-per-set 10

1. ``jurist probe fit`` (pairwise/preference, features in ``--dtype``) on the first ``--fit-per-set`` rows
   of each human-labelled set in ../shared/data/llmbar (LLMBar's Natural and adversarial sets, MT-Bench).
   When ``benchmarks/probe_matrix.py`` already extracted those rows' features on this model (its cache in
   ``--matrix-work``), the fit reads them instead of running the transformers pass again: the cache is
   keyed by the weights, the prompt and every prompt's tokens, so it is used only when they all match.
2. ``jurist judge dataset`` on engine VLLM over the next ``--test-per-set`` rows of each set and their
   mirrors (answers and label swapped), once with ``scoring: PROBE`` (the pooling runner on the model cut
   after the head's layer) and once in LOGPROBS, one run after the other with the same engine settings:
   rows/s of each (the judge's own figure, model load excluded), their ratio, accuracy on the held-out rows
   with Wilson 95 % intervals beside the length rule and the majority label fitted on the fitted rows, and
   the largest |p_a(row) + p_a(mirror) - 1|.

The result is merged into ``benchmarks/results/probe_cost.json`` under the model's name, with the command.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from common import LLMBAR_SETS, RESULTS, header
from probe_heads import ENGINE, judged, jurist, length_rule, majority, mirror, rows_of, write_jsonl


def rows_between(start: int, stop: int) -> list[dict[str, Any]]:
    """Rows ``start`` to ``stop`` of every set (fewer where a set is shorter), tagged with set and row."""
    return rows_of(dict.fromkeys(LLMBAR_SETS, (start, stop)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--fit-per-set", type=int, default=30)
    parser.add_argument("--test-per-set", type=int, default=10)
    parser.add_argument("--dtype", default="bfloat16", help="The fit's and both runs' torch dtype.")
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-probe-cost"))
    parser.add_argument("--matrix-work", type=Path, default=Path("/tmp/jurist-probe-matrix"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    judge = "pairwise/preference"
    dtype = ["--inference_config.model.torch_dtype_str", args.dtype]
    train = rows_between(0, args.fit_per_set)
    test = rows_between(args.fit_per_set, args.fit_per_set + args.test_per_set)
    both = test + [mirror(r) for r in test]
    write_jsonl(args.work / "train.jsonl", train)
    write_jsonl(args.work / "test.jsonl", both)
    head = args.work / f"{Path(args.model).name}.head.json"
    cached = args.matrix_work / f"{Path(args.model).name}.pairwise.{args.dtype}.{args.fit_per_set}.npz"
    features = head.with_name(head.name + ".features.npz")
    if cached.is_file() and not features.is_file():
        shutil.copyfile(cached, features)
    fit_seconds = jurist(
        "probe", "fit", "-c", judge, "-i", str(args.work / "train.jsonl"), "-o", str(head),
        "--model", args.model, "--label-column", "label", *ENGINE, *dtype,
    )  # fmt: skip
    saved = json.loads(head.read_text(encoding="utf-8"))
    runs: dict[str, Any] = {}
    for mode, extra in (
        ("probe", ["--judge_params.scoring", "PROBE", "--judge_params.probe", str(head)]),
        ("logprobs", ["--judge_params.scoring", "LOGPROBS"]),
    ):
        out, summary = args.work / f"{mode}.parquet", args.work / f"{mode}.summary.json"
        jurist(
            "judge", "dataset", "-c", judge, "-i", str(args.work / "test.jsonl"), "-o", str(out),
            "--model", args.model, "--overwrite", "-q", "--summary-json", str(summary),
            *ENGINE, *dtype, *extra,
        )  # fmt: skip
        ran = json.loads(summary.read_text(encoding="utf-8"))
        found = judged(out, Path(judge).name, both, len(test), sets=LLMBAR_SETS)
        p_a = found.pop("p_a")
        gaps = [
            abs(a + b - 1)
            for a, b in zip(p_a[: len(test)], p_a[len(test) :], strict=True)
            if a is not None and b is not None
        ]
        found["antisymmetry_max_gap"] = max(gaps) if gaps else None
        found["rows_per_second"] = ran["rows_per_second"]
        found["seconds_judging"] = ran["seconds"]
        found["model_load_seconds"] = ran["model_load_seconds"]
        runs[mode] = found
    entry = {
        **header("probe_cost"),
        "command": "python benchmarks/probe_cost.py " + shlex.join(sys.argv[1:]),
        "judge": judge,
        "dtype": args.dtype,
        "fit_rows": {"per_set": [0, args.fit_per_set], "rows": len(train)},
        "test_rows": {
            "per_set": [args.fit_per_set, args.fit_per_set + args.test_per_set],
            "rows": len(test),
            "judged_with_mirrors": len(both),
        },
        "head": {"layer": saved["layer"], "of_layers": saved["model"]["num_layers"], "c": saved["fit"]["c"]},
        "fit": {
            k: saved["metrics"].get(k)
            for k in ("accuracy", "own_verdict", "baselines", "ece", "confidence_auc", "own_confidence_auc")
        },
        "fit_seconds_wall": round(fit_seconds, 1),
        "features_reused_from": str(cached) if cached.is_file() else None,
        "held_out": runs,
        "held_out_baselines": {
            "length_rule_fitted_on_the_fitted_rows": length_rule(train, test),
            "majority_of_the_fitted_rows": majority(train, test),
        },
        "probe_speedup_over_logprobs": round(
            runs["probe"]["rows_per_second"] / runs["logprobs"]["rows_per_second"], 2
        ),
    }
    path = RESULTS / "probe_cost.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    results[Path(args.model).name] = entry
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    length = entry["held_out_baselines"]["length_rule_fitted_on_the_fitted_rows"]
    print(
        json.dumps(
            {
                mode: {"accuracy": r["accuracy"]["estimate"], "rows_per_second": r["rows_per_second"]}
                for mode, r in runs.items()
            }
            | {"length_rule": length["estimate"]},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
