"""LOGPROBS scoring vs generation, on the same judge, engine and rows.

    python benchmarks/scoring_modes.py [--rows 200] [--judge graded/instruction_following] [--model PATH]

On LLMBar rows (each Natural-set instruction with each of its two outputs) and the embedded SmolLM2 model
by default. ``generate`` runs the judge as configured (the built-in writes an explanation, then its
verdict, under the judge's regex); ``logprobs`` reads the verdict's label distribution after one prefill.
The prefix cache is emptied before each measurement; the two modes alternate ``--repeats`` times and the
faster run of each is kept. Results go to ``benchmarks/results/scoring_modes.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from common import RESULTS, alternate, header, llmbar_pointwise_rows, make_backend, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--judge", default="graded/instruction_following")
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "scoring_modes.json")
    args = parser.parse_args()

    from jurist import Engine, load_judge_config

    rows = llmbar_pointwise_rows(args.rows)
    backend = make_backend(args.model)
    engines = {
        "generate": Engine(load_judge_config(args.judge), backend),
        "logprobs": Engine(load_judge_config(args.judge, {"judge_params.scoring": "LOGPROBS"}), backend),
    }
    for engine in engines.values():
        engine.run(rows[:2])  # warm-up

    def measure(mode: str) -> dict[str, Any]:
        engine = engines[mode]
        name = engine.judges[0].name
        backend.reset_prefix_cache()
        started = time.perf_counter()
        table = engine.run(rows)
        seconds = time.perf_counter() - started
        statuses = table[f"{name}.status"].to_pylist()
        verdicts = table[f"{name}.judgment"].to_pylist()
        return {
            "rows": len(rows),
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "ok": statuses.count("ok"),
            "yes_share": round(sum(v is True for v in verdicts) / len(rows), 3),
            "output_tokens": sum(table[f"{name}.completion_tokens"].to_pylist()),
        }

    runs, best = alternate(measure, ["generate", "logprobs"], args.repeats)
    backend.close()
    results = {
        **header("scoring_modes"),
        "judge": args.judge,
        "model": backend.model_id,
        "runs": runs,
        **best,
        "logprobs_over_generate": round(best["logprobs"]["rows_per_s"] / best["generate"]["rows_per_s"], 2),
    }
    write(results, args.out)
    print(json.dumps({k: results[k] for k in ("generate", "logprobs", "logprobs_over_generate")}, indent=2))


if __name__ == "__main__":
    main()
