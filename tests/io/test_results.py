"""The result-table reader: judges, kinds and columns from a results file's own metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from jurist import Engine, ScriptedBackend
from jurist.errors import InputError
from jurist.io.results import ResultTable

POINT: dict[str, Any] = {
    "judge_params": {"prompt_template": "Q: {question}\nA: {response_a}", "judgment_type": "BOOL"},
}
PAIR: dict[str, Any] = {
    "name": "pair",
    "judge_params": {"prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}"},
    "pairwise_judge_params": {},
}
ROWS = [{"question": f"q{i}", "response_a": f"a{i}", "response_b": f"b{i}"} for i in range(5)]


def answer(request: Any) -> str:
    text = request.messages[-1].content
    return json.dumps({"judgment": "A" if "SECOND" in text else True})


@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".jsonl"])
def test_a_results_file_names_its_judges_kinds_and_columns(tmp_path: Path, suffix: str) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    output = tmp_path / f"out{suffix}"
    judges = [{**POINT, "name": "one"}, {**POINT, "name": "one_more"}]
    Engine(judges, ScriptedBackend(answer), panel=True).run_file(source, output)
    results = ResultTable.open(output)
    assert results.from_metadata
    assert results.names == ["one", "one_more", "panel"]
    assert [j.kind for j in results.judges] == ["pointwise", "pointwise", "panel"]
    one = results.judge("one")
    # "one" does not claim the columns of "one_more", whose name it prefixes
    assert all(c.startswith("one.") for c in one.columns)
    assert one.score == "one.score" and one.verdict == "one.judgment"
    assert results.values(one.status) == ["ok"] * 5
    assert results.panel is not None and results.panel.status == "panel.status"
    with pytest.raises(InputError, match="judges: one, one_more, panel"):
        results.judge("two")
    with pytest.raises(InputError, match=r"no column one\.winner .*one\.judgment"):
        one.column("winner")


def test_pairwise_kind_comes_from_metadata_and_columns_can_be_read_alone(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    output = tmp_path / "out.parquet"
    Engine(PAIR, ScriptedBackend(answer)).run_file(source, output)
    results = ResultTable.open(output, columns=["row_id", "pair.winner", "pair.status"])
    pair = results.judge("pair")
    assert pair.pairwise and pair.verdict == "pair.winner"
    assert set(results.table.column_names) == {"row_id", "pair.winner", "pair.status"}
    assert pair.columns == ("pair.winner", "pair.status")


def test_a_table_without_metadata_is_read_by_its_columns() -> None:
    columns = {"x": [1], "j.judgment": ["Yes"], "j.status": ["ok"], "p.winner": ["a"], "p.status": ["ok"]}
    table = pa.table(columns)
    results = ResultTable(table)
    assert not results.from_metadata
    assert [(j.name, j.kind) for j in results.judges] == [("j", "pointwise"), ("p", "pairwise")]
    assert results.owner("x") is None and results.owner("p.winner") is results.judge("p")


def test_a_missing_results_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such results file"):
        ResultTable.open(tmp_path / "nope.parquet")
