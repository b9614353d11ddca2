"""Conversations x criteria in one engine call, against pipecat-style ``EvalJudge.evaluate`` one at a time.

    python benchmarks/conversations.py [--conversations 20] [--model PATH] [--out FILE]

Twenty short support conversations (some replies streamed as several segments, some interim), each judged
against three criteria by the built-in ``conversation/criterion`` judge on the embedded SmolLM2 model, on
one vLLM engine, the prefix cache emptied before each measurement:

1. ``batched``: ``judge_conversations`` (every conversation x criterion pair in one engine call);
2. ``one_at_a_time``: one ``EvalJudge`` per conversation, ``await judge.evaluate(criterion)`` for each
   pair in turn (how pipecat's scenarios call their judge), with a fresh verdict cache;
3. ``cached``: the same ``evaluate`` calls again, all served by the verdict cache (no model call).

Results go to ``benchmarks/results/conversations.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, make_backend, write

QUESTIONS = [
    ("What is two plus two?", ["That's", "four."]),
    ("Can you book a table for two tonight?", ["Sure, let me check what's available."]),
    ("What can you help me with?", ["I can answer questions,", "set reminders, and look things up."]),
    ("What's the capital of France?", ["The capital of France is Berlin."]),
    ("How do I reset my password?", ["Go to settings,", "choose Security, then Reset password."]),
    ("Is it going to rain tomorrow?", ["One moment,", "I'm pulling up the forecast."]),
    ("Tell me a joke.", ["Why did the chicken cross the road? To get to the other side."]),
    ("What time do you open?", ["We open at nine in the morning, Monday to Saturday."]),
    ("Can I bring my dog?", ["I'm sorry, I don't know."]),
    ("Translate 'thank you' into Spanish.", ["Gracias."]),
]
CRITERIA = ["answers the user's question", "is polite", "gives a concrete fact or time"]


def conversations(n: int) -> list[dict[str, Any]]:
    """``n`` conversations: a user question, then the reply as one or more assistant segments."""
    rows = []
    for index in range(n):
        question, segments = QUESTIONS[index % len(QUESTIONS)]
        asked = question if index < len(QUESTIONS) else f"{question} (asked again)"
        messages = [{"role": "user", "content": asked}]
        messages += [{"role": "assistant", "content": s} for s in segments]
        rows.append({"id": f"c{index}", "messages": messages})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "conversations.json")
    args = parser.parse_args()

    from jurist import EvalJudge, judge_conversations

    rows = conversations(args.conversations)
    backend = make_backend(args.model)
    judge_conversations(rows[:1], CRITERIA[:1], backend)  # warm-up
    results: dict[str, Any] = {
        **header("conversations"),
        "data": f"{len(rows)} built-in conversations x {len(CRITERIA)} criteria",
        "model": backend.model_id,
        "pairs": len(rows) * len(CRITERIA),
    }

    backend.reset_prefix_cache()
    started = time.perf_counter()
    table = judge_conversations(rows, CRITERIA, backend)
    batched = time.perf_counter() - started
    results["batched"] = {
        "seconds": round(batched, 2),
        "pairs_per_s": round(table.num_rows / batched, 3),
        "statuses": dict(collections.Counter(table["criterion.status"].to_pylist())),
        "verdicts": {
            str(k): v for k, v in collections.Counter(table["criterion.judgment"].to_pylist()).items()
        },
    }
    print("batched", results["batched"], flush=True)

    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "verdicts.sqlite3"
        judges = []
        for row in rows:
            judge = EvalJudge(backend, cache=cache)  # pipecat's default cap: max_tokens=200
            for message in row["messages"]:
                if message["role"] == "user":
                    judge.add_user_message(message["content"])
                else:
                    judge.add_assistant_message(message["content"])
            judges.append(judge)

        async def one_at_a_time() -> list[Any]:
            return [await judge.evaluate(c) for judge in judges for c in CRITERIA]

        backend.reset_prefix_cache()
        started = time.perf_counter()
        first = asyncio.run(one_at_a_time())
        loop = time.perf_counter() - started
        results["one_at_a_time"] = {
            "seconds": round(loop, 2),
            "pairs_per_s": round(len(first) / loop, 3),
            "statuses": dict(collections.Counter(v.status for v in first)),
        }
        print("one at a time", results["one_at_a_time"], flush=True)
        started = time.perf_counter()
        again = asyncio.run(one_at_a_time())
        cached = time.perf_counter() - started
        results["cached"] = {
            "seconds": round(cached, 3),
            "ms_per_evaluate": round(1000 * cached / len(again), 2),
            "hits": sum(j.cache_stats.hits for j in judges),
            "model_calls": sum(j.model_calls for j in judges),
            "same_verdicts": [v.verdict for v in first] == [v.verdict for v in again],
        }
        print("cached", results["cached"], flush=True)
    results["batched_over_one_at_a_time"] = round(loop / batched, 2)
    backend.close()
    write(results, args.out)
    print(f"batched / one at a time: {results['batched_over_one_at_a_time']}x; wrote {args.out}")


if __name__ == "__main__":
    main()
