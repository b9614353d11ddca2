"""The graded teacher's students past 3,000 labels, on three kinds of response.

    python benchmarks/generated_responses.py --out WORK/generated.jsonl
    python benchmarks/distil_graded.py --work WORK
    python benchmarks/distil_labels.py --work WORK [--out FILE]

The rows: LLMBar's and MT-Bench's 1,238 responses (distil_graded.py's) and the 2,476 that Qwen2.5-Coder-0.5B
and SmolLM2-135M wrote to the same 619 instructions (generated_responses.py, two each): 3,714 responses.
The split is distil_graded.py's, by instruction: the 500 fit instructions' 3,000 responses to fit on, the
other 119 instructions' 714 held out (238 of them distil_graded.py's held-out rows), so no held-out
response shares an instruction with a fit one.

1. The teacher (Qwen2.5-Coder-1.5B, ``corpus/response_quality`` in LOGPROBS) grades the generated rows
   (distil_graded.py's run grades the others); its expected grade is the reference, its grade distribution
   the soft target. The prompted 0.5B (the same judge in LOGPROBS) grades the generated held-out rows.
2. The 0.5B's states at layer 18 for every row, last token and ``--pool last_mean``, through vLLM's pooling
   runner as distil_graded.py's heads read them (the same chunk caches: its rows are not run again).
3. The learning curve at 100, 300, 1,000 and 3,000 labels: the fit rows in one seeded order, each size a
   prefix of it; at each size C is chosen (from ``CS``) by 5-fold cross-validation on those rows alone (the
   targets' log-likelihood, as ``probe fit`` chooses it), the head fitted on them, and measured on the 714
   held-out rows (and on the curated 238 and the generated 476 apart): Spearman with the teacher's
   expected grade, F1 of the keep class at 10, 30 and 50 %, beside the length rule (direction fitted on
   the fit rows) and the prompted 0.5B. (No MLP head here: its cross-validation on 3,000 rows takes too long
   on two cores; distil_graded.py's on 1,000 moved Spearman by +0.01 to +0.02.)
4. Leave one source out over five: LLMBar natural, LLMBar adversarial, MT-Bench, the 0.5B's answers and
   SmolLM2's; each held out in turn (its rows of every instruction), the head (3,000-label C) fitted on the
   other four's rows.
5. The cascade, head first: its label is the most likely grade and its confidence that grade's probability
   (as PROBE judging writes them); the threshold :func:`jurist.stats.selective.choose_threshold` calibrates
   for agreement 0.9 and 0.95 (delta 0.1) with the teacher's most likely grade on the first 238 held-out
   rows in a seeded order, then on the other 476 the share the head decides and the agreement; the cost
   per row from distil_graded.py's timed run (``cost.of_teacher``: the same heads and teacher, one after
   another on its 238 held-out rows).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from common import RESULTS, header, write
from distil_graded import COLUMN, JUDGE, agreement, expected_grade, judged, length_scores, states_of
from distil_recipe import LARGE, SMALL, response_rows, split, wilson, write_jsonl

CURVE = (100, 300, 1000, 3000)
STUDENTS = ("student_0.5b", "student_0.5b_last_mean")
GRADES = tuple(float(g) for g in range(1, 6))
CALIBRATION = 238
CS = (0.001, 0.003, 0.01, 0.03, 0.1)
"""The curve's grid of C: ``probe fit`` chose 0.03 (last token) and 0.003 (``last_mean``) from its grid
0.003 to 3 on 1,000 rows; weaker regularisation than 0.1 costs most of a fit's time on two cores."""


def source_of(row: dict[str, Any]) -> str:
    """A row's source: LLMBar's natural set, its four adversarial sets as one, MT-Bench, or the model that
    wrote the answer."""
    named = {"Natural": "LLMBar natural", "MT-Bench": "MT-Bench"}
    kind = str(row["set"])
    if kind.startswith("Generated "):
        return kind.removeprefix("Generated ") + " answers"
    return named.get(kind, "LLMBar adversarial")


def graded(work: Path, name: str, rows: Path, model: str) -> Path:
    """A ``jurist judge dataset`` run of the graded judge in LOGPROBS (reused when its results exist)."""
    judged(work, name, rows, model, "--judge_params.scoring", "LOGPROBS")
    return work / f"{name}.parquet"


def joined(out: Path, *runs: Path) -> Path:
    """The runs' rows in one results file (their row ids and the judge's columns), the labels' source."""
    tables = []
    for run in runs:
        table = pq.read_table(run)
        tables.append(table.select([c for c in table.column_names if c == "row_id" or c.startswith(COLUMN)]))
    pq.write_table(pa.concat_tables(tables, promote_options="default"), out)
    return out


def column(runs: list[Path], name: str) -> dict[str, Any]:
    return {
        r["row_id"]: r[name] for run in runs for r in pq.read_table(run, columns=["row_id", name]).to_pylist()
    }


def stack(by_id: dict[str, Any], rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows' states, classes and class distributions, from ``by_id`` (each a row's three)."""
    parts = [by_id[r["id"]] for r in rows]
    return np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts]), np.stack([p[2] for p in parts])


def measured(scores: np.ndarray, reference: np.ndarray, generated: np.ndarray) -> dict[str, Any]:
    """``agreement`` on every held-out row, and on the curated and the generated rows apart."""
    return {
        "all": agreement(scores, reference),
        "curated": agreement(scores[~generated], reference[~generated]),
        "generated": agreement(scores[generated], reference[generated]),
    }


def cascade(probs: np.ndarray, teacher: np.ndarray, head_cost: float) -> dict[str, Any]:
    """The head first (label: its most likely grade; confidence: that grade's probability), the teacher
    where it is unsure; calibrated on the first ``CALIBRATION`` rows, measured on the rest (rows already in
    a seeded order). ``head_cost``: the head's cost per row as a share of the teacher's."""
    from jurist.stats.selective import choose_threshold

    label, confidence = probs.argmax(axis=1), probs.max(axis=1)
    agrees = label == teacher
    cal, rest = slice(0, CALIBRATION), slice(CALIBRATION, len(probs))
    out: dict[str, Any] = {
        "calibration_rows": CALIBRATION,
        "evaluated_rows": len(probs) - CALIBRATION,
        "head_agreement_on_calibration": round(float(agrees[cal].mean()), 4),
    }
    for target in (0.9, 0.95):
        threshold = choose_threshold(confidence[cal].tolist(), agrees[cal].tolist(), target, 0.1).threshold
        decided = (
            confidence[rest] >= threshold if threshold is not None else np.zeros(len(agrees[rest]), bool)
        )
        right = int(np.sum(agrees[rest] & decided) + np.sum(~decided))
        out[str(target)] = {
            "certified": threshold is not None,
            "threshold": threshold,
            "head_decides": round(float(decided.mean()), 4),
            "agreement_with_teacher": round(right / len(decided), 4),
            "agreement_ci95": wilson(right, len(decided)),
            "cost_per_row_of_teacher": round(head_cost + (1 - float(decided.mean())), 4),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-graded"))
    parser.add_argument("--out", type=Path, default=RESULTS / "distil_labels.json")
    args = parser.parse_args()
    work: Path = args.work
    earlier = json.loads((RESULTS / "distil_graded.json").read_text())
    results: dict[str, Any] = {
        **header("distil_labels"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
        "teacher": f"{LARGE} / {JUDGE} / LOGPROBS (expected grade)",
    }
    curated = response_rows()
    generated_rows = [json.loads(line) for line in (work / "generated.jsonl").read_text().splitlines()]
    fit_pairs, _, curated_fit, curated_held = split(curated)
    fit_set = set(fit_pairs)
    generated_fit = [r for r in generated_rows if r["pair"] in fit_set]
    generated_held = [r for r in generated_rows if r["pair"] not in fit_set]
    order = np.random.default_rng(0)
    fit_rows, held = curated_fit + generated_fit, curated_held + generated_held
    fit_rows = [fit_rows[i] for i in order.permutation(len(fit_rows))]
    held = [held[i] for i in order.permutation(len(held))]
    results["rows"] = {
        "fit": len(fit_rows),
        "held_out": len(held),
        "by_source": {s: sum(source_of(r) == s for r in curated + generated_rows) for s in
                      sorted({source_of(r) for r in curated + generated_rows})},
        "generated_cut_at_token_limit": sum(r["finish"] == "length" for r in generated_rows),
    }  # fmt: skip

    # 1. the teacher's grades and the prompted student's
    generated_path = write_jsonl(work / "generated_rows.jsonl", generated_rows)
    teacher_runs = [work / "teacher.parquet", graded(work, "teacher_generated", generated_path, LARGE)]
    teacher_file = joined(work / "teacher_all.parquet", *teacher_runs)
    grade = column(teacher_runs, f"{COLUMN}.score")
    teacher_label = column(teacher_runs, f"{COLUMN}.judgment")
    held_generated_path = write_jsonl(work / "generated_held.jsonl", generated_held)
    prompted_runs = [
        work / "held_prompted.parquet",
        graded(work, "prompted_generated", held_generated_path, SMALL),
    ]
    prompted = column(prompted_runs, f"{COLUMN}.score")
    results["teacher_grades"] = {
        source: {
            "rows": len(values),
            "mean": round(float(np.mean(values)), 4),
            "quantiles_5_50_95": [round(float(np.quantile(values, q)), 4) for q in (0.05, 0.5, 0.95)],
        }
        for source in sorted({source_of(r) for r in curated + generated_rows})
        if (values := [grade[r["id"]] for r in curated + generated_rows if source_of(r) == source])
    }

    reference = np.asarray([grade[r["id"]] for r in held])
    is_generated = np.asarray([r["set"].startswith("Generated ") for r in held])
    baselines = {
        "length_rule": length_scores(held, fit_rows, grade),
        "student_prompted": np.asarray([prompted[r["id"]] for r in held]),
    }
    results["baselines"] = {name: measured(s, reference, is_generated) for name, s in baselines.items()}

    # 2-5. each student's states, curve, sources left out and cascade
    from jurist.probe.fit import FitSettings, choose, row_probabilities, train

    settings = FitSettings(cs=CS, inner_folds=5, seed=0)
    every = curated + generated_rows
    for name in STUDENTS:
        head_file, cache = work / f"head_{name}.json", work / f"head_{name}.json.states"
        by_id: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        shape = None
        # distil_graded.py's rows in its order first (their chunks are cached), then the generated ones
        for part in (curated_fit, curated_held, generated_rows):
            found, states = states_of(name, head_file, part, teacher_file, cache)
            shape = found.shape
            assert found.soft is not None
            for i, row in enumerate(part):
                by_id[row["id"]] = (states[i], found.truth[i], found.soft[i])
        assert shape is not None

        fit_states, fit_truth, fit_soft = stack(by_id, fit_rows)
        held_states, _, _ = stack(by_id, held)
        entry: dict[str, Any] = {"curve": []}
        started = time.perf_counter()
        for n in CURVE:
            _, c, _ = choose(
                shape,
                fit_states[:n, :, None],
                fit_truth[:n],
                settings,
                np.random.default_rng(0),
                fit_soft[:n],
            )
            head = train(shape, fit_states[:n], fit_truth[:n], c, fit_soft[:n])
            probs = row_probabilities(shape, head, held_states)
            guess = expected_grade(probs, GRADES)
            entry["curve"].append({"teacher_labels": n, "c": c, **measured(guess, reference, is_generated)})
            print(f"{name} {n}: {entry['curve'][-1]['all']['spearman']}", flush=True)
        entry["curve_seconds"] = round(time.perf_counter() - started, 1)
        cost = earlier["cost"]["of_teacher"][name]
        entry["cost_of_teacher"] = cost
        entry["cascade"] = cascade(probs, np.asarray([teacher_label[r["id"]] - 1 for r in held]), cost)
        # leave one source out, at the 3,000-label C
        all_states, all_truth, all_soft = stack(by_id, every)
        entry["leave_one_source_out"] = {}
        for source in sorted({source_of(r) for r in every}):
            inside = np.asarray([source_of(r) != source for r in every])
            part_head = train(shape, all_states[inside], all_truth[inside], c, all_soft[inside])
            guess = expected_grade(row_probabilities(shape, part_head, all_states[~inside]), GRADES)
            truth_grades = np.asarray([grade[r["id"]] for r in every])[~inside]
            inside_rows = [r for r, keep in zip(every, inside, strict=True) if keep]
            outside_rows = [r for r, keep in zip(every, inside, strict=True) if not keep]
            entry["leave_one_source_out"][source] = {
                "rows": int((~inside).sum()),
                "head": agreement(guess, truth_grades),
                "length_rule": agreement(length_scores(outside_rows, inside_rows, grade), truth_grades),
            }
        results[name] = entry
        write(results, args.out)
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write(results, args.out)
    summary = {
        name: {
            "curve": [(p["teacher_labels"], p["all"]["spearman"], p["all"]["keep"]["30%"]["f1"])
                      for p in results[name]["curve"]],
            "cascade_0.9": results[name]["cascade"]["0.9"],
        }
        for name in STUDENTS
    }  # fmt: skip
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
