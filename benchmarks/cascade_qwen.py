"""A real cascade: Qwen2.5-Coder-0.5B in LOGPROBS, then Qwen2.5-Coder-1.5B, on LLMBar, calibrated on labels.

    python benchmarks/cascade_qwen.py [--sets Natural,Adversarial_Neighbor] [--targets 0.5,0.6] \\
        [--delta 0.1] [--target auto] [--probe HEAD --rows ROWS.jsonl]

The rows are split at random (seed 0) into a calibration half, whose labels the thresholds are chosen on,
and a test half, on which the kept verdicts' agreement with LLMBar's labels is measured. Both judges are
``pairwise/preference`` in LOGPROBS (each stage's confidence: the winner's order-averaged probability).

1. Both stages judge every row once (jurist's engine, one model at a time): the certification table, for
   each target agreement and number of calibration labels, calibrates the cascade
   (:func:`jurist.stats.selective.calibrate_cascade`: fixed-sequence testing, exact binomial bound,
   at ``--delta``) on the first N calibration rows and applies the thresholds to the test half: whether the
   target certified, the share stage 1 decides, the measured agreement of its kept verdicts and of all the
   cascade's verdicts, beside each model alone.
2. The cascade then runs for real at one target (``--target``, default the highest certified target at
   which stage 1 decides at least a fifth of the test rows) through ``jurist bench --cascade`` with the
   calibration half as ``--calibration-labels`` (``--no-baseline``): the cascade's seconds against the
   1.5B's own over the same rows in step 1 (the compute saved, measured; loading apart in both), and its
   verdicts' agreement on the test half.

With ``--probe HEAD`` stage 1 is the 0.5B in scoring PROBE with that head (``jurist probe fit``;
``benchmarks/probe_heads.py`` writes one), on ``--rows`` (rows the head was not fitted on, e.g. the held-out
rows that benchmark writes): results in ``cascade_qwen.probe.json``.

Results: ``benchmarks/results/cascade_qwen.json`` (``cascade_qwen.SETS.json`` for other sets), with each
row's confidence and verdict per stage.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from common import RESULTS, header, write
from judge_quality import llmbar_rows

SMALL, LARGE = "small", "large"  # the stages' names
MODELS = MappingProxyType({SMALL: "qwen2.5-coder-0.5b-instruct", LARGE: "qwen2.5-coder-1.5b-instruct"})
TARGETS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
DEFAULT_SETS = "Natural,Adversarial_Neighbor"
COUNTS = (30, 60, 90)  # calibration labels used, besides all of the calibration half
ENGINE = {"model_max_length": 8192}


@dataclass(frozen=True)
class Stages:
    """Each stage's model, and the probe head of a stage judged in PROBE scoring (``--probe``)."""

    models: Mapping[str, str]
    probes: Mapping[str, str]


def stage(stages: Stages, name: str) -> Any:
    """The stage ``name`` (small or large): pairwise/preference in LOGPROBS on its model (in PROBE with
    the stage's head, when given)."""
    from jurist import load_judge_config

    head = stages.probes.get(name)
    model = stages.models[name]
    scoring = {"judge_params.scoring": "PROBE", "judge_params.probe": head} if head else {}
    return load_judge_config(
        "pairwise/preference",
        {
            "judge_params.scoring": "LOGPROBS",
            **scoring,
            "inference_config.model.model_name": None if model == "default" else model,
            "inference_config.model.model_max_length": ENGINE["model_max_length"],
            "inference_config.engine_params.gpu_memory_utilization": 0.2,
        },
        name=name,
    )


def judged(
    stages: Stages, name: str, rows: list[dict[str, Any]]
) -> tuple[list[float | None], list[Any], float]:
    """Each row's confidence and verdict as a cascade stage, and the judging seconds (load apart)."""
    from jurist import Engine
    from jurist.cascade.confidence import confidence_of, verdict_of

    engine = Engine(stage(stages, name))
    try:
        engine.outputs(rows[:1])  # load the model (and warm it) before the clock starts
        started = time.perf_counter()
        outputs = engine.outputs(rows)[engine.judges[0].name]
        seconds = time.perf_counter() - started
    finally:
        engine.close()
    judge = engine.judges[0]
    return [confidence_of(judge, o) for o in outputs], [verdict_of(judge, o) for o in outputs], seconds


def kept_by(confidence: float | None, threshold: float | None) -> bool:
    """Whether stage 1 keeps a verdict of this confidence (never without a threshold or a confidence)."""
    return threshold is not None and confidence is not None and confidence >= threshold


def share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def certification(
    stages: dict[str, tuple[list[float | None], list[Any], float]],
    truth: list[str],
    calibration: list[int],
    test: list[int],
    delta: float,
    targets: tuple[float, ...] = TARGETS,
) -> list[dict[str, Any]]:
    """Per target and label count: the thresholds calibrated on the first N calibration rows, applied to the
    test rows."""
    from jurist.stats.selective import calibrate_cascade

    (c1, v1, _), (_, v2, _) = stages[SMALL], stages[LARGE]
    correct = {name: [v == t for v, t in zip(s[1], truth, strict=True)] for name, s in stages.items()}
    table = []
    for target in targets:
        for count in (*(c for c in COUNTS if c < len(calibration)), len(calibration)):
            labelled = calibration[:count]
            try:
                choices = calibrate_cascade(
                    [
                        ([stages[m][0][i] for i in labelled], [correct[m][i] for i in labelled])
                        for m in (SMALL, LARGE)
                    ],
                    target,
                    delta,
                    abstain=False,
                )
            except Exception as exc:  # too few labels for the target: the refusal users see
                table.append({"target": target, "labels": count, "refused": str(exc)})
                continue
            first = choices[0]
            assert first is not None
            threshold = first.threshold
            kept = [i for i in test if kept_by(c1[i], threshold)]
            verdicts = {i: (v1[i] if i in kept else v2[i]) for i in test}
            table.append(
                {
                    "target": target,
                    "labels": count,
                    "certified": first.certified,
                    "threshold": threshold,
                    "agreement_lower_bound": round(first.agreement_bound, 4),
                    "stage1_share_test": share([i in kept for i in test]),
                    "stage1_kept_agreement_test": share([v1[i] == truth[i] for i in kept]),
                    "cascade_agreement_test": share([verdicts[i] == truth[i] for i in test]),
                }
            )
    return table


def real_run(
    setup: Stages,
    rows: list[dict[str, Any]],
    calibration: list[int],
    target: float,
    delta: float,
    folder: Path,
) -> dict[str, Any]:
    """``jurist bench --cascade`` at ``target``: its bench.json entry and its result rows."""
    from jurist.config.loading import config_to_yaml

    data = folder / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = folder / "calibration.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": rows[i]["id"], "label": rows[i]["label"]}) + "\n" for i in calibration)
    )
    stages = []
    for name in (SMALL, LARGE):
        path = folder / f"{name}.yaml"
        path.write_text(config_to_yaml(stage(setup, name)))
        stages += ["--cascade", str(path)]
    out = folder / "bench"
    command = [sys.executable, "-m", "jurist", "bench", *stages, "-i", str(data), "-o", str(out),
               "--rows", str(len(rows)), "--cold-rows", "2", "--no-baseline",
               "--calibration-labels", str(labels), "--target-agreement", str(target),
               "--delta", str(delta)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"jurist bench --cascade failed:\n{done.stderr[-4000:]}")
    import pyarrow.parquet as pq

    bench = json.loads((out / "bench.json").read_text())
    return {"bench": bench, "rows": pq.read_table(out / "cascade.parquet").to_pylist(), "stdout": done.stdout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS)
    parser.add_argument("--targets", default=",".join(map(str, TARGETS)), help="Targets of the table.")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--target", default="auto")
    parser.add_argument("--small", default=MODELS[SMALL], help="Stage 1's model ('default': SmolLM2).")
    parser.add_argument("--large", default=MODELS[LARGE], help="Stage 2's model.")
    parser.add_argument("--limit", type=int, default=0, help="Rows per set (0: all).")
    parser.add_argument("--out", type=Path, default=None, help="Default: cascade_qwen[.SETS].json")
    parser.add_argument("--probe", type=Path, default=None, help="Stage 1 in PROBE scoring with this head.")
    parser.add_argument("--rows", type=Path, default=None, help="JSONL rows instead of --sets (with a set).")
    args = parser.parse_args()
    suffix = "" if args.sets == DEFAULT_SETS else "." + args.sets.replace(",", "+")
    setup = Stages(
        {SMALL: args.small, LARGE: args.large},
        {SMALL: str(args.probe.resolve())} if args.probe is not None else {},
    )
    if args.probe is not None:
        suffix = ".probe"
    out = args.out or RESULTS / f"cascade_qwen{suffix}.json"
    targets = tuple(float(t) for t in args.targets.split(","))
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")

    if args.rows is not None:
        given = [
            json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        given = [r for r in given if not str(r.get("row", "")).endswith(":mirror")]
    else:
        given = llmbar_rows(args.sets.split(","), args.limit)
    rows = [{**r, "id": f"{r['set']}-{n}"} for n, r in enumerate(given)]
    truth = ["a" if int(r["label"]) == 1 else "b" for r in rows]
    order = list(range(len(rows)))
    random.Random(0).shuffle(order)
    calibration, test = order[: len(rows) // 2], order[len(rows) // 2 :]

    stages = {model: judged(setup, model, rows) for model in (SMALL, LARGE)}
    table = certification(stages, truth, calibration, test, args.delta, targets)
    alone = {
        model: {
            "agreement_test": share([stages[model][1][i] == truth[i] for i in test]),
            "rows_per_s": round(len(rows) / stages[model][2], 3),
        }
        for model in (SMALL, LARGE)
    }
    full = [e for e in table if e.get("labels") == len(calibration) and e.get("certified")]
    if args.target == "auto":
        useful = [e for e in full if (e["stage1_share_test"] or 0) >= 0.2]
        target = max(e["target"] for e in useful) if useful else min(targets)
    else:
        target = float(args.target)

    with tempfile.TemporaryDirectory() as scratch:
        run = real_run(setup, rows, calibration, target, args.delta, Path(scratch))
    cascade_rows = {r["id"]: r for r in run["rows"]}
    entry = next(e for e in run["bench"]["results"] if str(e.get("judge", "")).startswith("cascade"))
    verdict_column = "cascade.winner"
    test_ids = [rows[i]["id"] for i in test]
    measured = share(
        [cascade_rows[rid][verdict_column] == truth[i] for rid, i in zip(test_ids, test, strict=True)]
    )
    results = {
        **header("cascade_qwen"),
        "models": dict(setup.models),
        "probe": setup.probes.get(SMALL),
        "rows_file": str(args.rows) if args.rows else None,
        "command": "python benchmarks/cascade_qwen.py " + " ".join(sys.argv[1:]),
        "sets": sorted({r["set"] for r in rows}),
        "rows": len(rows),
        "calibration_rows": len(calibration),
        "test_rows": len(test),
        "delta": args.delta,
        "alone": alone,
        "certification": table,
        "stage_rows": {  # each row's confidence and verdict per stage, to compute other tables from
            model: {"id": [r["id"] for r in rows], "confidence": stage_[0], "verdict": stage_[1]}
            for model, stage_ in stages.items()
        },
        "real_run": {
            "target": target,
            "cascade": entry.get("cascade"),
            "warm": entry.get("warm"),
            "agreement_test": measured,
            "seconds": (entry.get("warm") or {}).get("seconds"),
            "large_alone_seconds": round(stages[LARGE][2], 2),
            "seconds_saved_share": (
                round(1 - entry["warm"]["seconds"] / stages[LARGE][2], 4) if entry.get("warm") else None
            ),
            "stdout": run["stdout"].splitlines(),
        },
    }
    write(results, out)
    print(json.dumps({k: v for k, v in results.items() if k != "certification"}, indent=1)[:4000])


if __name__ == "__main__":
    main()
