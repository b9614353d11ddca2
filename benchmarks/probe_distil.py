"""Distillation: a probe head on Qwen2.5-Coder-0.5B fitted on Qwen2.5-Coder-1.5B's verdicts instead of
people's labels, on the rows and split of ``benchmarks/probe_heads.py`` (run that first: it leaves its rows
and features in ``--work``).

    python benchmarks/probe_distil.py [--work /tmp/jurist-probe-bench]

1. The 1.5B judges the 234 training rows in LOGPROBS (``jurist judge dataset``).
2. ``jurist probe fit --verdicts`` fits the 0.5B's head on those verdicts (the 0.5B's features are the ones
   ``probe_heads.py`` cached: the same prompts on the same model).
3. The distilled head judges the 100 held-out rows on vLLM (PROBE); the 1.5B's LOGPROBS verdicts on them
   are read from ``benchmarks/results/cascade_qwen.probe.json`` (run ``cascade_qwen.py --probe`` first): the
   head's agreement with the 1.5B, and both against people's labels, with Wilson 95 % intervals.

The result is merged into ``benchmarks/results/probe_heads.json`` under ``distillation``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common import RESULTS
from probe_heads import ENGINE, jurist, wilson

SMALL, LARGE = "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"
JUDGE = "pairwise/preference"


def judge(work: Path, rows: str, model: str, out: str, *extra: str) -> list[dict[str, Any]]:
    path = work / out
    summary = work / (out + ".summary.json")
    jurist(
        "judge", "dataset", "-c", JUDGE, "-i", str(work / rows), "-o", str(path), "--model", model,
        "--overwrite", "-q", "--summary-json", str(summary), *ENGINE, *extra,
    )  # fmt: skip
    return list(pq.read_table(path).to_pylist())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-probe-bench"))
    args = parser.parse_args()
    work = args.work
    train = [json.loads(line) for line in (work / "train.jsonl").read_text().splitlines() if line]
    test = [json.loads(line) for line in (work / "test.jsonl").read_text().splitlines() if line]
    held = [r for r in test if not r["row"].endswith(":mirror")]
    write = "".join(json.dumps(r) + "\n" for r in held)
    (work / "held.jsonl").write_text(write, encoding="utf-8")
    big_train = judge(work, "train.jsonl", LARGE, "large_train.parquet", "--judge_params.scoring", "LOGPROBS")
    verdicts = [r["preference.winner"] for r in big_train]
    head = work / "head_distilled.json"
    shutil.copy(work / "head.json.features.npz", work / "head_distilled.json.features.npz")  # same prompts
    jurist(
        "probe", "fit", "-c", JUDGE, "-i", str(work / "train.jsonl"), "-o", str(head), "--model", SMALL,
        "--verdicts", str(work / "large_train.parquet"), *ENGINE,
    )  # fmt: skip
    fit = json.loads(head.read_text(encoding="utf-8"))["metrics"]
    distilled = judge(work, "held.jsonl", SMALL, "distilled.parquet", "--judge_params.scoring", "PROBE",
                      "--judge_params.probe", str(head))  # fmt: skip
    # the 1.5B's verdicts on the held-out rows, as cascade_qwen.py --probe recorded them (same rows, order)
    cascade = json.loads((RESULTS / "cascade_qwen.probe.json").read_text(encoding="utf-8"))
    big_w = list(cascade["stage_rows"]["large"]["verdict"])
    assert len(big_w) == len(held)
    truth = ["a" if int(r["label"]) == 1 else "b" for r in held]
    small_w = [r["preference.winner"] for r in distilled]
    result = {
        "command": "python benchmarks/probe_distil.py " + shlex.join(sys.argv[1:]),
        "teacher": LARGE,
        "student": SMALL,
        "teacher_train_accuracy": wilson(
            sum(
                v == t
                for v, t in zip(verdicts, ("a" if int(r["label"]) == 1 else "b" for r in train), strict=True)
            ),
            len(train),
        ),
        "fit": {k: fit.get(k) for k in ("rows", "layer", "c", "accuracy", "own_verdict", "baselines", "ece")},
        "held_out": {
            "head_agrees_with_teacher": wilson(
                sum(a == b for a, b in zip(small_w, big_w, strict=True)), len(held)
            ),
            "head_against_people": wilson(
                sum(a == t for a, t in zip(small_w, truth, strict=True)), len(held)
            ),
            "teacher_against_people": wilson(
                sum(a == t for a, t in zip(big_w, truth, strict=True)), len(held)
            ),
        },
    }
    path = RESULTS / "probe_heads.json"
    merged = json.loads(path.read_text(encoding="utf-8"))
    merged["distillation"] = result
    path.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
