"""The dataset form: conversations x criteria in one batched call, one row per pair with a status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers import answer, by_criterion

from jurist import Engine, InputError, ScriptedBackend, judge_conversations
from jurist.conversation import ConversationSource, read_criteria
from jurist.conversation.dataset import conversation_source
from jurist.conversation.transcript import NO_CONTEXT
from jurist.io.opening import open_source

CRITERIA = ["greets the user", "answers the question"]
CONVERSATIONS: list[dict[str, Any]] = [
    {
        "id": "c0",
        "messages": [
            {"role": "user", "content": "Hi, what is two plus two?"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "assistant", "content": "That's four."},
        ],
    },
    {"id": "c1", "messages": [{"role": "user", "content": "Are you there?"}]},  # no reply yet
    {"id": "c2", "messages": [{"content": "no role here"}]},  # malformed
    {"id": "c3", "messages": [{"role": "assistant", "content": "Welcome! Ask me anything."}]},  # bot first
]


def test_every_pair_gets_one_row_and_the_judgeable_ones_go_in_one_call() -> None:
    backend = by_criterion({"greets the user": "yes", "answers the question": "continue"})
    table = judge_conversations(CONVERSATIONS, CRITERIA, backend)
    assert table.num_rows == len(CONVERSATIONS) * len(CRITERIA)
    assert backend.calls == [4]  # c0 and c3, each against both criteria, in one call
    assert table["row_id"].to_pylist() == ["c0:0", "c0:1", "c1:0", "c1:1", "c2:0", "c2:1", "c3:0", "c3:1"]
    assert table["conversation_index"].to_pylist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert table["conversation_id"].to_pylist() == ["c0", "c0", "c1", "c1", "c2", "c2", "c3", "c3"]
    assert table["criterion"].to_pylist() == CRITERIA * 4
    statuses = table["criterion.status"].to_pylist()
    assert statuses == ["ok", "ok", "missing_input", "missing_input", "bad_input", "bad_input", "ok", "ok"]
    verdicts = table["criterion.judgment"].to_pylist()
    assert verdicts == ["yes", "continue", None, None, None, None, "yes", "continue"]
    assert table["criterion.score"].to_pylist()[:2] == [1.0, None]  # continue is scored as N/A
    errors = table["criterion.error"].to_pylist()
    assert errors[2] == "row c1:0: field 'reply' is missing or null"
    assert errors[4] == "conversation 2 (id 'c2'): field 'messages' message 0 has no role"
    assert table["context"].to_pylist()[6] == NO_CONTEXT
    assert table["reply"].to_pylist()[0] == "Assistant: Hello!\nAssistant: That's four."
    constraint = backend.requests[0].constraint
    assert constraint is not None and '"continue"|"yes"|"no"' in (constraint.regex or "")


def test_an_unreadable_answer_is_a_parse_error_not_a_no() -> None:
    backend = ScriptedBackend(["garbage", answer("no")])
    table = judge_conversations(CONVERSATIONS[:1], CRITERIA, backend)
    assert table["criterion.status"].to_pylist() == ["parse_error", "ok"]
    assert table["criterion.judgment"].to_pylist() == [None, "no"]
    assert table["criterion.raw"].to_pylist()[0] == "garbage"


def test_rows_can_carry_their_own_criterion() -> None:
    rows = [
        {**CONVERSATIONS[0], "criterion": "answers the question"},
        {**CONVERSATIONS[0], "id": "c0b", "criterion": "greets the user"},
        {**CONVERSATIONS[3], "criterion": None},
    ]
    backend = by_criterion({"greets the user": "yes"})
    table = judge_conversations(rows, None, backend)
    assert table["row_id"].to_pylist() == ["c0", "c0b", "c3"]
    assert table["criterion.judgment"].to_pylist() == ["no", "yes", None]
    assert (
        table["criterion.error"].to_pylist()[2]
        == "conversation 2 (id 'c3'): field 'criterion' is None, not non-empty text"
    )


def test_a_jsonl_file_with_a_bad_line_and_a_conversation_column(tmp_path: Path) -> None:
    path = tmp_path / "convs.jsonl"
    lines = [
        json.dumps({"conversation": CONVERSATIONS[0]["messages"]}),
        "{not json",
        json.dumps({"conversation": "hi"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    backend = by_criterion({"greets the user": "yes"})
    table = judge_conversations(path, CRITERIA, backend)
    assert table["row_id"].to_pylist() == ["0:0", "0:1", "1:0", "1:1", "2:0", "2:1"]
    assert table["criterion.status"].to_pylist() == [
        "ok",
        "ok",
        "bad_input",
        "bad_input",
        "bad_input",
        "bad_input",
    ]
    errors = table["criterion.error"].to_pylist()
    assert errors[2].startswith(f"{path} line 2: malformed JSON")
    assert errors[4] == "conversation 2: field 'conversation' is text, not a list of messages"


def test_an_engine_of_several_conversation_judges_runs_on_the_same_rows() -> None:
    strict = {
        "name": "strict",
        "judge_params": {
            "prompt_template": "{context}\n---\n{reply}\n---\n{criterion}",
            "judgment_type": "BOOL",
        },
    }
    backend = ScriptedBackend(
        lambda r: '{"judgment": "Yes"}' if r.messages[-1].content.count("---") == 2 else answer("no")
    )
    engine = Engine(["conversation/criterion", strict], backend)
    table = judge_conversations(CONVERSATIONS[:1], CRITERIA, engine)
    assert table["criterion.judgment"].to_pylist() == ["no", "no"]
    assert table["strict.judgment"].to_pylist() == [True, True]
    assert backend.calls == [4]


def test_whole_input_problems_are_raised_before_any_model_call(tmp_path: Path) -> None:
    backend = ScriptedBackend([])
    with pytest.raises(InputError, match=r"has no 'messages' \(or 'conversation'\) column"):
        judge_conversations([{"text": "hi"}], CRITERIA, backend)
    with pytest.raises(InputError, match="no criteria were given"):
        judge_conversations(CONVERSATIONS, None, backend)
    with pytest.raises(InputError, match="criterion 1 is ''"):
        judge_conversations(CONVERSATIONS, ["ok", ""], backend)
    with pytest.raises(InputError, match="is one text that names no file"):
        judge_conversations(CONVERSATIONS, "greets", backend)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="id column 'conv' is not in the dataset"):
        judge_conversations(CONVERSATIONS, CRITERIA, backend, id_column="conv")
    assert backend.calls == []


def test_criteria_files(tmp_path: Path) -> None:
    text = tmp_path / "criteria.txt"
    text.write_text("# what every reply must do\ngreets the user\n\n  answers the question  \n")
    assert read_criteria(text) == ("greets the user", "answers the question")
    (tmp_path / "c.json").write_text(json.dumps(CRITERIA))
    (tmp_path / "c.yaml").write_text("- greets the user\n- answers the question\n")
    assert read_criteria(tmp_path / "c.json") == read_criteria(tmp_path / "c.yaml") == tuple(CRITERIA)
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(InputError, match=r"empty\.txt: has no criteria"):
        read_criteria(tmp_path / "empty.txt")
    (tmp_path / "map.yaml").write_text("a: b\n")
    with pytest.raises(InputError, match="must hold a list of criteria, not a dict"):
        read_criteria(tmp_path / "map.yaml")
    with pytest.raises(InputError, match="cannot read the criteria"):
        read_criteria(tmp_path / "missing.txt")


def test_the_source_streams_in_batches_and_knows_its_identity_and_total() -> None:
    table = pa.Table.from_pylist([CONVERSATIONS[0]] * 5)
    source = ConversationSource(open_source(table), CRITERIA)
    assert source.total == 10 and source.replayable
    chunks = list(source.chunks(4))
    assert [c.num_rows for c in chunks] == [4, 4, 2]
    other = ConversationSource(open_source(table), CRITERIA[:1])
    assert source.identity() != other.identity()


def test_a_finished_run_of_conversations_is_not_judged_again(tmp_path: Path) -> None:
    path = tmp_path / "convs.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CONVERSATIONS))
    backend = by_criterion({"greets the user": "yes"})
    engine = Engine("conversation/criterion", backend)
    out = tmp_path / "out.parquet"
    first = engine.run_file(conversation_source(path, CRITERIA), out)
    assert (first.rows, first.requests) == (8, 4)
    again = engine.run_file(conversation_source(path, CRITERIA), out)
    assert again.complete and backend.calls == [4]
    with pytest.raises(InputError, match="holds the results of a different run"):
        engine.run_file(conversation_source(path, CRITERIA[:1]), out)
