"""`jurist filter` against hand-computed expectations: gates, predicates, quantiles on equal values,
top-k per group with ties, null scores, the integer bucket, the report, and bad predicates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jurist import Engine, InputError, ScriptedBackend
from jurist.analysis.filtering import FilterRules, filter_table, quote_columns


def results(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows)


ROWS = [
    # prompt p1: scores 0.9, 0.5, 0.5, None (parse error); p2: 0.2, 0.7 (inconsistent pair elsewhere)
    {
        "row_id": "0",
        "prompt": "p1",
        "text": "a",
        "q.score": 0.9,
        "q.status": "ok",
        "q.judgment_confidence": 0.95,
    },
    {
        "row_id": "1",
        "prompt": "p1",
        "text": "b",
        "q.score": 0.5,
        "q.status": "ok",
        "q.judgment_confidence": 0.55,
    },
    {
        "row_id": "2",
        "prompt": "p1",
        "text": "c",
        "q.score": 0.5,
        "q.status": "ok",
        "q.judgment_confidence": 0.80,
    },
    {
        "row_id": "3",
        "prompt": "p1",
        "text": "d",
        "q.score": None,
        "q.status": "parse_error",
        "q.judgment_confidence": None,
    },
    {
        "row_id": "4",
        "prompt": "p2",
        "text": "e",
        "q.score": 0.2,
        "q.status": "ok",
        "q.judgment_confidence": 0.99,
    },
    {
        "row_id": "5",
        "prompt": "p2",
        "text": "f",
        "q.score": 0.7,
        "q.status": "ok",
        "q.judgment_confidence": 0.60,
    },
]


def kept_ids(table: pa.Table) -> list[str]:
    return table["row_id"].to_pylist()


def test_status_gate_and_a_predicate() -> None:
    kept, report = filter_table(results(ROWS), FilterRules(where=("q.score >= 0.5",)))
    assert kept_ids(kept) == ["0", "1", "2", "5"]
    assert report.rows == 6 and report.kept == 4
    assert report.dropped == {"q.status is not ok": 1, "where q.score >= 0.5": 1}
    assert kept.column_names == ["row_id", "prompt", "text"]  # judge columns dropped by default


def test_a_null_score_fails_a_predicate_without_the_gate() -> None:
    kept, report = filter_table(results(ROWS), FilterRules(where=("q.score > 0",), require_ok=False))
    assert "3" not in kept_ids(kept)
    assert report.dropped == {"where q.score > 0": 1}


def test_quantile_keeps_equal_values_together() -> None:
    rows = [
        {"row_id": str(i), "q.status": "ok", "q.score": s} for i, s in enumerate([0.1, 0.5, 0.5, 0.5, 0.9])
    ]
    kept, report = filter_table(results(rows), FilterRules(quantile=0.5, by="q.score"))
    # the median is 0.5: the three rows at 0.5 stay or go together, and stay
    assert kept_ids(kept) == ["1", "2", "3", "4"]
    assert report.dropped == {"below the 0.5 quantile of q.score": 1}


def test_top_k_per_group_breaks_ties_by_input_order() -> None:
    kept, report = filter_table(results(ROWS), FilterRules(top_k=2, by="q.score", group_by="prompt"))
    # p1: 0.9 first, then the two 0.5s tie: the earlier (row 1) wins; row 3 failed its status gate
    assert kept_ids(kept) == ["0", "1", "4", "5"]
    assert report.dropped == {"q.status is not ok": 1, "not in the top 2 by q.score": 1}


def test_rows_without_the_ranking_value_are_dropped_and_named() -> None:
    kept, report = filter_table(results(ROWS), FilterRules(top_k=10, by="q.score", require_ok=False))
    assert "3" not in kept_ids(kept) and report.dropped == {"no q.score value": 1}


def test_confidence_gate_and_int_score_bucket() -> None:
    kept, report = filter_table(
        results(ROWS),
        FilterRules(min_confidence=0.7, int_score="q.score", int_score_scale=5.0, keep_judge_columns=True),
    )
    assert kept_ids(kept) == ["0", "2", "4"]
    assert kept["int_score"].to_pylist() == [5, 3, 1]  # 4.5 rounds half up, 2.5 -> 3, 1.0 -> 1
    assert report.dropped == {"q.status is not ok": 1, "q.judgment_confidence below 0.7": 2}


def test_pairwise_and_panel_gates_can_be_switched_off() -> None:
    rows = [
        {"row_id": "0", "p.status": "ok", "p.position_consistent": True, "panel.status": "ok"},
        {"row_id": "1", "p.status": "ok", "p.position_consistent": False, "panel.status": "ok"},
        {"row_id": "2", "p.status": "ok", "p.position_consistent": True, "panel.status": "inconclusive"},
    ]
    kept, report = filter_table(results(rows), FilterRules())
    assert kept_ids(kept) == ["0"]
    assert report.dropped == {"p: the two orders disagree": 1, "the panel is below its quorum": 1}
    loose, _ = filter_table(results(rows), FilterRules(require_consistent=False, require_panel=False))
    assert kept_ids(loose) == ["0", "1", "2"]


def test_a_bad_predicate_is_a_clear_error_quoting_it() -> None:
    with pytest.raises(InputError, match=r"--where 'q.score >>= 1' is not a valid predicate"):
        filter_table(results(ROWS), FilterRules(where=("q.score >>= 1",)))
    with pytest.raises(InputError, match=r"'nope.score > 1'.*nope"):
        filter_table(results(ROWS), FilterRules(where=("nope.score > 1",)))
    with pytest.raises(InputError, match="--top-k and --quantile need --by"):
        filter_table(results(ROWS), FilterRules(top_k=1))


def test_column_names_with_dots_are_quoted_outside_strings() -> None:
    columns = ["q.score", "q.status", "prompt"]
    assert quote_columns("q.score >= 0.5 and q.status = 'q.score'", columns) == (
        '"q.score" >= 0.5 and "q.status" = \'q.score\''
    )
    assert quote_columns('"q.score" > 1', columns) == '"q.score" > 1'


def test_the_filter_command_writes_kept_rows_and_a_report(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({"request": f"r{i}", "response": f"x{i}"}) + "\n" for i in range(6)))
    answers = [json.dumps({"explanation": "e", "judgment": j}) for j in ("Yes", "No", "Unsure")]
    out = tmp_path / "scored.parquet"
    Engine("graded/truthfulness", ScriptedBackend(answers, cycle=True)).run_file(source, out)
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "filter", str(out), "-o", str(tmp_path / "kept.jsonl"),
         "--where", "truthfulness.score >= 0.5", "--report", str(tmp_path / "report.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = [json.loads(line) for line in (tmp_path / "kept.jsonl").read_text().splitlines()]
    assert [k["request"] for k in kept] == ["r0", "r2", "r3", "r5"]  # Yes = 1.0, Unsure = 0.5, No = 0.0
    assert json.loads((tmp_path / "report.json").read_text())["dropped"] == {
        "where truthfulness.score >= 0.5": 2
    }
    meta = pq.read_schema(out).metadata
    assert b"jurist" in meta
