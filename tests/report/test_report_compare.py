"""``jurist report --compare-with``: the comparison section of two scripted judges with known flips, checked
against the plan and against ``jurist compare``'s own numbers, and a second table over other rows refused."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compare_data import plan_rows, run_side, write_labels, write_rows
from jurist.analysis.compare import compare_tables
from jurist.cli import app
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.report.build import ReportOptions, write_report

# 13 rows yes -> no, 2 no -> yes, 25 alike; B right on every flip
PLAN = [("yes", "no")] * 13 + [("no", "yes")] * 2 + [("yes", "yes")] * 15 + [("no", "no")] * 10
TRUTH = ["no"] * 13 + ["yes"] * 2 + ["yes"] * 15 + ["no"] * 10
IDS = [f"r{i}" for i in range(len(PLAN))]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("report_compare")
    source = write_rows(folder / "rows.jsonl", plan_rows(PLAN))
    fewer = write_rows(folder / "fewer.jsonl", plan_rows(PLAN[:20]))
    return {
        "a": run_side(folder, source, "A"),
        "b": run_side(folder, source, "B"),
        "fewer": run_side(folder, fewer, "B", output="fewer.parquet"),
        "labels": write_labels(folder / "labels.jsonl", TRUTH, IDS),
        "folder": folder,
    }


def section(page: str) -> str:
    start = page.index('<h2 id="comparison">')
    return page[start : page.index('<p class="note">Written by jurist', start)]


def text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


def test_the_section_shows_the_planned_flips_and_the_comparison_s_verdict(tables: dict[str, Path]) -> None:
    out = tables["folder"] / "compared.html"
    options = ReportOptions(labels=LabelSource(tables["labels"], id_column="id"), compare_with=tables["b"])
    write_report(tables["a"], out, options)
    shown = text(section(out.read_text(encoding="utf-8")))
    assert f"Compared with {tables['b']}" in shown
    assert "rows compared 40 of 40" in shown
    assert "same verdict 25 rows" in shown
    assert "Verdicts that changed from A to B: 15 rows" in shown
    first_ten = ", ".join(IDS[:10])
    assert f"yes no 13 {first_ten}, ... 3 more" in shown
    assert "no yes 2 r13, r14" in shown
    expected = compare_tables(
        ResultTable.open(tables["a"]),
        ResultTable.open(tables["b"]),
        labels=[*TRUTH],
        sources=(str(tables["a"]), str(tables["b"])),
    )
    assert expected["conclusion"].startswith("B is better")
    assert expected["conclusion"] in shown
    # accuracy: A right on the 25 alike rows, B on all 40
    assert "accuracy A 0.625" in shown and "B 1.000" in shown


def test_without_labels_the_section_says_which_is_better_is_not_known(tables: dict[str, Path]) -> None:
    out = tables["folder"] / "unlabelled.html"
    write_report(tables["a"], out, ReportOptions(compare_with=tables["b"]))
    shown = text(section(out.read_text(encoding="utf-8")))
    assert "which judge is better is not known (give --labels)" in shown
    assert "accuracy" not in shown


def test_the_command_refuses_a_second_table_over_other_rows(tables: dict[str, Path]) -> None:
    out = tables["folder"] / "refused.html"
    result = CliRunner().invoke(
        app, ["report", str(tables["a"]), "-o", str(out), "--compare-with", str(tables["fewer"])]
    )
    assert result.exit_code == 2, result.output
    assert str(tables["fewer"]) in result.output and not out.exists()
    missing = CliRunner().invoke(
        app,
        [
            "report",
            str(tables["a"]),
            "-o",
            str(out),
            "--compare-with",
            str(tables["b"]),
            "--compare-judge",
            "x",
        ],
    )
    assert missing.exit_code == 2 and "x" in missing.output
