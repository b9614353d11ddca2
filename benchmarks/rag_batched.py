"""RAG metrics batched across a dataset vs one model call per row and step (scikit-plots' way).

    python benchmarks/rag_batched.py [--rows 200] [--loop-rows 20] [--model PATH] [--out FILE]

On the RAG set (``examples/rag_qa.jsonl``: 40 facts, each answered faithfully, wrongly, with an unsupported
extra claim, not at all, and without retrieval) and the embedded SmolLM2 model by default, all six metrics
(answer_correctness, answer_relevance, context_precision, context_recall, faithfulness, criteria_score)
with the built-in configs' bounds, emptying the prefix cache before each measurement:

1. ``batched``: ``evaluate_answers`` over the first ``--rows`` rows: each step of every metric goes to the
   engine for all rows at once (the engine keeps the next steps flowing while the last answers decode);
2. ``batched_same_rows``: the same over the first ``--loop-rows`` rows;
3. ``one_call_per_row_and_step``: an ``LLMJudge`` method call per row and metric over those rows, each
   sending its steps one after another, one model call per step: how scikit-plots' ``LLMJudge`` calls a
   model (answer_correctness's two independent extractions, and its two verifications, share a call).
   Same engine, same model, same prompts, same constraints.

A "row" is one input row through all six metrics. ``batched_over_one_call_per_row`` compares the same
rows; ``scores_batched_vs_one_call`` counts the (row, metric) scores that differ between the two runs
(temperature 0; batched floating-point sums differ from one sequence's). Results go to
``benchmarks/results/rag_batched.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header, hit_rate, make_backend, write
from jurist.config.rag import RagMetric

DATA = ROOT / "examples" / "rag_qa.jsonl"
METRICS = [metric.value for metric in RagMetric]  # all six


def load_rows(n: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    return rows[:n]


def batched(backend: Any, rows: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    """``evaluate_answers`` over the rows: its measurement, and every (row id, metric) score."""
    from jurist import LLMJudge, evaluate_answers

    backend.reset_prefix_cache()
    before = backend.prefix_cache_stats()
    started = time.perf_counter()
    table = evaluate_answers(rows, LLMJudge(backend), METRICS)
    seconds = time.perf_counter() - started
    out = table.to_pylist()
    scores = {(o["row_id"], m): o[f"{m}.score"] for o in out for m in METRICS}
    statuses = [o[f"{m}.status"] for o in out for m in METRICS]
    tokens = sum(o[f"{m}.completion_tokens"] or 0 for o in out for m in METRICS)
    measured = {
        "rows": len(rows),
        "seconds": round(seconds, 2),
        "rows_per_s": round(len(rows) / seconds, 3),
        "output_tokens": tokens,
        "output_tokens_per_s": round(tokens / seconds, 1),
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
        "prefix_cache_hit_rate": hit_rate(before, backend.prefix_cache_stats()),
    }
    return measured, scores


class Counting:
    """A backend that counts the calls made to another one."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.calls: list[int] = []

    @property
    def model_id(self) -> str:
        return str(self.backend.model_id)

    @property
    def constraint_kinds(self) -> Any:
        return self.backend.constraint_kinds

    def generate(self, requests: Any) -> Any:
        self.calls.append(len(requests))
        return self.backend.generate(requests)

    def close(self) -> None:
        pass


def one_call_per_row_and_step(
    backend: Any, rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    """An ``LLMJudge`` method call per row and metric, each step a call of its own."""
    from jurist import JudgeResult, LLMJudge

    counting = Counting(backend)
    judge = LLMJudge(counting, on_error="record")
    backend.reset_prefix_cache()
    started = time.perf_counter()
    results: dict[tuple[str, str], JudgeResult] = {}
    for row in rows:
        q, a, c, r = row["question"], row["answer"], row["contexts"], row["reference"]
        key = row["id"]
        results[key, "answer_relevance"] = judge.answer_relevance(q, a)
        results[key, "context_precision"] = judge.context_precision(q, c, reference=r)
        results[key, "faithfulness"] = judge.faithfulness(q, a, c)
        results[key, "criteria_score"] = judge.criteria_score(q, a, row["criteria"], reference=r, contexts=c)
        if r is not None:  # the metrics that need a reference (missing_input rows in the batched run)
            results[key, "answer_correctness"] = judge.answer_correctness(q, a, r)
            results[key, "context_recall"] = judge.context_recall(q, c, r)
    seconds = time.perf_counter() - started
    tokens = sum(res.completion_tokens for res in results.values())
    statuses = [res.status for res in results.values()]
    measured = {
        "rows": len(rows),
        "seconds": round(seconds, 2),
        "rows_per_s": round(len(rows) / seconds, 3),
        "output_tokens": tokens,
        "output_tokens_per_s": round(tokens / seconds, 1),
        "model_calls": len(counting.calls),
        "requests_per_call": max(counting.calls) if counting.calls else 0,
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
    }
    scores = {key: (None if math.isnan(res.score) else res.score) for key, res in results.items()}
    return measured, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--loop-rows", type=int, default=20, help="rows for the one-call-per-step loop")
    parser.add_argument("--model", default=None, help="HF id or folder (default: embedded SmolLM2)")
    parser.add_argument("--out", type=Path, default=RESULTS / "rag_batched.json")
    args = parser.parse_args()

    from jurist import LLMJudge, evaluate_answers

    rows = load_rows(args.rows)
    loop_rows = rows[: args.loop_rows]
    results: dict[str, Any] = {**header("rag_batched"), "data": str(DATA), "metrics": METRICS}
    backend = make_backend(args.model, prefix_caching=True)
    results["model"] = backend.model_id
    results["identity"] = LLMJudge(backend).identity()
    evaluate_answers(
        rows[:2], LLMJudge(backend), METRICS
    )  # warm-up: first-call compilation, cache allocation

    results["batched"], _ = batched(backend, rows)
    print("batched", results["batched"], flush=True)
    results["batched_same_rows"], same_scores = batched(backend, loop_rows)
    print("batched_same_rows", results["batched_same_rows"], flush=True)
    results["one_call_per_row_and_step"], loop_scores = one_call_per_row_and_step(backend, loop_rows)
    print("one_call_per_row_and_step", results["one_call_per_row_and_step"], flush=True)
    backend.close()

    same = results["batched_same_rows"]["rows_per_s"]
    results["batched_over_one_call_per_row"] = round(
        same / results["one_call_per_row_and_step"]["rows_per_s"], 2
    )
    compared = [key for key in loop_scores if key in same_scores]
    changed = [key for key in compared if same_scores[key] != loop_scores[key]]
    results["scores_batched_vs_one_call"] = {
        "compared": len(compared),
        "changed": len(changed),
        "share_changed": round(len(changed) / len(compared), 4) if compared else None,
    }
    write(results, args.out)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
