"""``jurist compare`` as a real subprocess on tables written by scripted judges: the planned flips, the
accuracy difference against a direct count, ``--json``, and every bad input refused with exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compare_data import PLAN, plan_rows, run_side, write_labels, write_rows

IDS = [f"r{i}" for i in range(len(PLAN))]
# B right on 10 of its 12 yes -> no flips and on its 3 no -> yes; the same verdicts right on 20 of 23
TRUTH = (
    ["no"] * 10
    + ["yes"] * 2
    + ["yes"] * 3
    + ["yes", "yes"]
    + ["yes"] * 12
    + ["no"] * 2
    + ["no"] * 8
    + ["yes"]
)


def jurist(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *map(str, args)], capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare_cli")
    source = write_rows(folder / "rows.jsonl", plan_rows(PLAN))
    return {
        "a": run_side(folder, source, "A"),
        "b": run_side(folder, source, "B"),
        "fewer": run_side(
            folder, write_rows(folder / "f.jsonl", plan_rows(PLAN[:25])), "B", output="f.parquet"
        ),
        "two": run_side(folder, source, "B", names=("x", "y"), output="two.parquet"),
        "labels": write_labels(folder / "labels.jsonl", TRUTH, IDS),
        "by_position": write_labels(folder / "position.jsonl", TRUTH),
        "pa": run_side(
            folder, write_rows(folder / "p.jsonl", plan_rows(PLAN, ids=False)), "A", output="pa.parquet"
        ),
        "pb": run_side(folder, folder / "p.jsonl", "B", output="pb.parquet"),
        "unknown": write_labels(folder / "unknown.jsonl", [*TRUTH, "yes"], [*IDS, "zz9"]),
        "outside": write_labels(folder / "outside.jsonl", ["maybe", *TRUTH[1:]], IDS),
        "too_many": write_labels(folder / "many.jsonl", [*TRUTH, "no"]),
    }


def test_compare_prints_the_planned_flips_and_names_the_better_judge(files: dict[str, Path]) -> None:
    done = jurist("compare", files["a"], files["b"], "--labels", files["labels"], "--labels-id-column", "id")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "40 rows matched on row_id, 38 compared; not compared: A parse_error 1, B parse_error 1" in out
    assert "  yes -> no: 12 rows [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, ... 2 more]\n" in out
    assert "  no -> yes: 3 rows [r12, r13, r14]\n" in out
    assert out.rstrip().splitlines()[-1].startswith("B is better: accuracy +")
    assert "warning: only 15 labelled rows where the verdicts differ" in done.stderr


def test_compare_json_holds_the_flips_and_the_accuracy_difference(files: dict[str, Path]) -> None:
    done = jurist("compare", files["pa"], files["pb"], "--labels", files["by_position"], "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    positions = [str(i) for i in range(len(PLAN))]
    assert [(f["from"], f["to"], f["row_ids"]) for f in report["flips"]] == [
        (True, False, positions[:12]),
        (False, True, positions[12:15]),
    ]
    compared = [i for i, plan in enumerate(PLAN) if "fail" not in plan]
    right_a = sum(PLAN[i][0] == TRUTH[i] for i in compared)
    right_b = sum(PLAN[i][1] == TRUTH[i] for i in compared)
    labels = report["labels"]
    assert (labels["accuracy_a"]["successes"], labels["accuracy_b"]["successes"]) == (right_a, right_b)
    assert labels["difference"]["ppi"]["estimate"] == pytest.approx((right_a - right_b) / len(compared))
    assert labels["difference"]["ppi"]["low"] < labels["difference"]["ppi"]["estimate"]
    assert report["conclusion"].startswith("B is better")


def test_compare_without_labels_and_with_a_judge_named(files: dict[str, Path]) -> None:
    done = jurist("compare", files["a"], files["two"], "--judge-b", "y", "--shown", "2")
    assert done.returncode == 0, done.stderr
    assert "B: " in done.stdout and "judge y (pointwise)" in done.stdout
    assert "  yes -> no: 12 rows [r0, r1, ... 10 more]" in done.stdout
    assert "without labels, which judge is better is not known" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("a", "fewer"), r"\(40 rows\) and .*f\.parquet \(25 rows\) are not over the same rows: 15 row ids"),
        (
            ("a", "b", "--judge", "nope"),
            r"a\.parquet \(A\): the results hold no judge 'nope' \(judges: quality\)",
        ),
        (("a", "two"), r"two\.parquet \(B\) holds several judges \(x, y\): name one"),
        (
            ("a", "b", "--labels", "unknown", "--labels-id-column", "id"),
            r"1 of its 41 labels \(matched by its column 'id'\) are for rows the results do not hold "
            r"\(ids 'zz9'",
        ),
        (
            ("a", "b", "--labels", "outside", "--labels-id-column", "id"),
            r"label 'maybe' of row r0 is not a verdict",
        ),
        (
            ("pa", "pb", "--labels", "too_many"),
            r"1 of its 41 labels \(matched by its row positions .* are for rows .* \(ids '40'",
        ),
    ],
)
def test_bad_inputs_exit_2_with_a_clear_message(
    files: dict[str, Path], args: tuple[str, ...], message: str
) -> None:
    done = jurist("compare", *(files.get(a, a) for a in args))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ")
    assert re.search(message, done.stderr), done.stderr
