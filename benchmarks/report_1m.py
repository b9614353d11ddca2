"""``jurist report`` on a large result: time and size of the page for a 1M-row scripted run.

    python benchmarks/report_1m.py [--rows 1000000] [--labels 2000] [--keep DIR]

A JSONL file of ``--rows`` rows (a request and a response of 40-1,200 characters) is judged by
``generic/truthfulness`` in LOGPROBS scoring through the scripted backend, whose P(Yes) grows with the
response's length plus noise and which fails one row in 500 (those rows get an error status); a random
``--labels`` of the rows get a human label from a hidden truth. Then ``python -m jurist report`` (a fresh
process: imports, reading, audit, PPI++, plots, HTML) writes the page, timed from the outside. Results
(seconds, megabytes, the page's figure count) go to ``benchmarks/results/report_1m.json``; the goals are
under 60 s and under 5 MB.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from common import RESULTS, header, write


def make_input(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            words = rng.randint(8, 240)
            response = " ".join(rng.choice(("sky", "blue", "light", "scatters", "air")) for _ in range(words))
            handle.write(
                json.dumps({"id": i, "request": f"Question {i}: why is the sky blue?", "response": response})
                + "\n"
            )


def scripted_labels(request: Any) -> Any:
    from jurist.records import LabelScores

    text = request.messages[-1].content
    noise = zlib.crc32(text.encode()) % 1000 / 500 - 1
    if noise > 0.996:
        return LabelScores(logprobs=None, error="scripted failure")
    p_yes = 1 / (1 + math.exp(-(-0.5 + len(text) / 800 + 1.5 * noise)))
    return {
        label: math.log(p_yes if label.lower().startswith("y") else 1 - p_yes) for label in request.labels
    }


def judge(source: Path, output: Path) -> float:
    from jurist import Engine, ScriptedBackend, load_judge_config

    config = load_judge_config("generic/truthfulness", {"judge_params.scoring": "LOGPROBS"})
    started = time.perf_counter()
    Engine(config, ScriptedBackend([], labels=scripted_labels, record=False)).run_file(source, output)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=2_000)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the input and results here.")
    parser.add_argument("--out", type=Path, default=RESULTS / "report_1m.json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        source, results, page = folder / "rows.jsonl", folder / "results.parquet", folder / "report.html"
        make_input(source, args.rows)
        judge_seconds = judge(source, results) if not results.is_file() else None
        rng = random.Random(1)
        labels = folder / "labels.jsonl"
        with labels.open("w", encoding="utf-8") as handle:
            for i in rng.sample(range(args.rows), args.labels):
                handle.write(json.dumps({"id": str(i), "label": rng.random() < 0.55}) + "\n")
        command = [sys.executable, "-m", "jurist", "report", str(results), "-o", str(page)]
        command += ["--labels", str(labels), "--labels-id-column", "id"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"jurist report failed:\n{done.stderr[-3000:]}")
        html = page.read_text(encoding="utf-8")
        outcome = {
            **header("report_1m"),
            "data": "synthetic",
            "rows": args.rows,
            "labelled_rows": args.labels,
            "judge_seconds": None if judge_seconds is None else round(judge_seconds, 1),
            "results_mib": round(results.stat().st_size / 2**20, 1),
            "report_seconds": round(seconds, 1),
            "report_mb": round(len(html.encode("utf-8")) / 1e6, 3),
            "images": html.count("<img "),
            "goals": {"seconds": 60, "mb": 5},
        }
    write(outcome, args.out)
    print(json.dumps({k: v for k, v in outcome.items() if k != "machine"}, indent=2))


if __name__ == "__main__":
    main()
