"""`jurist label` refuses bad input before it serves anything: a clear message and exit 2; and the labels
file it writes is one `jurist estimate` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurist.cli import app
from jurist.io.results import ResultTable
from jurist.labelling.desk import Desk, DeskOptions


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["label", *args])
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes is not None else "")


def write_lines(path: Path, *lines: object) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_a_file_that_is_not_results(tmp_path: Path) -> None:
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    code, out = run(str(broken), "--labels", str(tmp_path / "l.jsonl"))
    assert code == 2 and f"error: {broken}: not a readable results file" in out
    rows = write_lines(tmp_path / "rows.jsonl", {"text": "a row, not a result"})
    code, out = run(str(rows), "--labels", str(tmp_path / "l.jsonl"))
    assert code == 2 and "error: the results hold no judge columns" in out
    code, out = run(str(tmp_path / "absent.parquet"), "--labels", str(tmp_path / "l.jsonl"))
    assert code == 2 and "no such results file" in out


def test_a_judge_not_in_the_results(results: dict[str, Path], tmp_path: Path) -> None:
    code, out = run(str(results["point"]), "--labels", str(tmp_path / "l.jsonl"), "--judge", "nobody")
    assert code == 2 and "the results hold no judge 'nobody' (judges: quality)" in out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"row_id": "9999", "label": "Yes"}, "line 2: row_id '9999' is not a row of the results"),
        (
            {"row_id": "3", "label": "maybe"},
            "line 2: label 'maybe' is not one of judge 'quality''s labels (Yes, No)",
        ),
        ({"label": "Yes"}, "line 2: row_id: Field required"),
        ("{not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is not a JSON object"),
    ],
)
def test_a_labels_file_with_a_bad_line_is_refused_naming_it(
    results: dict[str, Path], tmp_path: Path, line: object, message: str
) -> None:
    labels = write_lines(
        tmp_path / "l.jsonl", {"row_id": "1", "label": "No"}, line, {"row_id": "2", "label": "No"}
    )
    code, out = run(str(results["point"]), "--labels", str(labels))
    assert code == 2 and f"error: {labels}: {message}" in out
    assert labels.read_text().count("\n") == 3  # refused: not a byte written


@pytest.mark.parametrize("budget", ["0", "-3"])
def test_a_budget_that_is_not_positive(results: dict[str, Path], tmp_path: Path, budget: str) -> None:
    code, out = run(str(results["point"]), "--labels", str(tmp_path / "l.jsonl"), "--budget", budget)
    assert code == 2 and f"error: --budget must be at least 1, not {budget}" in out


def test_other_bad_options(results: dict[str, Path], tmp_path: Path) -> None:
    labels = str(tmp_path / "l.jsonl")
    code, out = run(str(results["point"]), "--labels", labels, "--strategy", "greedy")
    assert code == 2 and "--strategy must be one of uniform, stratified, active, not 'greedy'" in out
    code, out = run(str(results["point"]), "--labels", labels, "--port", "70000")
    assert code == 2 and "--port must lie between 0 and 65535" in out
    code, out = run(str(results["point"]), "--labels", labels, "--host", "203.0.113.7")  # not this machine's
    assert code == 2 and "cannot listen on 203.0.113.7:8765" in out


def test_jurist_estimate_reads_the_labels_file(results: dict[str, Path], tmp_path: Path) -> None:
    table = ResultTable.open(results["point"])
    labels = tmp_path / "l.jsonl"
    desk = Desk(table, labels, DeskOptions(judge="quality", budget=12))
    for i in range(12):
        offer = desk.next("s", "ann")
        desk.label("s", "ann", offer["row"]["row_id"], "Yes" if i % 3 else "No")
    withdrawn = offer["row"]["row_id"]
    desk.undo("s", "ann", withdrawn)  # its label no longer counts
    result = CliRunner().invoke(
        app,
        [
            "estimate",
            str(results["point"]),
            "--labels",
            str(labels),
            "--labels-id-column",
            "row_id",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["quality"]["overall"]["labelled_rows"] == 11
    assert report["quality"]["overall"]["ppi"]["estimate"] == pytest.approx(
        desk.progress()["estimate"]["estimate"]
    )
