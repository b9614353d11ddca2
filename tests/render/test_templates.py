"""Prompt templates: ``{name}`` placeholders, the ``{{dotted.path}}`` namespace, MissingValue and
lenient rendering."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from jurist.config import load_judge_config
from jurist.config.templates import MissingValue, Placeholder, Template, lookup, placeholders_in
from jurist.judges.judge import Judge
from jurist.render.namespace import build_namespace


def render(text: str, row: dict[str, Any], notes: list[str] | None = None) -> str:
    return Template(text).render(build_namespace(row), notes)


def judge_from_yaml(tmp_path: Path, prompt_template: str, **extra: str) -> Judge:
    lines = ["judge_params:", "  prompt_template: |"]
    lines += [f"    {line}" for line in prompt_template.splitlines()]
    for key, value in extra.items():
        lines.append(f"  {key}: {json.dumps(value)}")
    path = tmp_path / "judge.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Judge(load_judge_config(path))


# ------------------------------------------------------------------------------------- {name} form


class TestNamePlaceholders:
    def test_filled_from_row(self) -> None:
        assert (
            Template("Q: {request}\nA: {response}").render({"request": "2+2?", "response": "4"})
            == "Q: 2+2?\nA: 4"
        )

    def test_same_placeholder_twice(self) -> None:
        assert Template("{a} and {a}").render({"a": "x"}) == "x and x"

    def test_names(self) -> None:
        template = Template("{request} {response} {{input.expected_output}} {{ log.input }}")
        assert template.names == {"request", "response", "input", "log"}
        assert placeholders_in("{request} {response} {{input.expected_output}}") == {
            "request",
            "response",
            "input",
        }

    def test_placeholder_objects(self) -> None:
        placeholders = Template("{a} {{b.c}}").placeholders
        assert placeholders == (
            Placeholder(("a",), False, "{a}"),
            Placeholder(("b", "c"), True, "{{b.c}}"),
        )
        assert placeholders[1].root == "b"

    @pytest.mark.parametrize(
        "text",
        [
            '{"judgment": "Yes"}',
            '{"explanation": "...", "judgment": "No"}',
            "{ request }",
            "{1abc}",
            "{a-b}",
            "{a.b}",
            "{}",
            "{ }",
            "function() { return 1; }",
            "set {x, y}",
            "{{ not a path }}",
            "{{1a}}",
            "{'quoted'}",
        ],
    )
    def test_only_identifiers_are_placeholders(self, text: str) -> None:
        template = Template(text)
        assert template.placeholders == ()
        assert template.render({}) == text
        assert template.render_lenient({}) == text

    def test_json_braces_survive_next_to_placeholders(self) -> None:
        text = 'Answer like {"judgment": "Yes"} about {request}.'
        assert Template(text).names == {"request"}
        assert Template(text).render({"request": "Q"}) == 'Answer like {"judgment": "Yes"} about Q.'

    def test_nested_json_example(self) -> None:
        text = 'Schema: {"type": "object", "properties": {"judgment": {"enum": ["Yes", "No"]}}}\n{response}'
        assert Template(text).render({"response": "R"}).endswith('["Yes", "No"]}}}\nR')

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            ("text", "text"),
            ("", ""),
            (0, "0"),
            (42, "42"),
            (1.5, "1.5"),
            (True, "true"),
            (False, "false"),
            ([1, "two"], '[1, "two"]'),
            ({"k": "é"}, '{"k": "é"}'),
        ],
    )
    def test_value_types(self, value: Any, shown: str) -> None:
        assert Template("<{v}>").render({"v": value}) == f"<{shown}>"

    def test_values_are_not_reinterpreted(self) -> None:
        # A value that itself looks like a placeholder is inserted as is.
        assert Template("{a}").render({"a": "{b}", "b": "no"}) == "{b}"

    def test_text_without_placeholders(self) -> None:
        assert Template("plain").render({}) == "plain"
        assert Template("").render({}) == ""

    def test_render_does_not_mutate_row(self) -> None:
        row = {"request": "q", "messages": [{"role": "user", "content": "hi"}]}
        snapshot = copy.deepcopy(row)
        render("{request} {{log.input}} {{input.all_messages}}", row)
        Template("{request}").render(row)
        assert row == snapshot


# ------------------------------------------------------------------------------------ MissingValue


class TestMissingValue:
    @pytest.mark.parametrize("row", [{}, {"request": None}, {"other": "x"}])
    def test_absent_or_null(self, row: dict[str, Any]) -> None:
        with pytest.raises(MissingValue) as info:
            Template("Q: {request}").render(row)
        assert info.value.placeholder == "request"
        assert "request" in str(info.value)
        assert isinstance(info.value, LookupError)

    def test_first_missing_is_named(self) -> None:
        with pytest.raises(MissingValue) as info:
            Template("{a} {b} {c}").render({"a": 1})
        assert info.value.placeholder == "b"

    def test_dotted_missing_names_the_path(self) -> None:
        with pytest.raises(MissingValue) as info:
            render("{{input.city}}", {"request": "q"})  # no such value
        assert info.value.placeholder == "input.city"

    def test_list_index_out_of_range(self) -> None:
        with pytest.raises(MissingValue) as info:
            render("{{messages.3.content}}", {"messages": [{"role": "user", "content": "hi"}]})
        assert info.value.placeholder == "messages.3.content"

    def test_empty_string_and_falsy_values_are_present(self) -> None:
        assert Template("[{a}|{b}|{c}]").render({"a": "", "b": 0, "c": False}) == "[|0|false]"

    def test_judge_render_raises_for_missing_column(self, tmp_path: Path) -> None:
        judge = judge_from_yaml(tmp_path, "{request}\n{response}")
        with pytest.raises(MissingValue) as info:
            judge.render({"request": "q"})
        assert info.value.placeholder == "response"


class TestRenderLenient:
    def test_absent_and_null_are_empty(self) -> None:
        template = Template("[{a}|{b}|{{c.d}}|{e}]")
        assert template.render_lenient({"a": None, "e": "x"}) == "[|||x]"

    def test_present_values_as_in_render(self) -> None:
        template = Template("{a} {b} {c}")
        row = {"a": "x", "b": [1], "c": True}
        assert template.render_lenient(row) == template.render(row) == "x [1] true"

    def test_few_shot_examples_render_leniently(self, tmp_path: Path) -> None:
        judge = judge_from_yaml(
            tmp_path,
            "Q: {request}\nA: {response}",
            examples=[{"response": "Paris", "judgment": "Yes"}],  # type: ignore[arg-type]
        )
        assert judge.prompt.examples[0].content == "Q: \nA: Paris\n"


class TestSubstitute:
    def test_replaces_only_given_names(self) -> None:
        template = Template("{fmt} {request} {{fmt}} {{fmt.name}}").substitute({"fmt": "JSON"})
        assert template.text == "JSON {request} JSON {{fmt.name}}"
        assert template.names == {"request", "fmt"}
        assert template.placeholders[-1].dotted is True

    def test_returns_new_template(self) -> None:
        original = Template("{a}")
        replaced = original.substitute({"a": "x"})
        assert original.text == "{a}"
        assert replaced.text == "x"
        assert replaced.placeholders == ()

    def test_json_value_survives(self) -> None:
        template = Template("{shape} {request}").substitute({"shape": '{"judgment": "Yes"}'})
        assert template.render({"request": "q"}) == '{"judgment": "Yes"} q'


# --------------------------------------------------------------------------------- {{dotted.path}}


CHAT_ROW: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
    "response": "The capital of France is Paris.",
    "expected_output": "Paris",
    "system_instructions": "Answer in English.",
    "tools_called": [{"name": "search", "arguments": {"q": "France"}}],
}


class TestNamespace:
    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("input.expected_output", "Paris"),
            ("input.system_instructions", "Answer in English."),
            ("input.all_messages", json.dumps(CHAT_ROW["messages"], indent=2)),
            ("output.response", "The capital of France is Paris."),
            (
                "output.tools_called",  # evaluatorq's shape: name, arguments, result, id
                json.dumps(
                    [{"name": "search", "arguments": {"q": "France"}, "result": None, "id": ""}], indent=2
                ),
            ),
            (
                "output.messages",  # the text, then the tool-call turn
                json.dumps(
                    [
                        {"role": "assistant", "content": "The capital of France is Paris."},
                        {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {
                                    "id": "",
                                    "type": "function",
                                    "function": {"name": "search", "arguments": {"q": "France"}},
                                }
                            ],
                            "result": None,
                        },
                    ],
                    indent=2,
                ),
            ),
            ("output.error", ""),
            ("log.input", "What is the capital of France?"),
            ("log.output", "The capital of France is Paris."),
            ("log.reference", "Paris"),
            ("log.expected_output", "Paris"),
            ("log.messages", json.dumps(CHAT_ROW["messages"], indent=2)),
            ("messages.1.content", "What is the capital of France?"),
            ("messages[1].content", "What is the capital of France?"),
            ("messages[-2].role", "system"),
            ("input.all_messages[-1].content", "What is the capital of France?"),
            ("messages.0.role", "system"),
            ("response", "The capital of France is Paris."),
        ],
    )
    def test_paths(self, path: str, expected: str) -> None:
        assert render("{{" + path + "}}", CHAT_ROW) == expected

    def test_spaces_inside_braces(self) -> None:
        assert render("{{ input.expected_output }}|{{output.response }}", CHAT_ROW) == (
            "Paris|The capital of France is Paris."
        )

    def test_documented_empty_defaults(self) -> None:
        row = {"response": "r"}
        assert (
            render("[{{input.expected_output}}|{{input.system_instructions}}|{{output.error}}]", row)
            == "[||]"
        )
        assert render("{{input.all_messages}}|{{output.tools_called}}", row) == "[]|[]"
        assert render("{{log.reference}}|{{log.expected_output}}|{{log.messages}}", row) == "||[]"

    def test_reference_column_is_expected_output(self) -> None:
        ns = build_namespace({"reference": "Paris", "response": "r"})
        assert ns["input"]["expected_output"] == "Paris"
        assert ns["log"]["reference"] == "Paris"

    def test_all_messages_column(self) -> None:
        ns = build_namespace({"all_messages": [{"role": "user", "content": "hi"}]})
        assert ns["input"]["all_messages"] == [{"role": "user", "content": "hi"}]
        assert ns["log"]["input"] == "hi"

    @pytest.mark.parametrize("column", ["question", "request", "prompt"])
    def test_log_input_falls_back_to_question_columns(self, column: str) -> None:
        assert render("{{log.input}}", {column: "Why?", "response": "r"}) == "Why?"

    def test_log_input_prefers_last_message(self) -> None:
        row = {"question": "ignored", "messages": [{"role": "user", "content": "last"}]}
        assert render("{{log.input}}", row) == "last"

    def test_output_messages_column(self) -> None:
        turns = [{"role": "assistant", "content": "thinking"}, {"role": "assistant", "content": "Paris"}]
        ns = build_namespace({"response": "Paris", "output_messages": turns})
        assert ns["output"]["messages"] == turns

    def test_error_column(self) -> None:
        assert render("{{output.error}}", {"error": "timeout"}) == "timeout"

    def test_absent_response_is_empty_as_in_evaluatorq(self) -> None:
        for path in ("output.response", "log.output", "log.input"):
            assert render("<{{" + path + "}}>", {"expected_output": "x"}) == "<>"

    def test_row_columns_stay_available(self) -> None:
        ns = build_namespace({"request": "q", "custom": 3})
        assert ns["request"] == "q"
        assert ns["custom"] == 3

    def test_existing_namespace_objects_kept(self) -> None:
        row = {
            "input": {"expected_output": "given"},
            "output": {"response": "mine"},
            "log": {"input": "logged"},
        }
        assert (
            render("{{input.expected_output}}|{{output.response}}|{{log.input}}", row) == "given|mine|logged"
        )

    def test_does_not_mutate_row(self) -> None:
        row = copy.deepcopy(CHAT_ROW)
        build_namespace(row)
        assert row == CHAT_ROW
        assert "input" not in row

    @pytest.mark.parametrize("path", ["input", "output", "log", " input "])
    def test_object_left_literal_with_note(self, path: str) -> None:
        notes: list[str] = []
        text = "before {{" + path + "}} after"
        assert render(text, CHAT_ROW, notes) == text
        assert len(notes) == 1
        assert "{{" + path + "}}" in notes[0]
        assert "literal" in notes[0]

    def test_object_literal_without_notes_list(self) -> None:
        assert render("{{input}}", CHAT_ROW) == "{{input}}"

    def test_object_column_via_dotted_form_is_indented_json(self) -> None:
        notes: list[str] = []
        assert render("{{meta}}", {"meta": {"a": 1, "b": True}}, notes) == '{\n  "a": 1,\n  "b": true\n}'
        assert notes == []
        # the {name} form (Oumi's) renders the same object as compact JSON
        assert render("{meta}", {"meta": {"a": 1}}) == '{"a": 1}'
        assert render("{{flag}}|{flag}", {"flag": True}) == "True|true"

    def test_index_forms_that_stay_literal_are_listed(self) -> None:
        template = Template("{{messages[ 0]}} {{messages[0]}} {{a.b[x]}} {{ plain text }}")
        assert template.unread == ("{{messages[ 0]}}", "{{a.b[x]}}")
        assert template.render({"messages": ["hi"]}).startswith("{{messages[ 0]}} hi ")

    def test_dotted_scalar_is_rendered(self) -> None:
        notes: list[str] = []
        assert render("{{request}}", {"request": "q"}, notes) == "q"
        assert notes == []

    def test_judge_renders_namespace(self, tmp_path: Path) -> None:
        judge = judge_from_yaml(
            tmp_path,
            "Question: {{log.input}}\nReference: {{input.expected_output}}\nAnswer: {{output.response}}",
        )
        messages = judge.render(CHAT_ROW)
        assert messages[-1].content == (
            "Question: What is the capital of France?\n"
            "Reference: Paris\n"
            "Answer: The capital of France is Paris.\n"
        )
        assert judge.required_fields >= {"log", "input", "output"}

    @pytest.mark.parametrize("column", ["input", "output", "log"])
    def test_row_text_column_named_like_a_namespace_root(self, column: str) -> None:
        row = {column: "What is 2+2?", "response": "4"}
        assert render("{" + column + "}", row) == "What is 2+2?"


class TestLookup:
    def test_dicts_and_lists(self) -> None:
        data = {"a": {"b": [{"c": 1}, {"c": 2}]}}
        assert lookup(data, ("a", "b", "1", "c")) == 2
        assert lookup(data, ("a", "b", "0")) == {"c": 1}

    @pytest.mark.parametrize(
        "path", [("x",), ("a", "x"), ("a", "b", "5"), ("a", "b", "first"), ("a", "b", "0", "c", "d")]
    )
    def test_missing_steps_give_none(self, path: tuple[str, ...]) -> None:
        assert lookup({"a": {"b": [{"c": 1}]}}, path) is None
