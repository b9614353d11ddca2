"""jurist's own pipeline, without a model: how fast rows stream through it per scoring mode, and how much
memory it holds.

    python benchmarks/pipeline.py [--rows 100000 1000000] [--modes MODE ...] [--profile] [--out FILE]
                                  [--baseline FILE LABEL]

For each mode and size, a JSONL file of that many rows is judged through the scripted backend into Parquet,
in a child process pinned to one core: reading, rendering, requests, parsing or reading label
probabilities, scoring, Arrow assembly, committing parts and merging them. The modes
(``pipeline_modes.py``): ``generate``, ``logprobs`` and ``probe`` scoring, each ``pointwise`` (the built-in
``graded/truthfulness``, one request a row) and ``pairwise`` (``pairwise/preference``, both orders: two
requests a row). It reports rows/s (input rows: a pairwise row is a pair) and the child's peak resident
memory; flat memory means the peak at 1M rows is close to the peak at 100k.

``--profile`` runs each child under cProfile instead (slower, so its rows/s are not the figures above) and
records, per mode, the microseconds per row spent in each stage of the pipeline and the functions with the
most time of their own (``profile`` in the results).

Results go to ``benchmarks/results/pipeline.json`` (with the command that made them); ``--baseline FILE
LABEL`` keeps the figures of an earlier run (another version of the code, say) beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, write
from pipeline_modes import JUDGES, MODES, judge_and_backend, make_input, split

STAGES = {
    # stage: (file suffix, function) whose cumulative time is the stage's; "finish" is dispatch minus backend
    "read input": ("jurist/io/sources.py", "chunks"),
    "render + requests": ("jurist/engine/plan.py", "plan_chunk"),
    "backend (scripted)": ("jurist/engine/dispatch.py", "answer"),
    "dispatch (read + score answers)": ("jurist/engine/dispatch.py", "run_plan"),
    "assemble Arrow": ("jurist/engine/assemble.py", "batch"),
    "summary": ("jurist/engine/summary.py", "add"),
    "commit parts": ("jurist/io/parts.py", "commit"),
    "merge parts": ("jurist/io/parts.py", "finish"),
}


def child(mode: str, source: str, output: str, profile: str | None) -> None:
    """Run one job (in this process, pinned to one core) and print its figures as JSON."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from jurist import Engine

    config, backend = judge_and_backend(mode, Path(output).parent)
    engine = Engine(config, backend)
    started = time.perf_counter()
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        summary = profiler.runcall(engine.run_file, source, output)
        profiler.dump_stats(profile)
    else:
        summary = engine.run_file(source, output)
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    statuses = next(iter(summary.judges.values())).statuses
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


def read_profile(path: Path, rows: int, top: int = 12) -> dict[str, Any]:
    """Microseconds per row: per stage (cumulative time of the stage's function) and for the functions with
    the most time of their own."""
    import pstats

    stats: dict[Any, Any] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, _, ct, _) in stats.values())

    def per_row(seconds: float) -> float:
        return round(1e6 * seconds / rows, 2)

    stages: dict[str, float] = {}
    for stage, (suffix, name) in STAGES.items():
        found = [v[3] for (file, _, func), v in stats.items() if file.endswith(suffix) and func == name]
        stages[stage] = per_row(sum(found))
    dispatch = "dispatch (read + score answers)"
    stages[dispatch] = round(stages[dispatch] - stages["backend (scripted)"], 2)
    own = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return {
        "total_us_per_row": per_row(total),
        "stages_us_per_row": stages,
        "top_own_time_us_per_row": {
            f"{Path(file).name}:{line}({func})": per_row(v[2]) for (file, line, func), v in own
        },
    }


def measure(mode: str, rows: int, folder: Path, profile: bool) -> dict[str, Any]:
    _, kind = split(mode)
    source = folder / f"{kind}-{rows}.jsonl"
    if not source.exists():
        make_input(source, rows, kind)
    output = folder / f"{mode}-{rows}.parquet"
    stats = folder / f"{mode}-{rows}.prof"
    command = [sys.executable, __file__, "--child", mode, str(source), str(output)]
    if profile:
        command += ["--profile-to", str(stats)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} at {rows} rows failed:\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["input_mib"] = round(source.stat().st_size / 2**20, 1)
    if profile:
        figures["profile"] = read_profile(stats, rows)
    output.unlink(missing_ok=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--profile", action="store_true", help="run the children under cProfile")
    parser.add_argument("--out", type=Path, default=RESULTS / "pipeline.json")
    parser.add_argument(
        "--baseline",
        nargs=2,
        metavar=("FILE", "LABEL"),
        help="keep an earlier results file's figures beside these (under 'baseline', with LABEL: its code)",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, source, output = args.child
        child(mode, source, output, args.profile_to)
        return
    results: dict[str, Any] = {
        **header("pipeline"),
        "command": shlex.join(["python", "benchmarks/pipeline.py", *sys.argv[1:]]),
        "judges": JUDGES,
        "backend": "scripted",
        "profiled": args.profile,
        "modes": {},
    }
    with tempfile.TemporaryDirectory() as scratch:
        for mode in args.modes:
            per_size: dict[str, Any] = {}
            for rows in args.rows:
                per_size[str(rows)] = measure(mode, rows, Path(scratch), args.profile)
                shown = {k: v for k, v in per_size[str(rows)].items() if k != "profile"}
                print(mode, rows, shown, flush=True)
            sizes = [str(r) for r in args.rows]
            if len(sizes) >= 2:
                per_size["peak_rss_ratio_largest_over_smallest"] = round(
                    per_size[sizes[-1]]["peak_rss_mib"] / per_size[sizes[0]]["peak_rss_mib"], 3
                )
            results["modes"][mode] = per_size
    if args.baseline:
        earlier = json.loads(Path(args.baseline[0]).read_text())
        label, command = args.baseline[1], earlier.get("command")
        results["baseline"] = {"label": label, "command": command, "modes": earlier["modes"]}
    write(results, args.out)


if __name__ == "__main__":
    main()
