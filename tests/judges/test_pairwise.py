"""Pairwise judging through the scripted backend: both orders, position bias, ties, errored sides."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.errors import ConfigError, InputError
from jurist.records import Completion, GenerationRequest

PAIR: dict[str, Any] = {
    "name": "pair",
    "judge_params": {
        "system_instruction": "Pick the better response.",
        "prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}",
        "include_explanation": True,
    },
    "pairwise_judge_params": {},
}

ROWS = [
    {"question": "q0", "response_a": "GOOD zero", "response_b": "BAD zero"},
    {"question": "q1", "response_a": "BAD one", "response_b": "GOOD one"},
    {"question": "q2", "response_a": "GOOD two", "response_b": "BAD two"},
]


def verdict(label: str) -> str:
    return json.dumps({"explanation": "because", "judgment": label})


def shown_first(request: GenerationRequest) -> str:
    return request.messages[-1].content.split("FIRST: ")[1].split("\n")[0]


def test_a_judge_that_always_picks_the_first_position_only_ties_inconsistent() -> None:
    table = Engine(PAIR, ScriptedBackend(lambda r: verdict("A"))).run(ROWS)
    assert table["pair.winner"].to_pylist() == ["tie"] * 3
    assert table["pair.position_consistent"].to_pylist() == [False] * 3
    assert table["pair.score"].to_pylist() == [0.5] * 3
    assert table["pair.status"].to_pylist() == ["ok"] * 3


def test_a_judge_that_always_picks_the_second_position_also_only_ties() -> None:
    table = Engine(PAIR, ScriptedBackend(lambda r: verdict("B"))).run(ROWS)
    assert table["pair.winner"].to_pylist() == ["tie"] * 3


def test_a_judge_that_names_the_right_answer_in_both_orders_gives_wins() -> None:
    def right(request: GenerationRequest) -> str:
        return verdict("A" if shown_first(request).startswith("GOOD") else "B")

    table = Engine(PAIR, ScriptedBackend(right)).run(ROWS)
    assert table["pair.winner"].to_pylist() == ["a", "b", "a"]
    assert table["pair.score"].to_pylist() == [1.0, 0.0, 1.0]
    assert table["pair.position_consistent"].to_pylist() == [True] * 3
    # each order's raw verdict is kept, in position labels
    assert table["pair.ab_judgment"].to_pylist() == ["A", "B", "A"]
    assert table["pair.ba_judgment"].to_pylist() == ["B", "A", "B"]
    assert table["pair.ab_explanation"].to_pylist() == ["because"] * 3


def test_both_orders_are_adjacent_in_one_call_and_share_the_prefix() -> None:
    backend = ScriptedBackend(lambda r: verdict("A"))
    Engine(PAIR, backend).run(ROWS)
    assert backend.calls == [6]
    firsts = [shown_first(r) for r in backend.requests]
    assert firsts == ["GOOD zero", "BAD zero", "BAD one", "GOOD one", "GOOD two", "BAD two"]
    assert len({r.messages[:-1] for r in backend.requests}) == 1


def test_ties_with_an_explicit_tie_label() -> None:
    config = {**PAIR, "pairwise_judge_params": {"allow_tie": True, "labels": {"tie": "same"}}}
    script = [verdict("same"), verdict("same"), verdict("same"), verdict("A"), verdict("B"), verdict("A")]
    table = Engine(config, ScriptedBackend(script)).run(ROWS)
    # row 0: tie/tie -> consistent tie; row 1: tie vs a win -> inconsistent tie; row 2: B then A -> b twice
    assert table["pair.winner"].to_pylist() == ["tie", "tie", "b"]
    assert table["pair.position_consistent"].to_pylist() == [True, False, True]
    assert table["pair.score"].to_pylist() == [0.5, 0.5, 0.0]


def test_tie_label_is_rejected_when_ties_are_not_allowed() -> None:
    table = Engine(PAIR, ScriptedBackend([verdict("tie"), verdict("A")] + [verdict("A")] * 4)).run(ROWS)
    assert table["pair.status"][0].as_py() == "parse_error"
    assert table["pair.winner"][0].as_py() == "inconclusive"
    assert table["pair.score"][0].as_py() is None


def test_errored_side_is_not_judged() -> None:
    rows = [*ROWS[:1], {**ROWS[1], "error_b": "upstream timeout"}, {**ROWS[2], "error_a": "refused"}]
    backend = ScriptedBackend(lambda r: verdict("A"))
    table = Engine(PAIR, backend).run(rows)
    assert table["pair.winner"].to_pylist() == ["tie", "inconclusive", "inconclusive"]
    assert table["pair.status"].to_pylist() == ["ok", "target_error", "target_error"]
    assert "upstream timeout" in table["pair.error"][1].as_py()
    assert len(backend.requests) == 2  # only row 0's two orders were sent


def test_one_failed_order_makes_the_row_inconclusive() -> None:
    script = [verdict("A"), Completion('{"explanation": "cut', "length"), verdict("A"), verdict("B")]
    table = Engine(PAIR, ScriptedBackend(script)).run(ROWS[:2])
    assert table["pair.status"].to_pylist() == ["truncated", "ok"]
    assert table["pair.winner"].to_pylist() == ["inconclusive", "a"]
    assert "order ba" in table["pair.error"][0].as_py()


def test_llmbar_columns_are_found_without_configuration() -> None:
    rows = [{"input": "q", "output_1": "GOOD", "output_2": "BAD", "label": 1}]
    backend = ScriptedBackend(lambda r: verdict("A" if shown_first(r) == "GOOD" else "B"))
    table = Engine(PAIR, backend).run(rows)
    assert table["pair.winner"].to_pylist() == ["a"]
    assert backend.requests[0].messages[-1].content == "Q: q\nFIRST: GOOD\nSECOND: BAD"


def test_missing_response_column_fails_up_front() -> None:
    with pytest.raises(InputError, match="response B"):
        Engine(PAIR, ScriptedBackend([])).run([{"question": "q", "response_a": "x"}])


def test_mustache_side_namespace() -> None:
    config = {
        **PAIR,
        "judge_params": {
            **PAIR["judge_params"],
            "prompt_template": (
                "{{question}} | {{response_a.output.response}} | {{response_b.output.response}}"
            ),
        },
    }
    backend = ScriptedBackend(lambda r: verdict("A"))
    Engine(config, backend).run(ROWS[:1])
    assert backend.requests[0].messages[-1].content == "q0 | GOOD zero | BAD zero"
    assert backend.requests[1].messages[-1].content == "q0 | BAD zero | GOOD zero"


def test_pairwise_config_rules() -> None:
    with pytest.raises(ConfigError, match="judgment_type is not allowed in a pairwise judge"):
        load_judge_config({**PAIR, "judge_params": {**PAIR["judge_params"], "judgment_type": "BOOL"}})
    with pytest.raises(ConfigError, match="either rubric_judge_params or pairwise_judge_params"):
        load_judge_config({**PAIR, "rubric_judge_params": {"criteria": [{"id": "x", "description": "d"}]}})
    with pytest.raises(ConfigError, match="distinct"):
        load_judge_config({**PAIR, "pairwise_judge_params": {"labels": {"first": "A", "second": "a"}}})
    example = {"question": "q", "response_a": "x", "response_b": "y", "judgment": "C", "explanation": "e"}
    with pytest.raises(ConfigError, match=r"examples\[0\]\.judgment"):
        load_judge_config({**PAIR, "judge_params": {**PAIR["judge_params"], "examples": [example]}})


def test_builtin_pairwise_judge_loads() -> None:
    config = load_judge_config("pairwise/preference")
    assert config.is_pairwise and config.judge_params.include_explanation
