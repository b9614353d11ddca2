"""Pairwise scheduling: both orders of every row in one batch vs two separate passes, on one engine.

    python benchmarks/pairwise_schedule.py [--rows 100] [--repeats 2] [--model PATH] [--out FILE]

On LLMBar's Natural set with the built-in ``pairwise/preference`` judge and the embedded SmolLM2 model
by default. ``one_batch`` is what jurist does: the two orders of a row are adjacent requests in one call,
so the second order finds the judge's prefix (and the question) in the prefix cache. ``two_passes``
sends every row's first order in one call, then every row's second order in another, as a harness that
runs the judge twice would. The prefix cache is emptied before each measurement; the two schedules
alternate ``--repeats`` times and the faster run of each is kept. Results go to
``benchmarks/results/pairwise_schedule.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from common import RESULTS, alternate, header, hit_rate, llmbar_records, make_backend, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "pairwise_schedule.json")
    args = parser.parse_args()

    from jurist import Engine, load_judge_config

    rows = llmbar_records(args.rows)
    backend = make_backend(args.model)
    engine = Engine(load_judge_config("pairwise/preference"), backend)
    judge = engine.judges[0]
    engine.run(rows[:2])  # warm-up
    per_row = [judge.start(row).requests for row in rows]

    def measure(schedule: str) -> dict[str, Any]:
        backend.reset_prefix_cache()
        before = backend.prefix_cache_stats()
        started = time.perf_counter()
        if schedule == "one_batch":
            completions = backend.generate([r for pair in per_row for r in pair])
        else:
            first = backend.generate([pair[0] for pair in per_row])
            second = backend.generate([pair[1] for pair in per_row])
            completions = [c for pair in zip(first, second, strict=True) for c in pair]
        seconds = time.perf_counter() - started
        outputs = [judge.combine(completions[2 * i : 2 * i + 2]) for i in range(len(rows))]
        return {
            "rows": len(rows),
            "requests": len(completions),
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "prefix_cache_hit_rate": hit_rate(before, backend.prefix_cache_stats()),
            "ok": sum(o.status == "ok" for o in outputs),
        }

    runs, best = alternate(measure, ["one_batch", "two_passes"], args.repeats)
    backend.close()
    results = {
        **header("pairwise_schedule"),
        "judge": "pairwise/preference",
        "model": backend.model_id,
        "runs": runs,
        **best,
        "one_batch_over_two_passes": round(
            best["one_batch"]["rows_per_s"] / best["two_passes"]["rows_per_s"], 3
        ),
    }
    write(results, args.out)
    print(
        json.dumps(
            {k: results[k] for k in ("one_batch", "two_passes", "one_batch_over_two_passes")}, indent=2
        )
    )


if __name__ == "__main__":
    main()
