"""Throughput of jurist on vLLM, as ratios measured in one run on one box.

    python benchmarks/throughput.py [--rows 200] [--loop-rows N] [--model PATH] [--out FILE]

On LLMBar rows (each Natural-set instruction with each of its two outputs, judged by the built-in
``graded/instruction_following`` judge, JSON with an explanation) and the embedded SmolLM2 model by
default, it measures, emptying the prefix cache before each measurement:

1. ``batched``: jurist's engine, every row in one inference call;
2. ``one_row``: the same engine called one row at a time (how pipecat's EvalJudge, evaluatorq's juries
   and scikit-plots' LLMJudge call a judge) over the same rows; ``--loop-rows N`` shortens the loop to the
   first N rows, and then ``batched_same_rows`` runs those N rows in one call, so that
   ``batched_over_one_row`` always compares the same rows;
3. ``guided`` vs ``unconstrained``: decode cost per output token with the judge's regex constraint, and
   without it at exactly the same lengths (each row forced to the token count its guided answer had),
   on the loop's rows, their prompts prefilled before the timed call;
4. ``prefix_cache_off``: the batched run on a second engine with prefix caching off;
5. ``verdicts_batched_vs_one_row``: the share of rows whose temperature-0 verdict differs between the
   batched run and the one-row loop (floating-point sums in a batch differ from those of one sequence).

Results go to ``benchmarks/results/throughput.json`` (and the table printed) for the README.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, hit_rate, llmbar_pointwise_rows, make_backend, write


def timed_run(engine: Any, rows: list[dict[str, str]]) -> tuple[Any, float]:
    started = time.perf_counter()
    table = engine.run(rows)
    return table, time.perf_counter() - started


def summarize(table: Any, seconds: float, name: str) -> dict[str, Any]:
    statuses = table[f"{name}.status"].to_pylist()
    out_tokens = sum(table[f"{name}.completion_tokens"].to_pylist())
    return {
        "rows": table.num_rows,
        "seconds": round(seconds, 2),
        "rows_per_s": round(table.num_rows / seconds, 3),
        "output_tokens": out_tokens,
        "output_tokens_per_s": round(out_tokens / seconds, 1),
        "ok": statuses.count("ok"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument(
        "--loop-rows", type=int, default=None, help="rows for the one-row-at-a-time loop (default: all)"
    )
    parser.add_argument("--model", default=None, help="HF id or folder (default: embedded SmolLM2)")
    parser.add_argument("--judge", default="graded/instruction_following")
    parser.add_argument("--out", type=Path, default=RESULTS / "throughput.json")
    args = parser.parse_args()

    from jurist import Engine, load_judge_config
    from jurist.records import GenerationRequest

    rows = llmbar_pointwise_rows(args.rows)
    judge_config = load_judge_config(args.judge)
    results: dict[str, Any] = {**header("throughput"), "judge": args.judge, "rows": len(rows)}

    backend = make_backend(args.model, prefix_caching=True)
    results["model"] = backend.model_id
    engine = Engine(judge_config, backend)
    name = engine.judges[0].name
    judge = engine.judges[0]
    engine.run(rows[:4])  # warm-up: first-call compilation and cache allocation

    # 1. batched, prefix caching on
    backend.reset_prefix_cache()
    before = backend.prefix_cache_stats()
    table, seconds = timed_run(engine, rows)
    batched = summarize(table, seconds, name)
    batched["prefix_cache_hit_rate"] = hit_rate(before, backend.prefix_cache_stats())
    results["batched"] = batched
    print("batched", batched, flush=True)

    # 2. the same engine, one row per call, and the same rows in one call
    loop_rows = rows[: args.loop_rows] if args.loop_rows else rows
    same_table, same = table, batched
    if len(loop_rows) < len(rows):
        backend.reset_prefix_cache()
        same_table, same_seconds = timed_run(engine, loop_rows)
        same = results["batched_same_rows"] = summarize(same_table, same_seconds, name)
    backend.reset_prefix_cache()
    started = time.perf_counter()
    tables = [engine.run([row]) for row in loop_rows]
    loop_seconds = time.perf_counter() - started
    loop_tokens = sum(t[f"{name}.completion_tokens"][0].as_py() or 0 for t in tables)
    results["one_row"] = {
        "rows": len(loop_rows),
        "seconds": round(loop_seconds, 2),
        "rows_per_s": round(len(loop_rows) / loop_seconds, 3),
        "output_tokens_per_s": round(loop_tokens / loop_seconds, 1),
        "ok": sum(t[f"{name}.status"][0].as_py() == "ok" for t in tables),
    }
    results["batched_over_one_row"] = round(same["rows_per_s"] / results["one_row"]["rows_per_s"], 2)
    print("one_row", results["one_row"], flush=True)
    # the same rows at temperature 0, in a batch and alone: does the batch change a verdict?
    batched_verdicts = same_table[f"{name}.judgment"].to_pylist()
    alone_verdicts = [t[f"{name}.judgment"][0].as_py() for t in tables]
    changed = sum(a != b for a, b in zip(batched_verdicts, alone_verdicts, strict=True))
    results["verdicts_batched_vs_one_row"] = {
        "rows": len(loop_rows),
        "changed": changed,
        "share_changed": round(changed / len(loop_rows), 4),
    }
    print("verdicts", results["verdicts_batched_vs_one_row"], flush=True)

    # 3. guided vs unconstrained at equal lengths (decode time per output token), on the loop's rows
    requests = [judge.generation_request(judge.render(row)) for row in loop_rows]
    lengths = same_table[f"{name}.completion_tokens"].to_pylist()
    # greedy decoding repeats each guided answer (up to bf16 batch effects); the unconstrained twin is
    # forced to the length the guided answer had
    guided_requests = requests
    free_requests = [
        dataclasses.replace(r, constraint=None, min_tokens=n, max_tokens=n)
        for r, n in zip(requests, lengths, strict=True)
    ]

    def decode(batch: list[GenerationRequest]) -> dict[str, Any]:
        # prefill every prompt first (one free token each), so the timed call is decoding only
        backend.reset_prefix_cache()
        backend.generate([dataclasses.replace(r, constraint=None, min_tokens=1, max_tokens=1) for r in batch])
        started = time.perf_counter()
        completions = backend.generate(batch)
        seconds = time.perf_counter() - started
        tokens = sum(c.completion_tokens for c in completions)
        return {
            "seconds": round(seconds, 2),
            "output_tokens": tokens,
            "output_tokens_per_s": round(tokens / seconds, 1),
        }

    pairs = []
    for _ in range(3):  # alternate to spread the box's noise over both
        pairs.append((decode(guided_requests), decode(free_requests)))
    guided = min((g for g, _ in pairs), key=lambda d: d["seconds"])
    free = min((f for _, f in pairs), key=lambda d: d["seconds"])
    results["guided"] = guided
    results["unconstrained_equal_length"] = free
    results["guided_cost_per_token"] = round(
        free["output_tokens_per_s"] / guided["output_tokens_per_s"] - 1, 3
    )
    print("guided", guided, "unconstrained", free, flush=True)
    backend.close()

    # 4. prefix caching off (a second engine; the first is shut down)
    backend_off = make_backend(args.model, prefix_caching=False)
    engine_off = Engine(judge_config, backend_off)
    engine_off.run(rows[:4])
    table_off, seconds_off = timed_run(engine_off, rows)
    results["prefix_cache_off"] = summarize(table_off, seconds_off, name)
    off = results["prefix_cache_off"]
    results["prefix_cache_on_over_off"] = round(batched["rows_per_s"] / off["rows_per_s"], 3)
    print("prefix_cache_off", results["prefix_cache_off"], flush=True)
    backend_off.close()

    write(results, args.out)
    print(table_markdown(results))


def table_markdown(r: dict[str, Any]) -> str:
    def row(label: str, key: str) -> str:
        rows_per_s = r[key].get("rows_per_s", "")
        return f"| {label} | {rows_per_s} | {r[key]['output_tokens_per_s']} |"

    lines = [
        "| measurement | rows/s | output tokens/s |",
        "|---|---|---|",
        row(f"batched, {r['rows']} rows in one call (prefix cache on)", "batched"),
    ]
    if "batched_same_rows" in r:
        lines.append(row(f"batched, the loop's {r['one_row']['rows']} rows in one call", "batched_same_rows"))
    lines += [
        row(f"one row per call, same engine, {r['one_row']['rows']} rows", "one_row"),
        row("batched, prefix cache off", "prefix_cache_off"),
        row("guided decode, prompts prefilled", "guided"),
        row("unconstrained decode, same lengths, prompts prefilled", "unconstrained_equal_length"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
