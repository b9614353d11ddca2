"""A graded teacher and its cheap students, measured on held-out rows and on a source they never saw.

    python benchmarks/distil_graded.py [--work /tmp/jurist-graded] [--out FILE] [--fresh-costs]

The rows and split are distil_recipe.py's: every response of ../shared/data/llmbar (LLMBar's 419 pairs and
MT-Bench's 200) as its own request-response row, 1,238 rows; 500 pairs (1,000 rows) to fit on, the other 119
pairs (238 rows) held out (seed 0).

1. The teacher: Qwen2.5-Coder-1.5B with the built-in graded judge ``corpus/response_quality`` (1 to 5) in
   LOGPROBS grades every row; its expected grade is the score, its grade distribution the soft target.
2. Two students, each fitted by ``jurist probe fit --verdicts teacher`` on the 1,000 fit rows:
   - the early exit: a head on the teacher's own state (``--model`` the 1.5B) at a layer chosen among those
     that judge in PROBE for at most 0.4 of the teacher's time per row, timed here (``--max-cost 0.4``);
   - the 0.5B: a head on Qwen2.5-Coder-0.5B's state (its own layers, within its own LOGPROBS time).
   Both choose the layer on a 300-row pilot and read every state through vLLM's pooling runner.
   - the 0.5B on pooled features at that layer (18): the mean of the states of the response's tokens
     (``--pool mean``), and that mean after the last token's state (``--pool last_mean``), every token's
     state from the pooling runner.
3. On the 238 held-out rows, against the teacher's expected grade: Spearman's rho (Fisher-z interval), and at
   keep rates of 10, 30 and 50 % of rows the F1 of the keep class and the precision of the kept rows
   (bootstrap and Wilson intervals; with both sides keeping the same number of rows the two are equal), for
   each student, the 0.5B's prompted judge (the same config in LOGPROBS) and the length rule (its direction
   fitted on the fit rows). Each head is applied to the held-out rows' states as PROBE judging applies it
   (checked against the PROBE run's scores).
   Beside each linear head, an MLP head on the same state (``--mlp``'s network: one ReLU layer of 64 units
   on the state's 64 principal components), its L2 strength chosen by cross-validation on the fit rows.
4. The learning curve at 100, 300 and 1,000 teacher labels (heads at each student's chosen layer and C on
   the first 50, 150 and 500 fit pairs); and leave one source out: LLMBar's natural set, its four
   adversarial sets and MT-Bench, each held out in turn with the heads fitted on the other two (all 1,238
   rows' states), beside the length rule fitted the same way.
5. Cost per row in one run, the held-out rows one judge after another: the teacher in LOGPROBS, each head
   in PROBE, the prompted 0.5B in LOGPROBS (rows/s from their run summaries, engine start not counted).
6. A cascade toward the teacher, each head first: the threshold a cascade calibrates for agreement 0.9 and
   0.95 (delta 0.1) on the first 100 held-out rows (the teacher's grades as labels; the same rule
   ``jurist bench --cascade`` applies), then on the other 138 the share the head decides, the agreement
   with the teacher and the cost per row from step 5's rows/s.

Every step's output is kept in ``--work`` and reused; ``--fresh-costs`` reruns step 5's timed runs.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from common import RESULTS, header, write
from distil_recipe import LARGE, SMALL, response_rows, split, wilson, write_jsonl

JUDGE = "corpus/response_quality"
COLUMN = "response_quality"
ENGINE = [
    "--inference_config.model.model_max_length",
    "8192",
    "--inference_config.engine_params.gpu_memory_utilization",
    "0.2",
]
CURVE = (50, 150, 500)
KEEP_RATES = (0.1, 0.3, 0.5)
PILOT = ["--pilot", "300"]
STUDENTS: dict[str, dict[str, Any]] = {
    "early_exit": {"model": LARGE, "fit": ["--max-cost", "0.4", "--layers", "4,7,10,14", *PILOT]},
    "student_0.5b": {"model": SMALL, "fit": ["--max-cost", "1.0", "--layers", "12,18", *PILOT]},
    # pooled features at the layer the 0.5B's pilot chose: the mean over the response's tokens, alone and
    # after the last token's state
    "student_0.5b_mean": {"model": SMALL, "fit": ["--layers", "18", "--pool", "mean"]},
    "student_0.5b_last_mean": {"model": SMALL, "fit": ["--layers", "18", "--pool", "last_mean"]},
}
SOURCES = {"Natural": "LLMBar natural", "MT-Bench": "MT-Bench"}  # every other set: LLMBar adversarial


def jurist(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "jurist", *args], check=True)


def judged(
    work: Path,
    name: str,
    rows: Path,
    model: str,
    *extra: str,
    fresh: bool = False,
    judge: str = JUDGE,
    column: str = COLUMN,
) -> dict[str, Any]:
    """A ``jurist judge dataset`` run of the graded judge (``judge``, its results under ``column``; reused
    unless ``fresh``): expected grades by row id, the statuses and the run summary."""
    out, summary = work / f"{name}.parquet", work / f"{name}.summary.json"
    if fresh or not out.exists():
        jurist(
            "judge", "dataset", "-c", judge, "-i", str(rows), "-o", str(out), "--model", model,
            "--id-column", "id", "--overwrite", "-q", "--summary-json", str(summary), *ENGINE, *extra,
        )  # fmt: skip
    table = pq.read_table(out).to_pylist()
    return {
        "scores": {r["row_id"]: r[f"{column}.score"] for r in table},
        "statuses": sorted({r[f"{column}.status"] for r in table}),
        "summary": json.loads(summary.read_text()) if summary.exists() else None,
    }


def fit_student(work: Path, name: str, fit_path: Path, teacher: Path) -> dict[str, Any]:
    """``jurist probe fit`` of one student (reused when its head exists): the head path and the report."""
    head, report = work / f"head_{name}.json", work / f"head_{name}.report.json"
    if not head.exists():
        command = [
            sys.executable, "-m", "jurist", "probe", "fit", "-c", JUDGE, "-i", str(fit_path),
            "-o", str(head), "--model", STUDENTS[name]["model"], "--id-column", "id",
            "--verdicts", str(teacher), "--json", *STUDENTS[name]["fit"], *ENGINE,
        ]  # fmt: skip
        report.write_text(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return {"path": head, "report": json.loads(report.read_text())}


# ------------------------------------------------------------------------------------------ states


def graded_states(
    judge_name: str,
    model: str,
    rows: list[dict[str, Any]],
    teacher: Path,
    layer: int,
    cache: Path,
    pooling: str = "last",
    field: str | None = None,
) -> tuple[Any, Any]:
    """The rows' examples (the teacher's grade distributions in ``teacher`` as targets) and their states
    after ``layer`` of ``model``, pooled as asked (over ``field``'s tokens), read through the engine of the
    judge ``judge_name`` in LOGPROBS as a fit reads them (chunk caches in ``cache``: a row read before is
    not run again)."""
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.labels.source import LabelSource
    from jurist.probe.examples import examples
    from jurist.probe.features import Feature, engine_states

    settings = {
        "judge_params.scoring": "LOGPROBS",
        "inference_config.model.model_name": model,
        "inference_config.model.model_max_length": 8192,
        "inference_config.engine_params.gpu_memory_utilization": 0.2,
    }
    judge = Judge(load_judge_config(judge_name, settings))
    labels = LabelSource(verdicts=teacher, soft=True).for_rows(rows, "id")
    found = examples(judge, rows, labels)
    if len(found.truth) != len(rows):
        raise SystemExit(f"{len(rows) - len(found.truth)} rows have no teacher grade: {found.skipped}")
    feature = Feature.of(pooling, field, judge, rows)  # type: ignore[arg-type]
    return found, engine_states(judge, found, layer, cache, feature=feature)


def states_of(name: str, head: Path, rows: list[dict[str, Any]], teacher: Path, cache: Path) -> Any:
    """The rows' examples and their states at the head's layer, pooled as the head pools them
    (:func:`graded_states` of the student ``name``)."""
    from jurist.models.probe_head import load_head

    fitted = load_head(head)
    model = STUDENTS[name]["model"]
    found, got = graded_states(
        JUDGE, model, rows, teacher, fitted.layer, cache, fitted.pooling, fitted.pooled_field
    )
    return found, got.states[:, :, 0]


def mlp_head(shape: Any, states: np.ndarray, truth: np.ndarray, soft: Any) -> dict[str, Any]:
    """An MLP head at the student's layer (64 units on the state's 64 principal components), its L2
    strength chosen by 5-fold cross-validation on the fit rows alone (the targets' log-likelihood); fitted
    on every fit row."""
    from jurist.probe.fit import FitSettings, choose, train_mlp

    settings = FitSettings(inner_folds=5, mlp_units=64, seed=0)
    mlp = settings.family("mlp")
    _, alpha, grid = choose(shape, states[:, :, None], truth, settings, np.random.default_rng(0), soft, mlp)
    return {
        "head": train_mlp(shape, states, truth, alpha, 64, soft, seed=0),
        "alpha": alpha,
        "cv_log_likelihood": {str(a): v for (_, a), v in grid.items()},
    }


def expected_grade(probs: np.ndarray, scores: tuple[float, ...]) -> np.ndarray:
    return np.asarray(probs @ np.asarray(scores))


# ------------------------------------------------------------------------------------------ statistics


def keep_figures(scores: np.ndarray, reference: np.ndarray, rate: float, seed: int = 0) -> dict[str, Any]:
    """Keep the top ``rate`` of rows by the scorer and by the reference: F1 of the keep class with a
    bootstrap interval, and the precision of the kept rows with Wilson's (the same number when both keep
    as many rows)."""
    n = len(scores)
    top = max(1, round(rate * n))

    def f1(s: np.ndarray, r: np.ndarray) -> float:
        k = max(1, round(rate * len(s)))
        mine, theirs = np.zeros(len(s), bool), np.zeros(len(s), bool)
        mine[np.argsort(-s, kind="stable")[:k]] = True
        theirs[np.argsort(-r, kind="stable")[:k]] = True
        return 2 * float(np.sum(mine & theirs)) / float(mine.sum() + theirs.sum())

    rng = np.random.default_rng(seed)
    boots = [f1(scores[p], reference[p]) for p in (rng.integers(0, n, n) for _ in range(2000))]
    right = len(
        set(np.argsort(-scores, kind="stable")[:top]) & set(np.argsort(-reference, kind="stable")[:top])
    )
    return {
        "f1": round(f1(scores, reference), 4),
        "f1_ci95": [round(float(np.quantile(boots, q)), 4) for q in (0.025, 0.975)],
        "precision": round(right / top, 4),
        "precision_ci95": wilson(right, top),
        "kept": top,
    }


def agreement(scores: np.ndarray, reference: np.ndarray) -> dict[str, Any]:
    """A scorer against the teacher on the same rows: Spearman with its interval, keep figures per rate."""
    from jurist.stats.ranking import spearman

    rho = spearman(scores, reference).as_dict()
    return {
        "spearman": round(rho["spearman"], 4),
        "spearman_ci95": [round(rho["low"], 4), round(rho["high"], 4)],
        "rows": len(scores),
        "keep": {f"{round(100 * r)}%": keep_figures(scores, reference, r) for r in KEEP_RATES},
    }


def length_scores(
    rows: list[dict[str, Any]], fit: list[dict[str, Any]], grade: dict[str, float]
) -> np.ndarray:
    """The length rule on ``rows``: the response's length, signed by whether longer responses were graded
    higher on the ``fit`` rows."""
    from jurist.stats.ranking import spearman

    trend = spearman([len(r["response"]) for r in fit], [grade[r["id"]] for r in fit]).estimate or 0.0
    return np.asarray([(1.0 if trend >= 0 else -1.0) * len(r["response"]) for r in rows])


def source_of(row: dict[str, Any]) -> str:
    return SOURCES.get(row["set"], "LLMBar adversarial")


def cascade(
    head_run: Path, teacher_run: Path, held: list[dict[str, Any]], rates: dict[str, Any], name: str
) -> dict[str, Any]:
    """The head first, the teacher where the head is unsure, at agreement targets 0.9 and 0.95 (delta 0.1):
    the confidence threshold a cascade calibrates (:func:`jurist.stats.selective.choose_threshold` on the
    head's label confidence against the teacher's grade, the first 100 held-out rows), then on the other
    rows the share the head decides, the cascade's agreement with the teacher's grade and its cost per row
    from the measured rows/s (the head on every row, the teacher on the rest)."""
    from jurist.stats.selective import choose_threshold

    head = {r["row_id"]: r for r in pq.read_table(head_run).to_pylist()}
    teacher = {r["row_id"]: r[f"{COLUMN}.judgment"] for r in pq.read_table(teacher_run).to_pylist()}
    ids = [r["id"] for r in held]
    calibration, evaluated = ids[:100], ids[100:]

    def confidence(i: str) -> float:
        return float(head[i][f"{COLUMN}.judgment_confidence"])

    def agrees(i: str) -> bool:
        return bool(head[i][f"{COLUMN}.judgment"] == teacher[i])

    out: dict[str, Any] = {"calibration_rows": len(calibration), "evaluated_rows": len(evaluated)}
    head_cost, teacher_cost = 1 / rates[name], 1 / rates["teacher"]
    for target in (0.9, 0.95):
        chosen = choose_threshold(
            [confidence(i) for i in calibration], [agrees(i) for i in calibration], target, 0.1
        )
        threshold = chosen.threshold
        decided = [i for i in evaluated if threshold is not None and confidence(i) >= threshold]
        right = sum(agrees(i) for i in decided) + (len(evaluated) - len(decided))
        cost = head_cost + (1 - len(decided) / len(evaluated)) * teacher_cost
        out[str(target)] = {
            "certified": threshold is not None,
            "threshold": threshold,
            "head_decides": round(len(decided) / len(evaluated), 4),
            "agreement_with_teacher": round(right / len(evaluated), 4),
            "agreement_ci95": wilson(right, len(evaluated)),
            "cost_per_row_of_teacher": round(cost / teacher_cost, 4),
        }
    out["head_agreement_on_calibration"] = round(sum(agrees(i) for i in calibration) / len(calibration), 4)
    return out  # fmt: skip


# ------------------------------------------------------------------------------------------ the study


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-graded"))
    parser.add_argument("--out", type=Path, default=RESULTS / "distil_graded.json")
    parser.add_argument("--fresh-costs", action="store_true", help="Run step 5's timed runs again.")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        **header("distil_graded"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
        "teacher": f"{LARGE} / {JUDGE} / LOGPROBS (expected grade)",
        "students": {
            name: f"{s['model']} / {JUDGE} / PROBE ({' '.join(s['fit'])})" for name, s in STUDENTS.items()
        },
    }
    rows = response_rows()
    _, _, fit_rows, held = split(rows)
    all_path = write_jsonl(work / "rows.jsonl", rows)
    fit_path, held_path = write_jsonl(work / "fit.jsonl", fit_rows), write_jsonl(work / "held.jsonl", held)
    results["split"] = {"fit_rows": len(fit_rows), "held_rows": len(held), "seed": 0}

    # 1. the teacher's grades of every row
    teacher = judged(work, "teacher", all_path, LARGE, "--judge_params.scoring", "LOGPROBS")
    grade = teacher["scores"]
    values = np.asarray(list(grade.values()))
    results["teacher_grades"] = {
        "statuses": teacher["statuses"],
        "mean": round(float(values.mean()), 4),
        "quantiles_5_50_95": [round(float(np.quantile(values, q)), 4) for q in (0.05, 0.5, 0.95)],
    }
    teacher_file = work / "teacher.parquet"

    # 2. the students' heads
    fitted = {name: fit_student(work, name, fit_path, teacher_file) for name in STUDENTS}
    results["fits"] = {
        name: {
            key: found["report"].get(key)
            for key in ("layer", "c", "rows", "target_probability", "cost", "feature_passes", "pilot")
        }
        for name, found in fitted.items()
    }

    # 3-4. held-out rows, learning curve, leave one source out, from the states the engine gives
    from jurist.models.probe_head import load_head
    from jurist.probe.fit import row_probabilities, train

    reference = np.asarray([grade[r["id"]] for r in held])
    scorers: dict[str, np.ndarray] = {}
    curves: dict[str, list[dict[str, Any]]] = {}
    loso: dict[str, dict[str, Any]] = {}
    mlp_choice: dict[str, Any] = {}
    every = fit_rows + held
    for name, found in fitted.items():
        head = load_head(found["path"])
        cache = work / f"head_{name}.json.states"
        # the fit rows and the held-out rows apart: the fit's chunks of states are read back as they are
        fit_found, fit_states = states_of(name, found["path"], fit_rows, teacher_file, cache)
        held_found, held_states = states_of(name, found["path"], held, teacher_file, cache)
        shape = fit_found.shape
        states = np.concatenate([fit_states, held_states])
        truth = np.concatenate([fit_found.truth, held_found.truth])
        assert fit_found.soft is not None and held_found.soft is not None
        soft = np.concatenate([fit_found.soft, held_found.soft])
        scores = tuple(float(s) for s in range(1, 6))
        scorers[name] = expected_grade(row_probabilities(shape, head.arrays, held_states), scores)
        c = float(head.fit["c"])
        mlp = mlp_head(shape, fit_states, fit_found.truth, fit_found.soft)
        scorers[f"{name}_mlp"] = expected_grade(row_probabilities(shape, mlp["head"], held_states), scores)
        mlp_choice[name] = {k: v for k, v in mlp.items() if k != "head"}
        curves[name] = []
        for pairs_used in CURVE:
            n = 2 * pairs_used
            part = train(shape, states[:n], truth[:n], c, soft[:n])
            guess = expected_grade(row_probabilities(shape, part, held_states), scores)
            curves[name].append({"teacher_labels": n, **agreement(guess, reference)})
        for source in sorted({source_of(r) for r in every}):
            inside = np.asarray([source_of(r) != source for r in every])
            part = train(shape, states[inside], truth[inside], c, soft[inside])
            guess = expected_grade(row_probabilities(shape, part, states[~inside]), scores)
            graded = np.asarray([grade[r["id"]] for r in every])[~inside]
            entry = loso.setdefault(source, {"rows": int((~inside).sum())})
            entry[name] = agreement(guess, graded)
            if "length_rule" not in entry:
                train_rows = [r for r, keep in zip(every, inside, strict=True) if keep]
                test_rows = [r for r, keep in zip(every, inside, strict=True) if not keep]
                entry["length_rule"] = agreement(length_scores(test_rows, train_rows, grade), graded)

    # 5. cost per row in one run, and the PROBE runs' scores against the heads applied above
    runs = {
        "teacher": judged(work, "held_teacher", held_path, LARGE, "--judge_params.scoring", "LOGPROBS",
                          fresh=args.fresh_costs),
        **{
            name: judged(work, f"held_{name}", held_path, STUDENTS[name]["model"], "--judge_params.scoring",
                         "PROBE", "--judge_params.probe", str(found["path"]), fresh=args.fresh_costs)
            for name, found in fitted.items()
        },
        "student_prompted": judged(work, "held_prompted", held_path, SMALL, "--judge_params.scoring",
                                   "LOGPROBS", fresh=args.fresh_costs),
    }  # fmt: skip
    ids = [r["id"] for r in held]
    for name in STUDENTS:
        run = np.asarray([runs[name]["scores"][i] for i in ids])
        results["fits"][name]["probe_run_vs_applied_max_abs"] = float(np.max(np.abs(run - scorers[name])))
    scorers["student_prompted"] = np.asarray([runs["student_prompted"]["scores"][i] for i in ids])
    scorers["length_rule"] = length_scores(held, fit_rows, grade)
    results["held_out"] = {name: agreement(s, reference) for name, s in scorers.items()}
    results["mlp_heads"] = mlp_choice
    results["learning_curve"] = curves
    results["leave_one_source_out"] = loso
    rates = {name: (run["summary"] or {}).get("rows_per_second") for name, run in runs.items()}
    results["cost"] = {
        "rows": len(held),
        "rows_per_s": rates,
        "of_teacher": {
            name: round(rates["teacher"] / rate, 4)
            for name, rate in rates.items()
            if rate and rates["teacher"]
        },
        "note": "one run after another on the same rows; engine start-up not counted (run summaries)",
    }
    results["cascade"] = {
        name: cascade(work / f"held_{name}.parquet", work / "held_teacher.parquet", held, rates, name)
        for name in STUDENTS
    }
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write(results, args.out)
    print(json.dumps({k: results[k] for k in ("held_out", "cost", "leave_one_source_out")}, indent=1))


if __name__ == "__main__":
    main()
