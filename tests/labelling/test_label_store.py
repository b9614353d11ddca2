"""The labels file, the labels of each kind of judge, the review order and the desk's rules, in-process."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from label_support import append_many, read_lines

from jurist.errors import InputError
from jurist.io.results import ResultTable, judge_entry_columns
from jurist.labelling.choices import LabelSet
from jurist.labelling.desk import Desk, DeskOptions, Refused
from jurist.labelling.queue import DISAGREES, INCONSISTENT, UNSURE, Queue
from jurist.labelling.rows import Rows
from jurist.labels.file import LabelStore


def test_appends_from_two_processes_are_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=append_many, args=(str(path), tag, 100)) for tag in "ab"]
    for worker in workers:
        worker.start()
    append_many(str(path), "c", 100)
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    lines = read_lines(path)
    assert sorted(line["row_id"] for line in lines) == sorted(f"{t}{i}" for t in "abc" for i in range(100))


def test_a_cut_short_last_line_is_left_out_and_the_next_append_removes_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"row_id": "1", "label": "Yes"}\n{"row_id": "2", "lab')
    store = LabelStore(path)
    assert [record["row_id"] for _, record in store.lines()] == ["1"]
    store.append({"row_id": "3", "label": "No"})  # never reported saved, the torn line goes
    assert [record["row_id"] for _, record in store.lines()] == ["3"]
    assert path.read_text() == '{"row_id": "1", "label": "Yes"}\n{"row_id":"3","label":"No"}\n'
    assert [(n, r["row_id"]) for n, r in LabelStore(path).lines()] == [(1, "1"), (2, "3")]


def test_a_damaged_line_before_the_last_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"row_id": "1", "label": "Yes"}\n\n{"row_id": \n{"row_id": "2", "label": "No"}\n')
    with pytest.raises(InputError, match=r"labels.jsonl: line 3 is not JSON"):
        LabelStore(path).lines()


def table_with(config: dict[str, Any], judgment: list[Any]) -> ResultTable:
    """A hand-made result table of one pointwise judge with ``config``."""
    n = len(judgment)
    columns = {
        "row_id": [str(i) for i in range(n)],
        "text": [f"row {i}" for i in range(n)],
        "j.judgment": judgment,
        "j.score": [float(i) for i in range(n)],
        "j.judgment_confidence": [0.9, 0.6, 0.7, 0.99][:n],
        "j.status": ["ok"] * n,
    }
    entry = judge_entry_columns("j", "pointwise", [c for c in columns if c.startswith("j.")])
    return ResultTable(pa.table(columns), {"judges": [{**entry, "config": config}]})


@pytest.mark.parametrize(
    ("params", "values", "keys", "kind"),
    [
        ({"judgment_type": "BOOL"}, ["Yes", "No"], [("y", "1"), ("n", "2")], "bool"),
        (
            {"judgment_type": "INT", "judgment_scores": {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5}},
            [1, 2, 3, 4, 5],
            [("1",), ("2",), ("3",), ("4",), ("5",)],
            "scale",
        ),
        (
            {"judgment_type": "ENUM", "judgment_scores": {"good": 1.0, "fair": 0.5, "bad": 0.0}},
            ["good", "fair", "bad"],
            [("1",), ("2",), ("3",)],
            "enum",
        ),
    ],
)
def test_the_buttons_come_from_the_judges_config(
    params: dict[str, Any], values: list[Any], keys: list[tuple[str, ...]], kind: str
) -> None:
    labels = LabelSet.of(table_with({"judge_params": params}, [None] * 4), "j")
    assert labels.kind == kind and labels.values == values and [c.keys for c in labels.choices] == keys


def test_labels_are_read_in_the_judges_vocabulary() -> None:
    enum = LabelSet.of(
        table_with({"judge_params": {"judgment_type": "ENUM", "judgment_scores": {"Good": 1.0}}}, [None]), "j"
    )
    assert enum.parse("good") == "Good" and enum.parse("great") is None and enum.target("Good") == 1.0
    yes_no = LabelSet.of(table_with({"judge_params": {"judgment_type": "BOOL"}}, [True]), "j")
    assert [yes_no.parse(v) for v in (True, "yes", "FALSE", 0, "maybe")] == ["Yes", "Yes", "No", "No", None]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"judge_params": {"judgment_type": "FLOAT"}}, "answers with open FLOAT values"),
        ({"judge_params": {}, "rubric_judge_params": {"criteria": []}}, "is a rubric judge"),
    ],
)
def test_a_judge_without_closed_labels_is_refused(config: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        LabelSet.of(table_with(config, [0.5, 0.2]), "j")


def test_the_review_order_puts_disagreements_then_inconsistent_orders_then_the_unsure() -> None:
    table = table_with({"judge_params": {"judgment_type": "BOOL"}}, [True, False, True, True])
    rows = Rows(table, "j", LabelSet.of(table, "j"))
    queue = Queue.of_review(rows, {"3": "No", "0": "Yes"})
    assert [(e.row_id, e.reason) for e in queue.entries] == [
        ("3", DISAGREES),
        ("1", UNSURE),  # confidence 0.6
        ("2", UNSURE),  # 0.7
        ("0", UNSURE),  # 0.9, and labelled as the judge said
    ]
    rows.consistent = [True, None, False, True]
    assert [(e.row_id, e.reason) for e in Queue.of_review(rows, {"3": "No"}).entries][:2] == [
        ("3", DISAGREES),
        ("2", INCONSISTENT),
    ]


def test_a_review_appends_corrections_and_an_undo_restores_the_earlier_label(
    results: dict[str, Path], tmp_path: Path
) -> None:
    table = ResultTable.open(results["pair"])
    labels = tmp_path / "labels.jsonl"
    verdicts = table.values("pref.winner")
    wrong = {"a": "b", "b": "a", "tie": "a"}
    first = {"row_id": "4", "label": wrong[verdicts[4]], "labeller": "ann", "time": "t", "probability": 0.5}
    labels.write_text(json.dumps(first) + "\n")
    desk = Desk(table, labels, DeskOptions(judge="pref", review=True, budget=5))
    offer = desk.next("s", "bo")
    assert offer["row"]["row_id"] == "4" and offer["reason"] == DISAGREES
    assert offer["current"] == {"label": first["label"], "labeller": "ann"} and "verdict" in offer
    assert [f["name"] for f in offer["row"]["pair"]] == ["response_a", "response_b"]
    desk.label("s", "bo", "4", verdicts[4])
    assert desk.next("s", "bo")["row"]["row_id"] != "4"
    desk.undo("s", "bo", "4")
    lines = read_lines(labels)
    assert lines[1]["review"] and lines[1]["probability"] == 0.5 and lines[1]["label"] == verdicts[4]
    assert lines[2]["label"] == first["label"] and lines[2]["undo"] and lines[2]["probability"] == 0.5
    assert desk.current()["4"] == first["label"]
    with pytest.raises(Refused, match="no label to undo"):
        desk.undo("s", "bo", "4")


def test_a_restarted_desk_resumes_at_the_first_unlabelled_row_of_the_plan(
    results: dict[str, Path], tmp_path: Path
) -> None:
    table = ResultTable.open(results["point"])
    labels = tmp_path / "labels.jsonl"
    options = DeskOptions(judge="quality", budget=8, seed=5)
    desk = Desk(table, labels, options)
    order = [e.row_id for e in desk.queue.entries]
    for _ in range(3):
        desk.label("s", "ann", desk.next("s", "ann")["row"]["row_id"], "No")
    desk.skip("s", desk.next("s", "ann")["row"]["row_id"])  # skipped: offered to no one else while held
    restarted = Desk(table, labels, options)
    assert [e.row_id for e in restarted.queue.entries] == order
    offer = restarted.next("other", "bo")
    assert offer["position"] == 3 and offer["row"]["row_id"] == order[3]
    assert restarted.progress()["given"] == 3
