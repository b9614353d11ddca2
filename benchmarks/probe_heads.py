"""A probe head on Qwen2.5-Coder-0.5B, fitted on 234 human-labelled pairs and judged on 100 held-out pairs of
the same sources, against the judge's own LOGPROBS verdicts and the length rule on the same rows.

    python benchmarks/probe_heads.py [--model qwen2.5-coder-0.5b-instruct] [--judge pairwise/preference]

Fitted on (the split the probe-heads issue names): LLMBar Natural rows 0-69, Adversarial_Neighbor rows 0-93
and MT-Bench rows 0-69; held out: Natural 70-99, Adversarial_Neighbor 94-133, MT-Bench 70-99.

1. ``jurist probe fit`` on the 234 rows (features from transformers in float32; the layer and C chosen by
   10-fold cross-validation; nested cross-validated accuracy, the judge's own verdict and the baselines on
   the same rows; the learning curve; ECE).
2. ``jurist judge dataset`` on the 100 held-out rows and their 100 mirrors (answers swapped, label swapped)
   on engine VLLM with ``--judge_params.scoring PROBE`` (the pooling runner on the model cut after the
   head's layer), the same on engine NATIVE (transformers, float32; how far vLLM's path differs), and on
   VLLM in LOGPROBS: accuracy with Wilson 95 % intervals, the length rule fitted on the
   234 training rows, the majority label, the largest |p_a(row) + p_a(mirror) - 1| (antisymmetry), and
   rows/s of each run (the same engine settings, one after the other).

3. On all 334 rows (the fit's cached features and the held-out rows'): nested 10-fold cross-validation per
   source and pooled, leave-one-source-out (layer and C chosen on the other two), the learning curve.

The result goes to ``benchmarks/results/probe_heads.json`` with the command that made it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common import RESULTS, header, llmbar_source

TRAIN = {"Natural": (0, 70), "Adversarial_Neighbor": (0, 94), "MT-Bench": (0, 70)}
HELD_OUT = {"Natural": (70, 100), "Adversarial_Neighbor": (94, 134), "MT-Bench": (70, 100)}
ENGINE = [
    "--inference_config.model.model_max_length",
    "8192",
    "--inference_config.engine_params.gpu_memory_utilization",
    "0.2",
]


def rows_of(split: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    folder = llmbar_source().parent
    out = []
    for name, (start, stop) in split.items():
        records = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        out += [{**r, "set": name, "row": f"{name}:{i}"} for i, r in enumerate(records) if start <= i < stop]
    return out


def mirror(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **row,
        "output_1": row["output_2"],
        "output_2": row["output_1"],
        "label": 3 - int(row["label"]),
        "row": row["row"] + ":mirror",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def jurist(*args: str) -> float:
    """Run a jurist command; its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jurist", *args], check=True)
    return time.perf_counter() - start


def wilson(right: int, n: int) -> dict[str, Any]:
    """A share with its Wilson 95 % interval (:class:`jurist.stats.share.Share` as a dict)."""
    from jurist.stats.share import Share

    return Share(right, n).as_dict()


def judged(
    path: Path, judge: str, rows: list[dict[str, Any]], scored: int, sets: Sequence[str] = tuple(HELD_OUT)
) -> dict[str, Any]:
    """Accuracy over the first ``scored`` rows (the held-out rows; the rest are their mirrors, read only for
    p_a), per set of ``sets`` and in all, and every row's p_a."""
    table = pq.read_table(path).to_pylist()
    p_a = [t.get(f"{judge}.p_a") for t in table]
    winners = [t[f"{judge}.winner"] for t in table][:scored]
    rows = rows[:scored]
    truth = ["a" if int(r["label"]) == 1 else "b" for r in rows]
    right = [w == t for w, t in zip(winners, truth, strict=True)]
    by_set: dict[str, dict[str, Any]] = {}
    for name in sets:
        picked = [ok for ok, r in zip(right, rows, strict=True) if r["set"] == name]
        by_set[name] = wilson(sum(picked), len(picked))
    ok = sum(t[f"{judge}.status"] == "ok" for t in table)  # of all rows, mirrors included
    return {"accuracy": wilson(sum(right), len(right)), "by_set": by_set, "ok": ok, "p_a": p_a}


def length_rule(train: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """The length rule fitted on the training rows, scored on the test rows."""

    def longer_wins(r: dict[str, Any]) -> int:
        return 1 if len(r["output_1"]) > len(r["output_2"]) else 2

    hits = sum(longer_wins(r) == int(r["label"]) for r in train)
    prefer_longer = hits >= len(train) - hits
    right = sum((longer_wins(r) == int(r["label"])) == prefer_longer for r in test)
    return {"rule": "longer wins" if prefer_longer else "shorter wins", **wilson(right, len(test))}


def majority(train: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """The training rows' commoner label, scored on the test rows."""
    ones = sum(int(r["label"]) == 1 for r in train)
    common = 1 if ones >= len(train) - ones else 2
    return {"label": common, **wilson(sum(int(r["label"]) == common for r in test), len(test))}


def analysis(
    args: argparse.Namespace, train: list[dict[str, Any]], test: list[dict[str, Any]]
) -> dict[str, Any]:
    """Per source and pooled nested cross-validation, leave-one-source-out and the learning curve on all 334
    rows (the fit's features of its 234 rows, read from its cache, and the held-out rows' extracted now)."""
    import numpy as np

    from jurist.backends.hf.backend import TransformersBackend
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.probe.examples import examples
    from jurist.probe.features import extract
    from jurist.probe.fit import FitSettings, choose, fit, row_probabilities
    from jurist.probe.fit import train as train_head

    overrides = {"judge_params.scoring": "LOGPROBS", "inference_config.model.model_name": args.model,
                 "inference_config.model.model_max_length": 8192}  # fmt: skip
    judge = Judge(load_judge_config(args.judge, overrides))
    cached = np.load(args.work / "head.json.features.npz")
    test_found = examples(judge, test, [r["label"] for r in test])
    layers = tuple(json.loads((args.work / "head.json").read_text())["fit"]["layers_tried"])
    backend = TransformersBackend(
        judge.config.inference_config.model_copy(update={"engine": "NATIVE", "engine_params": {}}),
        batch_size=4,
    )
    try:
        held = extract(judge, test_found, backend, layers, args.work / "test.features.npz")
    finally:
        backend.close()
    states = np.concatenate([cached["states"], held.states])
    own = np.concatenate([cached["own"], held.own])
    rows = train + test
    found = examples(judge, rows, [r["label"] for r in rows])
    assert len(found.truth) == len(rows) == len(states)
    settings = FitSettings(folds=10)
    sources = sorted({r["set"] for r in rows})
    out: dict[str, Any] = {
        "layers": list(layers),
        "features": "transformers, float32",
        "per_source": {},
        "leave_one_source_out": {},
    }
    for name in sources:
        index = [i for i, r in enumerate(rows) if r["set"] == name]
        result = fit(found.subset(index), states[index], own[index], layers, settings)
        out["per_source"][name] = {
            k: result.report[k]
            for k in (
                "rows",
                "accuracy",
                "own_verdict",
                "baselines",
                "by_layer",
                "layer",
                "ece",
                "confidence_auc",
                "own_confidence_auc",
            )
        }
    pooled = fit(found, states, own, layers, settings)
    out["pooled"] = {
        k: pooled.report[k]
        for k in (
            "rows",
            "accuracy",
            "own_verdict",
            "baselines",
            "by_layer",
            "layer",
            "ece",
            "confidence_auc",
            "own_confidence_auc",
            "learning_curve",
        )
    }
    rng = np.random.default_rng(0)
    for name in sources:
        held_index = np.asarray([i for i, r in enumerate(rows) if r["set"] == name])
        fit_index = np.asarray([i for i, r in enumerate(rows) if r["set"] != name])
        li, c, _ = choose(found.shape, states[fit_index], found.truth[fit_index], settings, rng)
        head = train_head(found.shape, states[fit_index, :, li], found.truth[fit_index], c)
        probs = row_probabilities(found.shape, head, states[held_index, :, li])
        right = int(np.sum(probs.argmax(axis=1) == found.truth[held_index]))
        own_probs = found.shape.row_probabilities(own[held_index])
        own_right = int(np.sum(own_probs.argmax(axis=1) == found.truth[held_index]))
        out["leave_one_source_out"][name] = {
            "layer": layers[li],
            "accuracy": wilson(right, len(held_index)),
            "own_verdict": wilson(own_right, len(held_index)),
            "length_rule_fitted_on_the_others": length_rule(
                [rows[i] for i in fit_index], [rows[i] for i in held_index]
            ),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--judge", default="pairwise/preference")
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-probe-bench"))
    parser.add_argument("--reuse", action="store_true", help="Keep the head and runs already in --work.")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    train, test = rows_of(TRAIN), rows_of(HELD_OUT)
    both = test + [mirror(r) for r in test]
    write_jsonl(args.work / "train.jsonl", train)
    write_jsonl(args.work / "test.jsonl", both)
    head = args.work / "head.json"
    fit_seconds = None
    if not (args.reuse and head.exists()):
        fit_seconds = jurist(
            "probe", "fit", "-c", args.judge, "-i", str(args.work / "train.jsonl"), "-o", str(head),
            "--model", args.model, "--label-column", "label", *ENGINE,
        )  # fmt: skip
    report = json.loads(head.read_text(encoding="utf-8"))["metrics"]
    runs: dict[str, Any] = {}
    probe = ["--judge_params.scoring", "PROBE", "--judge_params.probe", str(head)]
    for mode, extra in (
        ("probe", probe),
        ("probe_native", [*probe, "--inference_config.engine", "NATIVE"]),
        ("logprobs", ["--judge_params.scoring", "LOGPROBS"]),
    ):
        out = args.work / f"{mode}.parquet"
        summary = args.work / f"{mode}.summary.json"
        seconds = None
        if not (args.reuse and summary.exists()):
            seconds = jurist(
                "judge", "dataset", "-c", args.judge, "-i", str(args.work / "test.jsonl"), "-o", str(out),
                "--model", args.model, "--overwrite", "-q", "--summary-json", str(summary),
                *(ENGINE[:2] if mode == "probe_native" else ENGINE), *extra,
            )  # fmt: skip
        ran = json.loads(summary.read_text(encoding="utf-8"))
        found = judged(out, Path(args.judge).name, both, len(test))
        p_a = found.pop("p_a")
        half = len(test)
        gaps = [
            abs(a + b - 1)
            for a, b in zip(p_a[:half], p_a[half:], strict=True)
            if a is not None and b is not None
        ]
        found["antisymmetry_max_gap"] = max(gaps) if gaps else None
        found["rows_per_s_wall"] = len(both) / seconds if seconds else None
        found["rows_per_second"] = ran["rows_per_second"]
        found["seconds_judging"] = ran["seconds"]
        found["model_load_seconds"] = ran["model_load_seconds"]
        found["model"] = ran["judges"][Path(args.judge).name]["model"]
        found["p_a_all"] = p_a
        runs[mode] = found
    vllm, native = runs["probe"].pop("p_a_all"), runs["probe_native"].pop("p_a_all")
    runs.get("logprobs", {}).pop("p_a_all", None)
    pairs = [(a, b) for a, b in zip(vllm, native, strict=True) if a is not None and b is not None]
    runs["vllm_against_native"] = {
        "max_abs_p_a_difference": max(abs(a - b) for a, b in pairs),
        "same_winner": sum((a > 0.5) == (b > 0.5) for a, b in pairs),
        "rows": len(pairs),
    }
    result = {
        **header("probe_heads"),
        "command": "python benchmarks/probe_heads.py " + shlex.join(sys.argv[1:]),
        "model": args.model,
        "judge": args.judge,
        "train": {k: list(v) for k, v in TRAIN.items()},
        "held_out": {k: list(v) for k, v in HELD_OUT.items()},
        "fit": report,
        "fit_seconds": fit_seconds,
        "held_out_results": runs,
        "held_out_baselines": {
            "length_rule_fitted_on_train": length_rule(train, test),
            "majority_of_train": majority(train, test),
        },
        "sources": analysis(args, train, test),
    }
    path = RESULTS / "probe_heads.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("fit", "held_out_results", "held_out_baselines")}, indent=1))


if __name__ == "__main__":
    main()
