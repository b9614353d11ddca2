"""Judge quality against people on LLMBar and MT-Bench, beside throughput and cost, per model and mode.

    python benchmarks/judge_quality.py --model qwen2.5-coder-0.5b-instruct --modes logprobs \\
        --sets Natural,Adversarial_Neighbor [--limit 0] [--judge pairwise/preference] [--tag NAME]

Every row of the chosen sets (``../shared/data/llmbar``: LLMBar's Natural and four Adversarial sets, and the
MT-Bench human-judgment pairs kept beside them), each pair judged in both orders by a pairwise judge (in the
``pointwise`` mode each response alone), through ``jurist bench`` with labels (:mod:`jurist.bench.quality`):
accuracy against the human label with a 95 % Wilson interval, per set and over all, the order consistency,
the share of order verdicts naming the response shown first, the accuracy of both decision rules
(order-averaged probability; both orders agree) where the judge gives probabilities, and rows/s and dollars
per million judgments from the same warm run (priced at ``--machine-hour-price`` for this machine). Modes:
``logprobs`` (label probabilities after one prefill), ``generation`` (the judge's explanation, then its
verdict, greedy), ``samples`` (5 sampled generations per order at temperature 0.7, their vote shares as
probabilities), ``pointwise`` (LOGPROBS in the pairwise judge's pointwise mode: each response alone, P(Yes)
of A against B). Every accuracy stands beside the baselines on the same rows (the majority label, the longer
and the shorter answer; a star in the table marks one the judge does not beat). The result of each (model,
mode, judge) is merged into ``benchmarks/results/judge_quality.json`` under a key naming them (and
``--tag``), with the command that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from common import LLMBAR_SETS, RESULTS, header, llmbar_source

SETS = LLMBAR_SETS
MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "logprobs": ("logprobs", {}),
    "generation": ("generation", {}),
    "samples": ("generation", {"judge_params.samples": 5, "inference_config.generation.temperature": 0.7}),
    "pointwise": ("logprobs", {"pairwise_judge_params.mode": "pointwise"}),
}
ENGINE = {
    "inference_config.model.model_max_length": 8192,
    "inference_config.engine_params.gpu_memory_utilization": 0.2,
}


def llmbar_rows(sets: list[str], limit: int) -> list[dict[str, Any]]:
    """The rows of each set (the first ``limit`` of each when ``limit`` > 0), with a ``set`` column."""
    folder = llmbar_source().parent
    rows: list[dict[str, Any]] = []
    for name in sets:
        records = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        rows += [{**r, "set": name} for r in (records[:limit] if limit > 0 else records)]
    return rows


def summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The figures of one bench entry that the table shows."""
    quality = entry["quality"]
    keep = (
        "accuracy",
        "decided",
        "order_consistency",
        "first_shown_rate",
        "accuracy_by_decision",
        "baselines",
    )
    return {
        "rows": entry["warm"]["rows"],
        "rows_per_s": entry["warm"]["rows_per_s"],
        "usd_per_million_judgments": (entry.get("cost") or {}).get("usd_per_million_judgments"),
        "output_tokens_per_row": round(entry["warm"]["output_tokens"] / max(1, entry["warm"]["rows"]), 1),
        "load_seconds": entry["load_seconds"],
        "head_dtype": entry.get("head_dtype"),
        "all": {k: quality.get(k) for k in keep if k in quality},
        "by_set": {
            name: {k: q.get(k) for k in keep if k in q} for name, q in entry["quality_by_group"].items()
        },
    }


def pct(share: dict[str, Any] | None, interval: bool = True) -> str:
    """A share as a percentage, with its interval."""
    if not share or share.get("estimate") is None:
        return "–"
    if not interval:
        return f"{100 * share['estimate']:.1f}"
    return f"{100 * share['estimate']:.1f} [{100 * share['low']:.1f}, {100 * share['high']:.1f}]"


def baseline(quality: dict[str, Any], name: str) -> str:
    """A baseline's accuracy on the same rows, starred where the judge does not beat it (runs made before
    baselines were recorded show a dash; runs made before shares had one shape hold it as ``accuracy``)."""
    found = (quality.get("baselines") or {}).get(name) or {}
    accuracy = found.get("estimate", found.get("accuracy"))
    if accuracy is None:
        return "–"
    return f"{100 * accuracy:.1f}" + ("*" if found.get("beaten") == "no" else "")


def table(results: dict[str, Any]) -> str:
    """The runs as the benchmarking guide's Markdown table: one line per (model, mode, set), all sets first;
    rows/s and dollars on the line of all sets (or of the only set)."""
    lines = [
        "| model | mode | set | rows | accuracy % [95 % CI] | majority % | longer wins % | shorter wins % | "
        "both orders agree % | order consistency % | first shown % | rows/s | $/M judgments |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for record in results.get("runs", {}).values():
        parts = [("all", record["all"])] if len(record["by_set"]) > 1 else []
        parts += list(record["by_set"].items())
        usd = record["usd_per_million_judgments"]
        speed = [str(record["rows_per_s"]), f"{usd:,.0f}" if usd is not None else "–"]
        for number, (name, quality) in enumerate(parts):
            both = (quality.get("accuracy_by_decision") or {}).get("both_orders")
            cells = [
                record["model"].split(" (")[0],
                record["mode"],
                name,
                str(quality["accuracy"]["trials"]),
                pct(quality["accuracy"]),
                *(baseline(quality, name) for name in ("majority", "longer answer", "shorter answer")),
                pct(both, False),
                pct(quality.get("order_consistency"), False),
                pct(quality.get("first_shown_rate"), False),
                *(speed if number == 0 else ["", ""]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def baselines_table(sets: list[str]) -> str:
    """The baselines of every set (they depend on the data alone), as a Markdown table with intervals."""
    from jurist.labels.vocabulary import normalize_labels
    from jurist.stats.baselines import baselines

    names = ("majority", "first shown", "longer answer", "shorter answer")
    lines = [
        "| set | pairs | " + " | ".join(f"{n} % [95 % CI]" for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for name in sets:
        rows = llmbar_rows([name], 0)
        truth = normalize_labels([r["label"] for r in rows], pairwise=True)
        lengths = [(float(len(r["output_1"])), float(len(r["output_2"]))) for r in rows]
        found = {b.name: b for b in baselines(truth, pairwise=True, lengths=lengths)}
        cells = []
        for key in names:
            share = found[key].share
            low, high = share.interval or (0.0, 0.0)
            cells.append(f"{100 * (share.estimate or 0):.1f} [{100 * low:.1f}, {100 * high:.1f}]")
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


GROUPS = {
    "Natural": ("Natural",),
    "adversarial": (
        "Adversarial_Neighbor",
        "Adversarial_GPTInst",
        "Adversarial_GPTOut",
        "Adversarial_Manual",
    ),
    "MT-Bench": ("MT-Bench",),
}
PAPER = {"Natural": "94.5", "adversarial": "82.8", "MT-Bench": "–"}
"""GPT-4's accuracy in the LLMBar paper: both orders, Natural; its best prompting, the adversarial sets'
average (not reported on these MT-Bench pairs)."""


def _pooled(shares: list[dict[str, Any]]) -> str:
    """Shares over several sets pooled (successes over trials), with a Wilson interval."""
    from jurist.stats.share import wilson_interval

    right, rows = sum(s["successes"] for s in shares), sum(s["trials"] for s in shares)
    low, high = wilson_interval(right, rows) or (0.0, 0.0)
    return f"{100 * right / rows:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def summary_table(results: dict[str, Any]) -> str:
    """The README's table: LOGPROBS runs over every set (both orders and pointwise) per group of sets, the
    baselines on the same rows and GPT-4 in the LLMBar paper."""
    from jurist.labels.vocabulary import normalize_labels
    from jurist.stats.baselines import baselines

    lines = ["| judge | " + " | ".join(GROUPS) + " |", "|---|" + "---|" * len(GROUPS)]
    for record in results.get("runs", {}).values():
        if record["mode"] not in ("logprobs", "pointwise") or set(record["by_set"]) != set(SETS):
            continue
        how = "both orders" if record["mode"] == "logprobs" else "pointwise"
        cells = [_pooled([record["by_set"][name]["accuracy"] for name in group]) for group in GROUPS.values()]
        lines.append(f"| {record['model'].split(' (')[0]}, {how} | " + " | ".join(cells) + " |")
    for rule in ("majority", "longer answer", "shorter answer"):
        cells = []
        for group in GROUPS.values():
            shares = []
            for name in group:
                rows = llmbar_rows([name], 0)
                truth = normalize_labels([r["label"] for r in rows], pairwise=True)
                lengths = [(float(len(r["output_1"])), float(len(r["output_2"]))) for r in rows]
                found = {b.name: b for b in baselines(truth, pairwise=True, lengths=lengths)}
                shares.append(found[rule].share.as_dict())
            cells.append(_pooled(shares))
        lines.append(f"| baseline: {rule} | " + " | ".join(cells) + " |")
    lines.append("| GPT-4 (LLMBar paper) | " + " | ".join(PAPER[g] for g in GROUPS) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="A model (default: the embedded SmolLM2).")
    parser.add_argument("--modes", default="logprobs")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit", type=int, default=0, help="Rows per set (0: all).")
    parser.add_argument("--judge", default="pairwise/preference")
    parser.add_argument("--tag", default="", help="Appended to the result's key (e.g. a prompt variant).")
    parser.add_argument("--machine-hour-price", type=float, default=0.10)
    parser.add_argument("--out", type=Path, default=RESULTS / "judge_quality.json")
    parser.add_argument("--table", action="store_true", help="Print the results file as a Markdown table.")
    parser.add_argument(
        "--baselines", action="store_true", help="Print every set's baselines (no model) as a Markdown table."
    )
    parser.add_argument(
        "--summary", action="store_true", help="Print the README's table: groups of sets, baselines, GPT-4."
    )
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return
    if args.baselines:
        print(baselines_table(list(SETS)))
        return
    if args.summary:
        print(summary_table(json.loads(args.out.read_text())))
        return
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")

    from jurist.bench.cost import Prices, add_costs
    from jurist.bench.runner import BenchSpec, run_bench
    from jurist.labels.source import LabelSource

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        sys.exit(f"unknown sets {unknown}; known: {', '.join(SETS)}")
    rows = llmbar_rows(sets, args.limit)
    results = json.loads(args.out.read_text()) if args.out.exists() else header("judge_quality")
    results["prices"] = {"machine_hour_usd": args.machine_hour_price, "per": "this 2-core machine"}
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        bench_mode, extra = MODES[mode]
        spec = BenchSpec(
            judges=[args.judge],
            rows=rows,
            models=[args.model],
            modes=[bench_mode],
            cold_rows=2,
            overrides={**ENGINE, **extra},
            labels=LabelSource(column="label"),
            by="set",
        )
        started = time.perf_counter()
        bench = add_costs(run_bench(spec), Prices(args.machine_hour_price, "machine"))
        entry = bench["results"][0]
        if "error" in entry:
            sys.exit(f"{mode}: {entry['error']}")
        key = f"{entry['model']} | {mode} | {args.judge}" + (f" | {args.tag}" if args.tag else "")
        record = summary(entry)
        record.update(
            model=entry["model"],
            mode=mode,
            judge=args.judge,
            seconds_in_all=round(time.perf_counter() - started, 1),
            command="python benchmarks/judge_quality.py " + shlex.join(sys.argv[1:]),
            date=time.strftime("%Y-%m-%d"),
        )
        results.setdefault("runs", {})[key] = record
        results["environment"] = bench["environment"]
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        acc = record["all"]["accuracy"]
        print(
            f"{key}: accuracy {acc['estimate']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}] on "
            f"{acc['trials']} rows; {record['rows_per_s']} rows/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
