"""``jurist estimate``, ``audit`` and ``report`` as real subprocesses: output, and bad inputs (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_data import run_pointwise


def jurist(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *map(str, args)], capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def point(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return run_pointwise(tmp_path_factory.mktemp("point"), count=120, labelled=60)


def test_estimate_prints_the_corrected_mean_and_its_json_holds_the_numbers(point: tuple[Path, Path]) -> None:
    results, labels = point
    text = jurist("estimate", results, "--labels", labels)
    assert text.returncode == 0, text.stderr
    assert "PPI++" in text.stdout and "labels only" in text.stdout and "effective labels" in text.stdout
    assert "warning" not in text.stderr
    data = json.loads(jurist("estimate", results, "--labels", labels, "--json").stdout)["quality"]
    overall = data["overall"]
    assert overall["labelled_rows"] == 60 and overall["unlabelled_rows"] == 60
    assert overall["ppi"]["low"] < overall["ppi"]["estimate"] < overall["ppi"]["high"]
    grouped = jurist(
        "estimate", results, "--labels", labels, "--by", "group", "--compare", "x", "--compare", "y", "--json"
    )
    assert grouped.returncode == 0, grouped.stderr
    by = json.loads(grouped.stdout)["quality"]
    assert set(by["by"]["groups"]) == {"x", "y"}
    x, y = by["by"]["groups"]["x"]["ppi"]["estimate"], by["by"]["groups"]["y"]["ppi"]["estimate"]
    assert by["compare"]["ppi"]["estimate"] == pytest.approx(x - y)


def test_estimate_warns_below_30_labelled_rows(tmp_path: Path) -> None:
    results, labels = run_pointwise(tmp_path, count=40, labelled=12)
    done = jurist("estimate", results, "--labels", labels)
    assert done.returncode == 0, done.stderr
    assert "warning: quality: only 12 labelled rows match" in done.stderr


def test_audit_text_and_json(point: tuple[Path, Path]) -> None:
    results, labels = point
    text = jurist("audit", results, "--labels", labels, "--where", "quality.score >= 0.5")
    assert text.returncode == 0, text.stderr
    for part in ("length: score per 100 characters", "confidence:", "accuracy", "keep rule", "precision"):
        assert part in text.stdout
    data = json.loads(jurist("audit", results, "--json").stdout)["quality"]
    assert "agreement" not in data and data["length"]["score"]["slope"] > 0


def test_labels_whose_ids_match_no_row_exit_2_naming_the_columns_tried(
    point: tuple[Path, Path], tmp_path: Path
) -> None:
    results, _ = point
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("".join(json.dumps({"key": f"k{i}", "label": "yes"}) + "\n" for i in range(5)))
    for command in ("estimate", "audit", "report"):
        extra = ["-o", tmp_path / "r.html"] if command == "report" else []
        done = jurist(command, results, "--labels", wrong, "--labels-id-column", "key", *extra)
        assert done.returncode == 2, done.stderr
        assert "no label of" in done.stderr and "'key'" in done.stderr and "'row_id'" in done.stderr
        assert "Traceback" not in done.stderr
    ids = tmp_path / "ids.jsonl"
    ids.write_text(json.dumps({"row_id": "7", "label": "yes"}) + "\n")
    done = jurist("estimate", results, "--labels", ids, "--labels-id-column", "nope")
    assert done.returncode == 2 and "no id column 'nope'" in done.stderr and "row_id, label" in done.stderr


def test_an_unknown_column_exits_2_listing_the_columns(point: tuple[Path, Path]) -> None:
    results, labels = point
    done = jurist("estimate", results, "--labels", labels, "--column", "quality.nope")
    assert done.returncode == 2
    assert "no column quality.nope" in done.stderr and "quality.score" in done.stderr
    done = jurist("audit", results, "--response-column", "answer_text")
    assert done.returncode == 2 and "answer_text" in done.stderr and "response" in done.stderr
    done = jurist("estimate", results, "--labels", labels, "--by", "team")
    assert done.returncode == 2 and "no column team" in done.stderr and "group" in done.stderr


def test_labels_of_the_wrong_type_exit_2_with_the_expected_type(
    point: tuple[Path, Path], tmp_path: Path
) -> None:
    results, _ = point
    text_labels = tmp_path / "text.jsonl"
    text_labels.write_text("".join(json.dumps({"label": "great"}) + "\n" for _ in range(10)))
    for command in ("estimate", "audit"):
        done = jurist(command, results, "--labels", text_labels)
        assert done.returncode == 2, done.stderr
        assert "label 'great' of row 0 does not fit judge 'quality'" in done.stderr
        assert "a number, or yes/no" in done.stderr
