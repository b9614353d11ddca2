"""Filtering a corpus with a big judge's grades at a small judge's price: the recipe, measured on real text.

    python benchmarks/distil_recipe.py [--work /tmp/jurist-distil] [--out FILE]

The rows: every response of ../shared/data/llmbar (LLMBar's 419 pairs and the 200 MT-Bench pairs) as its own
row, 1,238 request-response rows, each knowing its pair and whether people preferred it. The pairs are split
at random (seed 0): 500 pairs (1,000 rows) to fit on, the other 119 pairs (238 rows) held out.

1. The teacher, Qwen2.5-Coder-1.5B with ``graded/instruction_following`` in LOGPROBS, grades every row (its
   P(Yes) is the grade); the student model's own prompted judge (Qwen2.5-Coder-0.5B, the same config) too.
   Both are ``jurist judge dataset`` runs, kept in ``--work`` and reused.
2. ``jurist probe fit --verdicts teacher --pilot 300`` fits the 0.5B's head on the teacher's probabilities
   (soft targets) of the 1,000 fit rows: the layer chosen on 300 rows with the multi-layer transformers
   pass, every row's state then read at that layer through vLLM's pooling runner. Both passes' rows/s.
3. On the 238 held-out rows, against the teacher's grades: Spearman's rho, F1 of keep/drop at each
   scorer's median, the precision of each scorer's kept top 30 %, with intervals (Fisher-z for rho, a
   seeded bootstrap for F1, Wilson for precision), for the distilled head (judged by ``jurist judge dataset``
   in scoring PROBE), the student's prompted judge and the length rule (its direction fitted on the fit
   rows); the learning curve at 100, 300 and 1,000 teacher labels (heads fitted on the first 50, 150, 500
   fit pairs at the chosen layer, applied to the held-out rows' states).
4. Cost per row in one run, the same 238 rows one after the other: the teacher in LOGPROBS, the head in
   PROBE, the student's prompted judge in LOGPROBS (rows/s of each, from their run summaries).
5. Against people, on the 119 held-out pairs: how often each scorer ranks the preferred response higher,
   beside a reward head fitted as Bradley-Terry on people's 500 fit pairs (``probe fit --pairs``), the
   pointwise-prompt head fitted on the same pairs (``pairwise/preference`` in its pointwise mode: each answer
   alone, Yes for the preferred one) and the length rule and first-shown baselines; the reward head's
   antisymmetry on the held-out pairs.
6. A certified cascade toward the teacher: the head first, the teacher where the head is unsure,
   calibrated on 100 held-out rows' teacher verdicts (target 0.9 agreement, delta 0.1), judged over the
   other 138 with ``jurist bench --cascade`` against the teacher alone: the certified target, the share the
   head decides, agreement with the teacher and the time saved.

Every step's output is kept in ``--work``; a rerun reuses what is there (``--fresh-costs`` runs step 4's
three runs again). Results go to ``--out`` with the command that made them.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import yaml

from common import LLMBAR_SETS, RESULTS, ROOT, header, llmbar_source, write

SMALL, LARGE = "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"
JUDGE = "graded/instruction_following"
COLUMN = "instruction_following"
ENGINE = [
    "--inference_config.model.model_max_length",
    "8192",
    "--inference_config.engine_params.gpu_memory_utilization",
    "0.2",
]
FIT_PAIRS, CURVE = 500, (50, 150, 500)
KEEP_TOP = 0.3


def response_rows() -> list[dict[str, Any]]:
    """Every response of every labelled pair set as a row (two per pair, in the sets' order)."""
    folder = llmbar_source().parent
    rows = []
    for name in LLMBAR_SETS:
        for i, record in enumerate(json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))):
            for side, key in (("a", "output_1"), ("b", "output_2")):
                rows.append(
                    {
                        "id": f"{name}:{i}:{side}",
                        "set": name,
                        "pair": f"{name}:{i}",
                        "side": side,
                        "request": record["input"],
                        "response": record[key],
                        "preferred": (int(record["label"]) == 1) == (side == "a"),
                    }
                )
    return rows


def split(
    rows: list[dict[str, Any]],
) -> tuple[list[str], list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """The pairs shuffled with seed 0: the first FIT_PAIRS to fit on, the rest held out; the fit rows in
    the shuffled pairs' order (a then b, so the first k pairs are the learning curve's), the held-out rows
    in the sets' order."""
    pairs = sorted({r["pair"] for r in rows})
    random.Random(0).shuffle(pairs)
    fit_pairs, held_pairs = pairs[:FIT_PAIRS], pairs[FIT_PAIRS:]
    order = {p: i for i, p in enumerate(fit_pairs)}
    fit_rows = sorted((r for r in rows if r["pair"] in order), key=lambda r: (order[r["pair"]], r["side"]))
    held = [r for r in rows if r["pair"] in set(held_pairs)]
    return fit_pairs, held_pairs, fit_rows, held


def jurist(*args: str) -> float:
    """Run a jurist command; its wall time in seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jurist", *args], check=True)
    return time.perf_counter() - started


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def judged(work: Path, name: str, rows: Path, model: str, *extra: str, fresh: bool = False) -> dict[str, Any]:
    """A ``jurist judge dataset`` run of the judge (reused when its results exist, unless ``fresh``): its
    scores by row id and its summary (rows/s)."""
    out, summary = work / f"{name}.parquet", work / f"{name}.summary.json"
    if fresh or not out.exists():
        jurist(
            "judge",
            "dataset",
            "-c",
            JUDGE,
            "-i",
            str(rows),
            "-o",
            str(out),
            "--model",
            model,
            "--id-column",
            "id",
            "--overwrite",
            "-q",
            "--summary-json",
            str(summary),
            *ENGINE,
            *extra,
        )
    table = pq.read_table(out).to_pylist()
    return {
        "scores": {r["row_id"]: r[f"{COLUMN}.score"] for r in table},
        "verdicts": {r["row_id"]: r[f"{COLUMN}.judgment"] for r in table},
        "summary": json.loads(summary.read_text()) if summary.exists() else None,
    }


def probe_fit(head: Path, report: Path, *args: str) -> None:
    """``jurist probe fit --json`` (unless its head exists), its report kept beside the head."""
    if not head.exists():
        command = [sys.executable, "-m", "jurist", "probe", "fit", "-o", str(head), "--json", *args, *ENGINE]
        report.write_text(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def fit_head(work: Path, name: str, rows: Path, *labels: str) -> dict[str, Any]:
    """The student's head on ``rows`` (reused when it exists): the head and the fit's report."""
    head, report = work / f"{name}.json", work / f"{name}.report.json"
    probe_fit(head, report, "-c", JUDGE, "-i", str(rows), "--model", SMALL, "--id-column", "id", *labels)
    return {"path": head, "report": json.loads(report.read_text())}


# ------------------------------------------------------------------------------------------ statistics


def wilson(right: int, n: int) -> list[float] | None:
    from jurist.stats.share import wilson_interval

    found = wilson_interval(right, n)
    return None if found is None else [round(found[0], 4), round(found[1], 4)]


def f1_at_median(scores: np.ndarray, reference: np.ndarray) -> float:
    keep, wanted = scores >= np.median(scores), reference >= np.median(reference)
    tp = float(np.sum(keep & wanted))
    return 2 * tp / (float(keep.sum()) + float(wanted.sum())) if keep.any() or wanted.any() else 0.0


def agreement(scores: np.ndarray, reference: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """A scorer against the reference scores on the same rows: Spearman with its interval, F1 of keep/drop
    at each one's median with a bootstrap interval, the precision of its top 30 % with Wilson's."""
    from jurist.stats.ranking import spearman

    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(2000):
        pick = rng.integers(0, len(scores), len(scores))
        boots.append(f1_at_median(scores[pick], reference[pick]))
    top = max(1, round(KEEP_TOP * len(scores)))
    mine, theirs = set(np.argsort(-scores)[:top]), set(np.argsort(-reference)[:top])
    right = len(mine & theirs)
    return {
        **{k: None if v is None else round(v, 4) for k, v in spearman(scores, reference).as_dict().items()},
        "f1_keep_at_median": round(f1_at_median(scores, reference), 4),
        "f1_ci95": [round(float(np.quantile(boots, q)), 4) for q in (0.025, 0.975)],
        "top30_precision": round(right / top, 4),
        "top30_ci95": wilson(right, top),
        "top30_rows": top,
    }


def pair_accuracy(score: dict[str, float], pairs: list[str], preferred: dict[str, str]) -> dict[str, Any]:
    """How often the scorer ranks people's preferred response of each pair higher (a tie counts wrong)."""
    right = sum(
        (score[f"{p}:a"] > score[f"{p}:b"] and preferred[p] == "a")
        or (score[f"{p}:b"] > score[f"{p}:a"] and preferred[p] == "b")
        for p in pairs
    )
    return {
        "accuracy": round(right / len(pairs), 4),
        "ci95": wilson(right, len(pairs)),
        "right": right,
        "pairs": len(pairs),
    }


# ------------------------------------------------------------------------------------------ the recipe


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-distil"))
    parser.add_argument("--out", type=Path, default=RESULTS / "distil_recipe.json")
    parser.add_argument("--fresh-costs", action="store_true", help="Run step 4's timed runs again.")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        **header("distil_recipe"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
        "teacher": f"{LARGE} / {JUDGE} / LOGPROBS",
        "student": f"{SMALL} / {JUDGE} / PROBE",
    }
    rows = response_rows()
    fit_pairs, held_pairs, fit_rows, held = split(rows)
    preferred = {r["pair"]: r["side"] for r in rows if r["preferred"]}
    all_path, fit_path = write_jsonl(work / "rows.jsonl", rows), write_jsonl(work / "fit.jsonl", fit_rows)
    held_path = write_jsonl(work / "held.jsonl", held)
    results["split"] = {
        "fit_pairs": len(fit_pairs),
        "fit_rows": len(fit_rows),
        "held_pairs": len(held_pairs),
        "held_rows": len(held),
        "seed": 0,
    }

    # 1. grades of every row: the teacher, and the student's own prompted judge
    teacher = judged(work, "teacher", all_path, LARGE, "--judge_params.scoring", "LOGPROBS")
    prompted = judged(work, "student_prompted", all_path, SMALL, "--judge_params.scoring", "LOGPROBS")

    # 2. the distilled head, and a reward head on people's pairs
    distilled = fit_head(
        work, "head_distilled", fit_path, "--verdicts", str(work / "teacher.parquet"), "--pilot", "300"
    )
    reward = fit_head(
        work, "head_reward", fit_path, "--label-column", "preferred", "--pairs", "pair", "--pilot", "100"
    )
    for name, found in (("distilled_head", distilled), ("reward_head", reward)):
        report = found["report"]
        results[name] = {
            key: report.get(key)
            for key in (
                "rows",
                "layer",
                "c",
                "objective",
                "accuracy",
                "baselines",
                "target_probability",
                "feature_passes",
                "pilot",
                "learning_curve",
            )
        }

    # 3-4. the held-out rows, judged one run after another (cost per row), against the teacher's grades
    held_teacher = judged(
        work, "held_teacher", held_path, LARGE, "--judge_params.scoring", "LOGPROBS", fresh=args.fresh_costs
    )
    held_head = judged(
        work,
        "held_head",
        held_path,
        SMALL,
        "--judge_params.scoring",
        "PROBE",
        "--judge_params.probe",
        str(distilled["path"]),
        fresh=args.fresh_costs,
    )
    held_prompted = judged(
        work, "held_prompted", held_path, SMALL, "--judge_params.scoring", "LOGPROBS", fresh=args.fresh_costs
    )
    held_reward = judged(
        work,
        "held_reward",
        held_path,
        SMALL,
        "--judge_params.scoring",
        "PROBE",
        "--judge_params.probe",
        str(reward["path"]),
    )
    ids = [r["id"] for r in held]
    reference = np.asarray([teacher["scores"][i] for i in ids])
    length = {r["id"]: float(len(r["response"])) for r in rows}
    fit_ids = [r["id"] for r in fit_rows]
    from jurist.stats.ranking import spearman

    trend = spearman([length[i] for i in fit_ids], [teacher["scores"][i] for i in fit_ids]).estimate
    direction = 1.0 if (trend or 0.0) >= 0 else -1.0  # the longer (or shorter) answer graded higher
    scorers = {
        "distilled_head": held_head["scores"],
        "student_prompted": held_prompted["scores"],
        "length_rule": {i: direction * length[i] for i in ids},
    }
    results["against_teacher"] = {
        name: agreement(np.asarray([s[i] for i in ids]), reference) for name, s in scorers.items()
    }
    results["against_teacher"]["length_rule"]["direction"] = "longer" if direction > 0 else "shorter"
    results["teacher_repeat"] = {  # the held-out teacher run against the first: the same grades
        "max_abs_difference": float(max(abs(held_teacher["scores"][i] - teacher["scores"][i]) for i in ids))
    }
    results["learning_curve"] = learning_curve(work, distilled, fit_rows, held, teacher["scores"], reference)
    rates = {
        name: (found["summary"] or {}).get("rows_per_second")
        for name, found in (
            ("teacher", held_teacher),
            ("head", held_head),
            ("student_prompted", held_prompted),
        )
    }
    results["cost"] = {
        "rows": len(held),
        "rows_per_s": rates,
        "head_cost_over_teacher": round(rates["teacher"] / rates["head"], 4) if rates["head"] else None,
        "note": "one run after another on the same rows; engine start-up not counted (run summaries)",
    }

    # 5. against people, on the held-out pairs
    pointwise = pointwise_prompt_head(work, fit_pairs, held_pairs, rows)
    results["pointwise_prompt_head"] = pointwise["report"]
    everyone = {
        "teacher": teacher["scores"],
        "distilled_head": held_head["scores"],
        "reward_head_people": held_reward["scores"],
        "student_prompted": prompted["scores"],
        "longer_answer": length,
    }
    people: dict[str, Any] = {name: pair_accuracy(s, held_pairs, preferred) for name, s in everyone.items()}
    people["pointwise_prompt_head_people"] = pointwise["accuracy"]
    fit_pref = [preferred[p] for p in fit_pairs]
    people["first_shown_(a)"] = pair_accuracy(
        {f"{p}:{s}": float(s == "a") for p in held_pairs for s in "ab"}, held_pairs, preferred
    )
    people["majority_side_of_fit_pairs"] = max(fit_pref.count("a"), fit_pref.count("b")) / len(fit_pref)
    reward_r = {i: float(np.log(s) - np.log1p(-s)) for i, s in held_reward["scores"].items()}
    gaps = [
        abs(
            1 / (1 + np.exp(reward_r[f"{p}:b"] - reward_r[f"{p}:a"]))
            + 1 / (1 + np.exp(reward_r[f"{p}:a"] - reward_r[f"{p}:b"]))
            - 1
        )
        for p in held_pairs
    ]
    people["reward_head_antisymmetry_gap"] = float(max(gaps))
    results["against_people"] = people

    # 6. the cascade toward the teacher
    done = work / "cascade.json"
    if not done.exists():
        done.write_text(json.dumps(cascade(work, distilled["path"], held, teacher), indent=1))
    results["cascade"] = json.loads(done.read_text())
    write(results, args.out)
    print(json.dumps({k: results[k] for k in ("against_teacher", "cost", "against_people")}, indent=1))


def pointwise_prompt_head(
    work: Path, fit_pairs: list[str], held_pairs: list[str], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The head ``probe_heads.py`` fits on people's pairs, for comparison with the reward head: the pairwise
    judge in its pointwise mode (each answer alone, the preferred one fitted on Yes), on the fit pairs as
    LLMBar rows, judged on the held-out pairs in scoring PROBE (its p_a; a pair's winner)."""
    by_pair: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = by_pair.setdefault(r["pair"], {"id": r["pair"], "input": r["request"]})
        entry["output_1" if r["side"] == "a" else "output_2"] = r["response"]
        if r["preferred"]:
            entry["label"] = 1 if r["side"] == "a" else 2
    fit_path = write_jsonl(work / "pairs_fit.jsonl", [by_pair[p] for p in fit_pairs])
    held_path = write_jsonl(work / "pairs_held.jsonl", [by_pair[p] for p in held_pairs])
    mode = ["--pairwise_judge_params.mode", "pointwise", "--pairwise_judge_params.allow_tie", "false"]
    head, report = work / "head_pointwise_prompt.json", work / "head_pointwise_prompt.report.json"
    probe_fit(
        head,
        report,
        "-c",
        "pairwise/preference",
        "-i",
        str(fit_path),
        "--model",
        SMALL,
        "--id-column",
        "id",
        "--label-column",
        "label",
        "--pilot",
        "100",
        *mode,
    )
    out = work / "held_pointwise_prompt.parquet"
    if not out.exists():
        jurist(
            "judge",
            "dataset",
            "-c",
            "pairwise/preference",
            "-i",
            str(held_path),
            "-o",
            str(out),
            "--model",
            SMALL,
            "--id-column",
            "id",
            "--overwrite",
            "-q",
            "--judge_params.scoring",
            "PROBE",
            "--judge_params.probe",
            str(head),
            *mode,
            *ENGINE,
        )
    winners = {r["row_id"]: r["preference.winner"] for r in pq.read_table(out).to_pylist()}
    right = sum(winners[p] == ("a" if by_pair[p]["label"] == 1 else "b") for p in held_pairs)
    fitted = json.loads(report.read_text())
    return {
        "report": {
            k: fitted.get(k) for k in ("rows", "layer", "c", "accuracy", "baselines", "feature_passes")
        },
        "accuracy": {
            "accuracy": round(right / len(held_pairs), 4),
            "ci95": wilson(right, len(held_pairs)),
            "right": right,
            "pairs": len(held_pairs),
        },
    }


def learning_curve(
    work: Path,
    distilled: dict[str, Any],
    fit_rows: list[dict[str, Any]],
    held: list[dict[str, Any]],
    grades: dict[str, float],
    reference: np.ndarray,
) -> list[dict[str, Any]]:
    """Heads at the distilled head's layer and C fitted on the first 50, 150 and 500 fit pairs' teacher
    probabilities, applied to the held-out rows' states (read through the engine, as judging reads them)."""
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.probe.examples import examples
    from jurist.probe.features import engine_states
    from jurist.probe.fit import train

    report = distilled["report"]
    layer, c = int(report["layer"]), float(report["c"])
    overrides = {
        "judge_params.scoring": "LOGPROBS",
        "inference_config.model.model_name": SMALL,
        "inference_config.model.model_max_length": 8192,
        "inference_config.engine_params.gpu_memory_utilization": 0.2,
    }
    judge = Judge(load_judge_config(JUDGE, overrides))
    soft = [{"Yes": grades[r["id"]], "No": 1 - grades[r["id"]]} for r in fit_rows]
    found = examples(judge, fit_rows, soft)
    cache = work / "curve.states"
    states = engine_states(judge, found, layer, cache).states[:, :, 0]
    held_found = examples(judge, held, [{"Yes": 0.5, "No": 0.5}] * len(held))
    held_states = engine_states(judge, held_found, layer, cache).states[:, 0, 0]
    out = []
    for pairs in CURVE:
        n = 2 * pairs
        head = train(
            found.shape, states[:n], found.truth[:n], c, found.soft[:n] if found.soft is not None else None
        )
        scores = head.probabilities(held_states)[:, found.shape.yes]
        out.append({"teacher_labels": n, **agreement(scores, reference)})
    return out


def cascade(work: Path, head: Path, held: list[dict[str, Any]], teacher: dict[str, Any]) -> dict[str, Any]:
    """``jurist bench --cascade`` head -> teacher over the held-out rows: calibrated on the teacher's verdicts
    of the first 100 (a labels file), judged and timed over all, the teacher alone beside it."""
    base = yaml.safe_load((ROOT / "configs" / "judges" / f"{JUDGE}.yaml").read_text())
    stages = []
    for name, model, scoring in (
        ("head", SMALL, {"scoring": "PROBE", "probe": str(head)}),
        ("teacher", LARGE, {"scoring": "LOGPROBS"}),
    ):
        config = json.loads(json.dumps(base))
        config["name"] = name
        config["judge_params"].update(scoring)
        config["inference_config"]["model"] = {"model_name": model, "model_max_length": 8192}
        config["inference_config"]["engine_params"] = {"gpu_memory_utilization": 0.2}
        path = work / f"stage_{name}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        stages.append(path)
    calibration = held[:100]
    labels = write_jsonl(
        work / "calibration_labels.jsonl",
        [{"row_id": r["id"], "label": teacher["verdicts"][r["id"]]} for r in calibration],
    )
    out = work / "cascade_bench"
    jurist(
        "bench",
        "--cascade",
        str(stages[0]),
        "--cascade",
        str(stages[1]),
        "-i",
        str(work / "held.jsonl"),
        "-o",
        str(out),
        "--rows",
        str(len(held)),
        "--cold-rows",
        "2",
        "--target-agreement",
        "0.9",
        "--delta",
        "0.1",
        "--calibration-labels",
        str(labels),
        "--quiet",
    )
    bench = json.loads((out / "bench.json").read_text())
    entry, *alone = bench["results"]
    table = pq.read_table(out / "cascade.parquet").to_pylist()
    calibrated = {c["id"] for c in calibration}
    evaluated = [r for r in table if r["row_id"] not in calibrated]
    verdict = next(k for k in evaluated[0] if k.startswith("cascade") and k.endswith(".judgment"))
    agree = sum(r[verdict] == teacher["verdicts"][r["row_id"]] for r in evaluated)
    figures = entry["cascade"]
    return {
        "calibration_rows": len(calibration),
        "evaluated_rows": len(evaluated),
        "calibration": figures.get("calibration"),
        "stages": figures.get("stages"),
        "agreement_with_teacher_on_evaluated_rows": {
            "right": agree,
            "rows": len(evaluated),
            "share": round(agree / len(evaluated), 4),
            "ci95": wilson(agree, len(evaluated)),
        },
        "vs_teacher_alone": figures.get("vs_last_stage"),
        "cascade_warm": entry.get("warm"),
        "teacher_alone_warm": alone[0].get("warm") if alone else None,
    }


if __name__ == "__main__":
    main()
