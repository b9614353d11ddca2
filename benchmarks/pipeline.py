"""jurist's own pipeline, without a model: how fast rows stream through it, and how much memory it holds.

    python benchmarks/pipeline.py [--rows 100000 1000000] [--out FILE]

For each size, a JSONL file of that many rows (an instruction and a response of about 300 characters) is
judged by the built-in ``graded/truthfulness`` judge through the scripted backend (a constant, well-formed
answer) into Parquet, in a child process pinned to one core: reading, rendering, requests, parsing, scoring,
Arrow assembly, committing parts and merging them. It reports rows/s and the child's peak resident memory;
flat memory means the peak at 1M rows is close to the peak at 100k. Eight GPUs judging about 240 rows/s
each need about 1,920 rows/s from this pipeline.

Results go to ``benchmarks/results/pipeline.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, write

ANSWER = '{"explanation": "The response answers the question correctly.", "judgment": "Yes"}'


def make_input(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            request = f"Question {i}: explain why the sky looks blue during the day and red at sunset."
            response = f"Answer {i}: sunlight scatters off air molecules; " + "blue light scatters most. " * 8
            handle.write(json.dumps({"id": i, "request": request, "response": response}) + "\n")


def child(source: str, output: str) -> None:
    """Run one job (in this process, pinned to one core) and print its figures as JSON."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from jurist import Engine, ScriptedBackend

    started = time.perf_counter()
    summary = Engine("graded/truthfulness", ScriptedBackend([ANSWER], cycle=True, record=False)).run_file(
        source, output
    )
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    statuses = summary.judges["truthfulness"].statuses
    print(
        json.dumps(
            {
                "rows": summary.rows,
                "seconds": round(seconds, 2),
                "rows_per_s": round(summary.rows / seconds),
                "peak_rss_mib": round(peak_kib / 1024, 1),
                "ok": statuses.get("ok", 0),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--out", type=Path, default=RESULTS / "pipeline.json")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    results: dict[str, Any] = {**header("pipeline"), "judge": "graded/truthfulness", "backend": "scripted"}
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            source = Path(folder) / f"rows-{rows}.jsonl"
            make_input(source, rows)
            output = Path(folder) / f"out-{rows}.parquet"
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(source), str(output)],
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            figures["input_mib"] = round(source.stat().st_size / 2**20, 1)
            results[str(rows)] = figures
            print(rows, figures, flush=True)
    sizes = [str(r) for r in args.rows]
    if len(sizes) >= 2:
        results["peak_rss_ratio_largest_over_smallest"] = round(
            results[sizes[-1]]["peak_rss_mib"] / results[sizes[0]]["peak_rss_mib"], 3
        )
    write(results, args.out)


if __name__ == "__main__":
    main()
