"""``jurist audit`` and ``jurist estimate`` on LLMBar Natural with the embedded default model.

    flock /tmp/jurist-engine.lock python benchmarks/llmbar_evidence.py [--pairs 100]

The first ``--pairs`` Natural records give two runs, both in LOGPROBS scoring:

* pointwise: each instruction with each of its two outputs (``generic/instruction_following``, a Yes/No
  judge), 2 x pairs rows; the label of a row is yes when its output is the one LLMBar marks better;
* pairwise: each record judged in both orders (``pairwise/preference``); the label is LLMBar's 1/2.

Labels come from the Natural file, written beside the inputs as label files joined by row id. Then
``jurist audit`` and ``jurist estimate`` run on each result with its labels, and ``jurist report`` writes
the pointwise run's HTML page. Everything goes to ``benchmarks/results/llmbar_evidence/`` (the inputs, the
labels, the result tables, the audit and estimate JSON, the report) and the summary to
``benchmarks/results/llmbar_evidence.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, llmbar_records, write


def jurist(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "jurist", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"jurist {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--sample", type=int, default=60, help="Labelled rows of the PPI++ demonstration.")
    parser.add_argument("--reuse", action="store_true", help="Keep result tables already judged.")
    parser.add_argument("--out", type=Path, default=RESULTS / "llmbar_evidence")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    records = llmbar_records(args.pairs)

    points, point_labels, pairs, pair_labels = [], [], [], []
    for number, record in enumerate(records):
        for side in ("1", "2"):
            row_id = f"{number}-{side}"
            points.append(
                {
                    "id": row_id,
                    "pair": number,
                    "request": record["input"],
                    "response": record[f"output_{side}"],
                }
            )
            point_labels.append({"id": row_id, "label": "yes" if str(record["label"]) == side else "no"})
        pairs.append({"id": str(number), **{k: record[k] for k in ("input", "output_1", "output_2")}})
        pair_labels.append({"id": str(number), "label": record["label"]})
    # a random sample of the pointwise rows keeps its labels: PPI++ adds the judge's scores on the rest
    sample = random.Random(0).sample(point_labels, min(args.sample, len(point_labels)))
    for name, rows in (
        ("pointwise_sample_labels.jsonl", sample),
        ("pointwise.jsonl", points),
        ("pointwise_labels.jsonl", point_labels),
        ("pairwise.jsonl", pairs),
        ("pairwise_labels.jsonl", pair_labels),
    ):
        write_jsonl(out / name, rows)

    summary: dict[str, Any] = {**header("llmbar_evidence"), "pairs": len(records)}
    summary_path = args.out.with_suffix(".json")
    earlier = json.loads(summary_path.read_text()) if args.reuse and summary_path.is_file() else {}
    for kind, config in (("pointwise", "generic/instruction_following"), ("pairwise", "pairwise/preference")):
        results = out / f"{kind}.parquet"
        started = time.perf_counter()
        judged = not (args.reuse and results.is_file())
        if judged:
            jurist(
                "judge",
                "dataset",
                "-c",
                config,
                "-i",
                str(out / f"{kind}.jsonl"),
                "-o",
                str(results),
                "--id-column",
                "id",
                "--overwrite",
                "--quiet",
                "--judge_params.scoring",
                "LOGPROBS",
            )
        # a reused table keeps the judging time of the run that wrote it
        seconds = time.perf_counter() - started if judged else earlier.get(kind, {}).get("judge_seconds", 0.0)
        results.with_name(results.name + ".log").unlink(missing_ok=True)  # the run's log: not a result
        labels = ["--labels", str(out / f"{kind}_labels.jsonl"), "--labels-id-column", "id"]
        audit = json.loads(jurist("audit", str(results), *labels, "--json"))
        estimate = json.loads(jurist("estimate", str(results), *labels, "--json"))
        (out / f"{kind}_audit.json").write_text(json.dumps(audit, indent=2) + "\n")
        (out / f"{kind}_estimate.json").write_text(json.dumps(estimate, indent=2) + "\n")
        (out / f"{kind}_audit.txt").write_text(jurist("audit", str(results), *labels))
        (out / f"{kind}_estimate.txt").write_text(jurist("estimate", str(results), *labels))
        if kind == "pointwise":
            sampled = ["--labels", str(out / "pointwise_sample_labels.jsonl"), "--labels-id-column", "id"]
            summary["pointwise_sample_estimate"] = json.loads(
                jurist("estimate", str(results), *sampled, "--json")
            )
            (out / "pointwise_sample_estimate.txt").write_text(jurist("estimate", str(results), *sampled))
        summary[kind] = {
            "config": config,
            "judge_seconds": round(seconds, 1),
            "audit": audit,
            "estimate": estimate,
        }
    jurist(
        "report",
        str(out / "pointwise.parquet"),
        "-o",
        str(out / "pointwise_report.html"),
        "--labels",
        str(out / "pointwise_labels.jsonl"),
        "--labels-id-column",
        "id",
    )
    write(summary, summary_path)
    for text in sorted(out.glob("*.txt")):
        print(f"== {text.name}\n{text.read_text()}")


if __name__ == "__main__":
    main()
