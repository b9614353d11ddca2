"""evaluatorq's jury namespace: every variable of its pointwise and pairwise tables, rendered through a
judge; {{criteria}} from the judge; bare object names left literal with one warning; text ``input``
columns; errored targets not judged; the jury/* built-ins."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.records import GenerationRequest

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
TOOLS = [{"name": "search", "arguments": {"q": "France"}, "result": "Paris", "id": "call_1"}]
TRANSCRIPT = [
    {"role": "assistant", "content": "Let me look that up."},
    {"role": "assistant", "content": "The capital of France is Paris."},
]
RESPONSE = "The capital of France is Paris."

# An evaluatorq-shaped row: the data point's messages and expected output, the agent's response object.
AGENT_ROW: dict[str, Any] = {
    "messages": MESSAGES,
    "expected_output": "Paris",
    "output": {"response": RESPONSE, "tools_called": TOOLS, "messages": TRANSCRIPT, "error": ""},
}


def indented(value: Any) -> str:
    """evaluatorq's layout of a list or object in a prompt."""
    return json.dumps(value, indent=2)


POINTWISE_TABLE = [
    ("input.all_messages", indented(MESSAGES)),
    ("input.expected_output", "Paris"),
    ("input.system_instructions", ""),
    ("output.response", RESPONSE),
    ("output.tools_called", indented(TOOLS)),
    ("output.messages", indented(TRANSCRIPT)),
    ("output.error", ""),
    ("log.input", "What is the capital of France?"),
    ("log.output", RESPONSE),
    ("log.reference", "Paris"),
    ("log.expected_output", "Paris"),
    ("log.messages", indented(MESSAGES)),
    ("criteria", "The answer is factually correct."),
]


def pointwise(prompt: str, **params: Any) -> Judge:
    judge_params: dict[str, Any] = {"prompt_template": prompt, **params}
    if "criteria" in prompt:
        judge_params["template_variables"] = {"criteria": "The answer is factually correct."}
    return Judge(load_judge_config({"name": "jury", "judge_params": judge_params}))


def pairwise(prompt: str, **pair: Any) -> Judge:
    judge_params: dict[str, Any] = {"prompt_template": prompt}
    if "criteria" in prompt:
        judge_params["template_variables"] = {"criteria": "Compare on accuracy."}
    return Judge(
        load_judge_config({"name": "pair", "judge_params": judge_params, "pairwise_judge_params": pair})
    )


def user_prompt(judge: Judge, row: dict[str, Any]) -> str:
    return judge.render(row)[-1].content


# ------------------------------------------------------------------------------------------ pointwise


@pytest.mark.parametrize(("path", "expected"), POINTWISE_TABLE)
def test_every_pointwise_variable(path: str, expected: str) -> None:
    judge = pointwise("<{{" + path + "}}>")
    assert user_prompt(judge, AGENT_ROW) == f"<{expected}>"


def test_the_same_values_from_plain_columns() -> None:
    row = {
        "messages": MESSAGES,
        "reference": "Paris",
        "response": RESPONSE,
        "tools_called": TOOLS,
        "output_messages": TRANSCRIPT,
        "system_instructions": "Be brief.",
    }
    template = "|".join("{{" + path + "}}" for path, _ in POINTWISE_TABLE)
    rendered = user_prompt(pointwise(template), row).split("|")  # no | in the values
    expected = dict(POINTWISE_TABLE)
    expected["input.system_instructions"] = "Be brief."
    assert rendered == [expected[path] for path, _ in POINTWISE_TABLE]


def test_a_text_input_column_is_the_last_input_message() -> None:
    judge = pointwise("{{log.input}}|{{input.all_messages}}|{input}|{{output.response}}")
    row = {"input": "What is 2+2?", "response": "4"}
    assert user_prompt(judge, row) == (
        "What is 2+2?|" + indented([{"role": "user", "content": "What is 2+2?"}]) + "|What is 2+2?|4"
    )
    table = Engine(judge, ScriptedBackend(lambda r: '{"judgment": "Yes"}')).run([row, row])
    assert table["jury.status"].to_pylist() == ["ok", "ok"]


def test_a_text_output_column_is_the_response() -> None:
    judge = pointwise("{{output.response}}|{{log.output}}|{output}")
    assert user_prompt(judge, {"input": "q", "output": "4"}) == "4|4|4"


# ------------------------------------------------------------------------------------------- pairwise

SIDE_TABLE = [
    ("output.response", "{text}"),
    ("output.tools_called", "{tools}"),
    ("output.messages", "{messages}"),
    ("output.error", ""),
    ("input.all_messages", "[]"),
    ("input.expected_output", ""),
    ("input.system_instructions", ""),
    ("log.input", ""),
    ("log.output", "{text}"),
    ("log.reference", ""),
    ("log.expected_output", ""),
    ("log.messages", "[]"),
]

PAIR_ROW: dict[str, Any] = {
    "question": "What is the capital of France?",
    "response_a": {"response": "Paris.", "tools_called": TOOLS, "messages": TRANSCRIPT},
    "response_b": "Lyon.",
}


def side_values(side: str) -> dict[str, str]:
    if side == "a":
        return {"text": "Paris.", "tools": indented(TOOLS), "messages": indented(TRANSCRIPT)}
    return {
        "text": "Lyon.",
        "tools": "[]",
        "messages": indented([{"role": "assistant", "content": "Lyon."}]),
    }


@pytest.mark.parametrize("side", ["a", "b"])
@pytest.mark.parametrize(("path", "expected"), SIDE_TABLE)
def test_every_pairwise_side_variable_in_both_orders(side: str, path: str, expected: str) -> None:
    other = "b" if side == "a" else "a"
    judge = pairwise("<{{response_" + side + "." + path + "}}>")
    first, second = judge.kind.start(PAIR_ROW, ["regex"]).requests
    assert first.messages[-1].content == "<" + expected.format(**side_values(side)) + ">"
    assert second.messages[-1].content == "<" + expected.format(**side_values(other)) + ">"


def test_question_and_criteria_in_a_pairwise_prompt() -> None:
    judge = pairwise(
        "{{criteria}}|{{question}}|{{response_a.output.response}}|{{response_b.output.response}}"
    )
    first, second = judge.kind.start(PAIR_ROW, ["regex"]).requests
    assert first.messages[-1].content == "Compare on accuracy.|What is the capital of France?|Paris.|Lyon."
    assert second.messages[-1].content == "Compare on accuracy.|What is the capital of France?|Lyon.|Paris."


# ---------------------------------------------------------------------------------------- criteria


def test_criteria_is_never_read_from_a_column() -> None:
    judge = pointwise("{{criteria}}")
    assert "criteria" not in judge.required_fields
    assert user_prompt(judge, {"criteria": "from the row", "response": "r"}) == (
        "The answer is factually correct."
    )


def test_criteria_without_criteria_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"\{\{criteria\}\}.*template_variables.criteria"):
        Judge(
            load_judge_config({"name": "j", "judge_params": {"prompt_template": "{{criteria}} {response}"}})
        )


def test_a_rubric_judges_criteria_fill_the_criteria_placeholder() -> None:
    config = load_judge_config(
        {
            "name": "r",
            "judge_params": {"prompt_template": "Criteria:\n{{criteria}}\nAnswer: {response}"},
            "rubric_judge_params": {
                "criteria": [
                    {"id": "accurate", "description": "States only true facts."},
                    {"id": "brief", "description": "Two sentences at most."},
                ]
            },
        }
    )
    prompt = user_prompt(Judge(config), {"response": "r"})
    assert "accurate (Yes or No): States only true facts." in prompt
    assert "brief (Yes or No): Two sentences at most." in prompt


def test_an_oumi_criteria_placeholder_is_still_a_column() -> None:
    judge = Judge(load_judge_config({"name": "j", "judge_params": {"prompt_template": "{criteria}"}}))
    assert "criteria" in judge.required_fields
    assert user_prompt(judge, {"criteria": "per row"}) == "per row"


# -------------------------------------------------------------------------------------- bare names

BARE = ["{{input}}", "{{output}}", "{{log}}", "{{response_a}}", "{{response_b}}"]


@pytest.mark.parametrize("bare", BARE)
def test_a_bare_object_name_stays_literal_in_a_pointwise_judge(
    bare: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="jurist"):
        judge = pointwise("before " + bare + " after {{output.response}}")
    row = {"input": "text input", "output": "text output", "response_a": "A", "log": "L", "response_b": "B"}
    assert user_prompt(judge, row) == f"before {bare} after text output"
    assert bare.strip("{}") not in judge.required_fields or bare == "{{output}}"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert bare in warnings[0].getMessage()
    assert "jury" in warnings[0].getMessage()


@pytest.mark.parametrize("bare", ["{{response_a}}", "{{response_b}}"])
def test_a_bare_side_name_stays_literal_in_a_pairwise_judge(bare: str) -> None:
    judge = pairwise("Shown: " + bare + " / {{response_a.output.response}}")
    first, _ = judge.kind.start(PAIR_ROW, ["regex"]).requests
    assert first.messages[-1].content == f"Shown: {bare} / Paris."


def test_one_warning_per_judge_for_all_its_bare_names(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="jurist"):
        judge = pointwise("{{input}} {{output}} {{input}} {{log}} {{output.response}}")
        backend = ScriptedBackend(lambda r: '{"judgment": "Yes"}')
        table = Engine(judge, backend).run([{"response": "r"}] * 3)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "{{input}}, {{output}}, {{log}}" in warnings[0]
    assert table["jury.status"].to_pylist() == ["ok"] * 3
    assert all(r.messages[-1].content == "{{input}} {{output}} {{input}} {{log}} r" for r in backend.requests)


def test_no_warning_without_bare_names(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="jurist"):
        pointwise("{{input.all_messages}} {input} {{output.response}}")
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


# ----------------------------------------------------------------------------------- errored targets


def answers_yes(request: GenerationRequest) -> str:
    return '{"judgment": "Yes"}'


def test_a_nested_output_error_is_an_errored_target_by_default() -> None:
    rows = [
        AGENT_ROW,
        {**AGENT_ROW, "output": {"response": "", "error": "agent crashed"}},
        {"messages": MESSAGES, "response": "r", "error": "timeout"},
    ]
    backend = ScriptedBackend(answers_yes)
    table = Engine(pointwise("{{output.response}}"), backend).run(rows)
    assert table["jury.status"].to_pylist() == ["ok", "target_error", "target_error"]
    assert table["jury.judgment"].to_pylist() == [True, None, None]
    assert "agent crashed" in table["jury.error"][1].as_py()
    assert "timeout" in table["jury.error"][2].as_py()
    assert len(backend.requests) == 1


def test_the_error_is_still_readable_in_a_prompt_when_errored_targets_are_judged() -> None:
    judge = pointwise("error: [{{output.error}}]", target_error_field=None)
    row = {**AGENT_ROW, "output": {"response": "", "error": "agent crashed"}}
    table = Engine(judge, ScriptedBackend(answers_yes)).run([row])
    assert table["jury.status"].to_pylist() == ["ok"]
    assert user_prompt(judge, row) == "error: [agent crashed]"


def test_a_named_error_field_replaces_the_default() -> None:
    judge = pointwise("{{output.response}}", target_error_field="failure")
    rows = [{**AGENT_ROW, "failure": "oom"}, {**AGENT_ROW, "output": {"response": "x", "error": "e"}}]
    table = Engine(judge, ScriptedBackend(answers_yes)).run(rows)
    assert table["jury.status"].to_pylist() == ["target_error", "ok"]


def test_an_errored_pairwise_side_object_is_not_judged() -> None:
    # a column of agent response objects, as evaluatorq's targets return them
    rows = [
        {**PAIR_ROW, "response_b": {"output": {"response": "Lyon.", "error": None}}},
        {**PAIR_ROW, "response_b": {"output": {"response": None, "error": "rate limited"}}},
    ]
    backend = ScriptedBackend(lambda r: '{"judgment": "A"}')
    table = Engine(pairwise("{{response_a.output.response}} {{response_b.output.response}}"), backend).run(
        rows
    )
    assert table["pair.status"].to_pylist() == ["ok", "target_error"]
    assert table["pair.winner"].to_pylist() == ["tie", "inconclusive"]
    assert "rate limited" in table["pair.error"][1].as_py()
    assert len(backend.requests) == 2


def test_a_side_object_without_a_response_is_missing_input() -> None:
    row = {**PAIR_ROW, "response_b": {"tools_called": []}}
    table = Engine(pairwise("{{response_b.output.response}}"), ScriptedBackend(answers_yes)).run([row])
    assert table["pair.status"].to_pylist() == ["missing_input"]
    assert "response_b.output.response" in table["pair.error"][0].as_py()


# ------------------------------------------------------------------------------------------ built-ins


def test_jury_pointwise_builtin_renders_the_default_template() -> None:
    config = load_judge_config(
        "jury/pointwise", {"judge_params.template_variables.criteria": "Names the right city."}
    )
    prompt = user_prompt(Judge(config), AGENT_ROW)
    assert "Names the right city." in prompt
    assert indented(MESSAGES) in prompt
    assert RESPONSE in prompt
    assert "Paris" in prompt.split("Expected output")[1]


def test_jury_pairwise_builtin_judges_both_orders() -> None:
    judge = Judge(load_judge_config("jury/pairwise"))
    first, second = judge.kind.start(PAIR_ROW, ["regex"]).requests
    assert "accuracy and correctness, helpfulness" in first.messages[-1].content
    assert first.messages[-1].content.index("Paris.") < first.messages[-1].content.index("Lyon.")
    assert second.messages[-1].content.index("Lyon.") < second.messages[-1].content.index("Paris.")
    table = Engine(judge, ScriptedBackend(lambda r: '{"explanation": "e", "judgment": "tie"}')).run(
        [PAIR_ROW]
    )
    assert table["pairwise.winner"].to_pylist() == ["tie"]


def test_the_oumi_form_reads_a_non_text_column_as_it_is() -> None:
    judge = pointwise("{output}|{{output.response}}|{input}|{{input.all_messages}}")
    assert user_prompt(judge, {"output": 42, "input": [1, 2]}) == "42|42|[1, 2]|[]"
