"""A judge that thinks first against the same judge answering at once, on LLMBar with its human labels.

    flock /tmp/jurist-engine.lock python benchmarks/reasoning.py [--model ID] [--pairs 60] \\
        [--budgets 64,256] [--scoring LOGPROBS]

The built-in ``pairwise/preference`` judge (both orders) on LLMBar's first ``--pairs`` Natural pairs, on
one warm engine (SmolLM2 by default, or ``--model``): once without reasoning, then with
``judge_params.reasoning.budget_tokens`` set to each of ``--budgets``. For each: accuracy of the winner
against LLMBar's label (an inconclusive or failed row counts as wrong), the share of rows with a verdict,
reasoning tokens per judgment (per order), the share of orders whose reasoning the budget cut, the seconds
and the ratio to the run without reasoning. Writes ``benchmarks/results/reasoning.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import RESULTS, header, llmbar_records, make_backend, write


def run(backend: Any, rows: list[dict[str, Any]], scoring: str, budget: int | None) -> dict[str, Any]:
    """One warm run of the judge over ``rows``; its figures."""
    from jurist import Engine, Judge

    overrides: dict[str, Any] = {"judge_params.scoring": scoring}
    if budget is not None:
        overrides["judge_params.reasoning.budget_tokens"] = budget
    judge = Judge.from_config("pairwise/preference", overrides, name="pref")
    started = time.perf_counter()
    table = Engine([judge], backend, chunk_size=len(rows)).run(
        [{"question": r["input"], "response_a": r["output_1"], "response_b": r["output_2"]} for r in rows]
    )
    seconds = time.perf_counter() - started
    truth = ["a" if int(r["label"]) == 1 else "b" for r in rows]
    winners = table["pref.winner"].to_pylist()
    out: dict[str, Any] = {
        "budget_tokens": budget,
        "seconds": round(seconds, 2),
        "accuracy": round(sum(w == t for w, t in zip(winners, truth, strict=True)) / len(rows), 4),
        "decided_share": round(sum(w in ("a", "b", "tie") for w in winners) / len(rows), 4),
        "statuses": dict(sorted(Counter(table["pref.status"].to_pylist()).items())),
    }
    if budget is not None:
        tokens = table["pref.reasoning_tokens"].to_pylist()
        cut = table["pref.reasoning_cut"].to_pylist()
        orders = 2 * len(rows)
        out["reasoning_tokens_per_order"] = round(sum(t or 0 for t in tokens) / orders, 1)
        out["cut_share_of_orders"] = round(sum(c or 0 for c in cut) / orders, 4)
        texts = table["pref.reasoning"].to_pylist()
        out["example_reasoning"] = (texts[0] or [""])[0][:300]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="A model id or folder (default: the embedded SmolLM2).")
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--budgets", default="64,256")
    parser.add_argument("--scoring", default="LOGPROBS", choices=("LOGPROBS", "GENERATE"))
    parser.add_argument("--out", type=Path, default=RESULTS / "reasoning.json")
    args = parser.parse_args()

    rows = llmbar_records(args.pairs)
    backend = make_backend(args.model)
    try:
        run(backend, rows[:4], args.scoring, None)  # warm the engine
        plain = run(backend, rows, args.scoring, None)
        thinking = [run(backend, rows, args.scoring, int(b)) for b in args.budgets.split(",")]
        model = backend.model_id
    finally:
        backend.close()
    for entry in thinking:
        entry["seconds_over_no_reasoning"] = round(entry["seconds"] / plain["seconds"], 2)
    results = {
        **header("reasoning"),
        "model": model,
        "judge": "pairwise/preference",
        "scoring": args.scoring,
        "pairs": len(rows),
        "no_reasoning": plain,
        "reasoning": thinking,
    }
    write(results, args.out)
    print(json.dumps({k: v for k, v in results.items() if k not in ("machine",)}, indent=2))


if __name__ == "__main__":
    main()
