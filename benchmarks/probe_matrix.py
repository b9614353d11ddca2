"""Probe heads across every human-labelled set in ../shared/data/llmbar: a model, a prompt style, per set.

    python benchmarks/probe_matrix.py --model qwen2.5-coder-0.5b-instruct --prompt pairwise
    python benchmarks/probe_matrix.py --model qwen2.5-coder-0.5b-instruct --prompt pointwise
    python benchmarks/probe_matrix.py --model qwen2.5-coder-1.5b-instruct --prompt pairwise --per-set 30
    python benchmarks/probe_matrix.py --model qwen2.5-coder-0.5b-instruct --prompt pairwise --fit-first 30

The rows are LLMBar's Natural and four adversarial sets and the MT-Bench human-judgment pairs (the first
``--per-set`` of each when given; ``--fit-first N`` fits and scores on the first N of each set only, from
the features of every row, so that two models compare on the same rows without a second feature pass).
The judge is ``pairwise/preference`` scored LOGPROBS, either as it is
(``pairwise``: both orders in one prompt each) or in its pointwise mode (``pointwise``: each answer alone,
"is it good?"). One transformers pass over every prompt gives the last token's state at each layer of
:func:`jurist.probe.features.default_layers` and the judge's own label distribution (its LOGPROBS verdict).

Then, with :mod:`jurist.probe.fit` (the code ``jurist probe fit`` runs):

* per set: nested 10-fold accuracy of the head (layer and C chosen inside each fold), the
  accuracy of each layer (5-fold, best C), the judge's own verdict, the length rule fitted in the training
  folds and the majority label, all on the same rows with Wilson 95 % intervals; ECE and how well each
  one's confidence ranks its right verdicts (AUC);
* leave-one-set-out: the head fitted on the other sets (at the commonest layer and C of their per-set
  fits), tested on the set;
* on all rows: the learning curve (a head fitted on k random rows, tested on the rest) at the commonest
  layer and C of the per-set fits;
* the cost: seconds per row of the feature pass (every layer and the label distribution at once).

Results are merged into ``benchmarks/results/probe_matrix.json`` under ``<model>/<prompt>``, with the
command that made each entry.
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

from common import LLMBAR_SETS, RESULTS, header, llmbar_source
from probe_heads import length_rule

KEYS = (
    "rows",
    "accuracy",
    "own_verdict",
    "baselines",
    "by_layer",
    "layer",
    "layers_chosen_in_folds",
    "ece",
    "confidence_auc",
    "own_confidence_auc",
)


def all_rows(per_set: int | None) -> list[dict[str, Any]]:
    """Every set's rows (the first ``per_set`` of each when given), each tagged with its set and its
    position in the set."""
    folder = llmbar_source().parent
    rows: list[dict[str, Any]] = []
    for name in LLMBAR_SETS:
        records = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        rows += [{**r, "set": name, "position": i} for i, r in enumerate(records[:per_set])]
    return rows


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from jurist.backends.hf.backend import TransformersBackend
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.probe.examples import examples
    from jurist.probe.features import default_layers, extract
    from jurist.probe.fit import FitSettings, fit, learning_curve, row_probabilities
    from jurist.probe.fit import train as train_head
    from jurist.stats.share import Share

    def share(right: int, n: int) -> dict[str, Any]:
        return Share(right, n).as_dict()

    overrides: dict[str, Any] = {
        "judge_params.scoring": "LOGPROBS",
        "inference_config.model.model_name": args.model,
        "inference_config.model.model_max_length": 8192,
        "inference_config.model.torch_dtype_str": args.dtype,
    }
    if args.prompt == "pointwise":
        overrides["pairwise_judge_params.mode"] = "pointwise"
    judge = Judge(load_judge_config("pairwise/preference", overrides))
    rows = all_rows(args.per_set)
    found = examples(judge, rows, [r["label"] for r in rows])
    if len(found.positions) != len(rows):
        raise SystemExit(f"rows not usable as examples: {found.skipped}")
    config = judge.config.inference_config.model_copy(update={"engine": "NATIVE", "engine_params": {}})
    backend = TransformersBackend(config, batch_size=4)
    try:
        layers = default_layers(int(backend.text_config.num_hidden_layers))
        cache = args.work / f"{Path(args.model).name}.{args.prompt}.{args.dtype}.{args.per_set}.npz"
        cached = cache.is_file()
        start = time.perf_counter()
        feats = extract(judge, found, backend, layers, cache)
        seconds = time.perf_counter() - start
    finally:
        backend.close()
    timing_file = cache.with_suffix(".seconds.json")
    if not cached:
        timing_file.write_text(json.dumps({"seconds": seconds}), encoding="utf-8")
    seconds = json.loads(timing_file.read_text(encoding="utf-8"))["seconds"]
    states, own = feats.states, feats.own
    if args.fit_first is not None:
        # fit and score on the first rows of each set only, from features extracted for more
        keep = np.asarray([i for i, r in enumerate(rows) if r["position"] < args.fit_first])
        rows, found = [rows[i] for i in keep], found.subset(keep)
        states, own = states[keep], None if own is None else own[keep]
    truth = found.truth
    settings = FitSettings(folds=10)
    out: dict[str, Any] = {
        "model": feats.model,
        "prompt": args.prompt,
        "features": f"transformers, {args.dtype}",
        "layers": list(layers),
        "rows": len(rows),
        "fitted_on": "every row" if args.fit_first is None else f"the first {args.fit_first} of each set",
        "feature_pass": {
            "seconds": round(seconds, 1),
            "seconds_per_row": round(seconds / len(feats.tokens), 3),
            "prompt_tokens_per_row": float(np.mean(feats.tokens)),
            "note": "every layer and the label distribution in one transformers pass, 2 CPU threads",
        },
        "per_set": {},
        "leave_one_set_out": {},
    }
    sets = [name for name in LLMBAR_SETS if any(r["set"] == name for r in rows)]
    for name in sets:
        index = np.asarray([i for i, r in enumerate(rows) if r["set"] == name])
        result = fit(
            found.subset(index), states[index], None if own is None else own[index], layers, settings
        )
        out["per_set"][name] = {k: result.report.get(k) for k in (*KEYS, "c")}
        print(name, json.dumps({k: result.report.get(k) for k in ("accuracy", "own_verdict", "baselines")}))
    # one layer and C for the rows of several sets: the commonest choice of the per-set fits (of the other
    # sets, for leave-one-set-out), so that no choice sees the rows it is tested on; a nested choice on
    # 619 pairs takes longer than a session on this box
    choices = {name: (layers.index(e["layer"]), e["c"]) for name, e in out["per_set"].items()}

    def commonest(names: list[str]) -> tuple[int, float]:
        picked = [choices[n] for n in names]
        return max(picked, key=lambda pair: (picked.count(pair), -pair[0], -pair[1]))

    li, c = commonest(sets)
    out["all_rows"] = {
        "rows": len(truth),
        "layer": layers[li],
        "c": c,
        "chosen_as": "the commonest (layer, C) of the per-set fits",
        "learning_curve": learning_curve(found.shape, states[:, :, li], truth, c, settings),
    }
    for name in sets:
        held = np.asarray([i for i, r in enumerate(rows) if r["set"] == name])
        others = np.asarray([i for i, r in enumerate(rows) if r["set"] != name])
        li, c = commonest([n for n in sets if n != name])
        head = train_head(found.shape, states[others, :, li], truth[others], c)
        probs = row_probabilities(found.shape, head, states[held, :, li])
        entry = {
            "layer": layers[li],
            "accuracy": share(int(np.sum(probs.argmax(axis=1) == truth[held])), len(held)),
            "length_rule_fitted_on_the_others": length_rule(
                [rows[i] for i in others], [rows[i] for i in held]
            ),
        }
        if own is not None:
            own_probs = found.shape.row_probabilities(own[held])
            entry["own_verdict"] = share(int(np.sum(own_probs.argmax(axis=1) == truth[held])), len(held))
        out["leave_one_set_out"][name] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--prompt", choices=("pairwise", "pointwise"), default="pairwise")
    parser.add_argument(
        "--per-set", type=int, default=None, help="The first N rows of each set (all: unset)."
    )
    parser.add_argument(
        "--fit-first",
        type=int,
        default=None,
        help="Fit and score on the first N rows of each set only (features of --per-set's rows, cached).",
    )
    parser.add_argument("--dtype", default="bfloat16", help="The feature pass's torch dtype.")
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-probe-matrix"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    entry = {
        **header("probe_matrix"),
        "command": "python benchmarks/probe_matrix.py " + shlex.join(sys.argv[1:]),
    }
    entry.update(measure(args))
    path = RESULTS / "probe_matrix.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    key = f"{args.model}/{args.prompt}" + ("" if args.fit_first is None else f"/first-{args.fit_first}")
    results[key] = entry
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    summary = {
        name: {
            "head": e["accuracy"]["estimate"],
            "own": (e.get("own_verdict") or {}).get("estimate"),
            "length": (e["baselines"].get("length_rule") or {}).get("estimate"),
        }
        for name, e in entry["per_set"].items()
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
