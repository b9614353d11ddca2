"""Completion text -> typed values and a status. Never raises for one row."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from jurist.answer.parsing import ParseResult, clean_completion, parse_completion
from jurist.answer.spec import OutputSpec
from jurist.answer.values import FieldError, convert_value
from jurist.config import load_judge_config
from jurist.judges.judge import Judge
from jurist.records import Completion


def make_judge(
    judgment_type: str = "BOOL",
    response_format: str = "JSON",
    scores: dict[str, Any] | None = None,
    explanation: bool = False,
) -> Judge:
    params: dict[str, Any] = {
        "prompt_template": "{request}",
        "judgment_type": judgment_type,
        "response_format": response_format,
        "include_explanation": explanation,
    }
    if scores is not None:
        params["judgment_scores"] = scores
    return Judge(load_judge_config({"judge_params": params}))


def make_spec(*args: Any, **kwargs: Any) -> OutputSpec:
    return make_judge(*args, **kwargs).spec


def as_json(raw: str) -> str:
    """A JSON answer whose judgment is the JSON text ``raw``."""
    return '{"judgment": ' + raw + "}"


def judgment(text: str, spec: OutputSpec) -> Any:
    result = parse_completion(text, spec)
    assert result.ok, result.error
    return result.values["judgment"]


def failure(text: str, spec: OutputSpec) -> str:
    result = parse_completion(text, spec)
    assert not result.ok
    assert result.values == {}
    assert result.error
    return result.error


RUBRIC_YAML = """\
judge_params:
  prompt_template: "[Question]: {question}\\n[Answer]: {answer}"
  response_format: FMT
rubric_judge_params:
  aggregation: WEIGHTED_MEAN
  criteria:
    - id: correctness
      description: The answer is factually correct.
      judgment_type: BOOL
      weight: 2.0
    - id: clarity
      description: How clearly the answer is written.
      judgment_type: ENUM
      judgment_scores:
        excellent: 1.0
        good: 0.5
        poor: 0.0
      include_explanation: false
"""


def rubric_judge(tmp_path: Path, fmt: str = "JSON") -> Judge:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC_YAML.replace("FMT", fmt), encoding="utf-8")
    return Judge(load_judge_config(path))


# ----------------------------------------------------------------------------------- judgment types


class TestBool:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ('"Yes"', True),
            ('"yes"', True),
            ('"YES"', True),
            ('"No"', False),
            ('"no"', False),
            ('"True"', True),
            ('"true"', True),
            ('"FALSE"', False),
            ('"False"', False),
            ("true", True),
            ("false", False),
            ('" Yes "', True),
            ('"Yes."', True),
        ],
    )
    def test_json(self, raw: str, expected: bool) -> None:
        assert judgment(as_json(raw), make_spec("BOOL")) is expected

    @pytest.mark.parametrize(
        ("raw", "expected"), [("Yes", True), ("no", False), ("True", True), ("false", False)]
    )
    def test_xml(self, raw: str, expected: bool) -> None:
        assert judgment(f"<judgment>{raw}</judgment>", make_spec("BOOL", "XML")) is expected

    @pytest.mark.parametrize("raw", ['"Maybe"', '"Y"', "1", "0", '""', '"Yes and No"', "[]"])
    def test_rejects(self, raw: str) -> None:
        error = failure(as_json(raw), make_spec("BOOL"))
        assert "judgment" in error


class TestInt:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [("4", 4), ('"4"', 4), ("4.0", 4), ('"4.0"', 4), ('" 7 "', 7), ("-3", -3), ("0", 0), ('"-12"', -12)],
    )
    def test_json(self, raw: str, expected: int) -> None:
        value = judgment(as_json(raw), make_spec("INT"))
        assert value == expected
        assert type(value) is int

    def test_xml(self) -> None:
        assert judgment("<judgment>5</judgment>", make_spec("INT", "XML")) == 5

    @pytest.mark.parametrize("raw", ["4.5", '"four"', "true", '"NaN"', '"inf"', '""'])
    def test_rejects(self, raw: str) -> None:
        assert "judgment" in failure(as_json(raw), make_spec("INT"))

    def test_label_set(self) -> None:
        spec = make_spec("INT", scores={"1": 0.0, "2": 0.5, "3": 1.0})
        assert judgment('{"judgment": 3}', spec) == 3
        assert judgment('{"judgment": "2"}', spec) == 2
        assert judgment('{"judgment": 1.0}', spec) == 1
        error = failure('{"judgment": 4}', spec)
        assert "judgment" in error
        assert "4" in error
        failure('{"judgment": 0}', spec)


class TestFloat:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [("0.5", 0.5), ('"0.25"', 0.25), ("1", 1.0), ("-2.5", -2.5), ('"3"', 3.0), ("1e-3", 0.001)],
    )
    def test_json(self, raw: str, expected: float) -> None:
        value = judgment(as_json(raw), make_spec("FLOAT"))
        assert value == pytest.approx(expected)
        assert type(value) is float

    def test_xml(self) -> None:
        assert judgment("<judgment> 0.75 </judgment>", make_spec("FLOAT", "XML")) == 0.75

    @pytest.mark.parametrize("raw", ['"high"', '"NaN"', '"Infinity"', "true", '""'])
    def test_rejects(self, raw: str) -> None:
        assert "judgment" in failure(as_json(raw), make_spec("FLOAT"))


class TestEnum:
    SCORES: ClassVar[dict[str, float | None]] = {"Excellent": 1.0, "good": 0.5, "poor": 0.0, "n/a": None}

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("Excellent", "Excellent"),
            ("excellent", "Excellent"),
            ("EXCELLENT", "Excellent"),
            ("good", "good"),
            ("Good", "good"),
            (" poor ", "poor"),
            ("N/A", "n/a"),
        ],
    )
    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_labels(self, response_format: str, raw: str, expected: str) -> None:
        spec = make_spec("ENUM", response_format, self.SCORES)
        text = as_json(f'"{raw}"') if response_format == "JSON" else f"<judgment>{raw}</judgment>"
        assert judgment(text, spec) == expected

    @pytest.mark.parametrize("raw", ["great", "goo", "good enough", "", "Excellent!"])
    def test_unknown_label(self, raw: str) -> None:
        error = failure(as_json(f'"{raw}"'), make_spec("ENUM", scores=self.SCORES))
        assert "judgment" in error
        assert "good" in error  # lists the labels

    def test_exact_match_wins_over_folded(self) -> None:
        spec = make_spec("ENUM", scores={"Good": 1.0, "good": 0.5})
        assert judgment('{"judgment": "good"}', spec) == "good"
        assert judgment('{"judgment": "Good"}', spec) == "Good"


class TestText:
    def test_json(self) -> None:
        spec = make_spec("TEXT")
        assert judgment('{"judgment": "  free text  "}', spec) == "free text"
        assert judgment('{"judgment": "multi\\nline"}', spec) == "multi\nline"
        assert judgment('{"judgment": 5}', spec) == "5"

    def test_xml(self) -> None:
        assert judgment("<judgment>a &amp; b</judgment>", make_spec("TEXT", "XML")) == "a & b"

    def test_rejects_objects(self) -> None:
        assert "judgment" in failure('{"judgment": {"a": 1}}', make_spec("TEXT"))
        failure('{"judgment": [1, 2]}', make_spec("TEXT"))


# ---------------------------------------------------------------------------------------- formats


class TestJson:
    def test_explanation_and_judgment(self) -> None:
        spec = make_spec("BOOL", explanation=True)
        result = parse_completion('{"explanation": "Paris is right.", "judgment": "Yes"}', spec)
        assert result == ParseResult(values={"explanation": "Paris is right.", "judgment": True})
        assert result.ok

    def test_extra_keys_ignored(self) -> None:
        assert judgment('{"judgment": "No", "confidence": 0.9}', make_spec("BOOL")) is False

    @pytest.mark.parametrize(
        "text",
        [
            'Here is my verdict: {"judgment": "Yes"} Hope that helps.',
            'I considered {this} and {that}.\n{"judgment": "Yes"}',
            '{"judgment": "Yes"}\nTrailing words.',
            '  \n{"judgment": "Yes"}\n  ',
        ],
    )
    def test_embedded_in_prose(self, text: str) -> None:
        assert judgment(text, make_spec("BOOL")) is True

    def test_pretty_printed(self) -> None:
        text = '{\n  "explanation": "ok",\n  "judgment": "No"\n}'
        assert parse_completion(text, make_spec("BOOL", explanation=True)).values == {
            "explanation": "ok",
            "judgment": False,
        }

    @pytest.mark.parametrize("text", ["no json here", '["Yes"]', '"Yes"', "{broken", "42"])
    def test_no_object(self, text: str) -> None:
        assert "JSON" in failure(text, make_spec("BOOL"))

    def test_missing_field_named(self) -> None:
        error = failure('{"judgment": "Yes"}', make_spec("BOOL", explanation=True))
        assert "explanation" in error

    def test_null_field_named(self) -> None:
        error = failure('{"explanation": null, "judgment": "Yes"}', make_spec("BOOL", explanation=True))
        assert "explanation" in error

    def test_rubric_missing_criterion_named(self, tmp_path: Path) -> None:
        spec = rubric_judge(tmp_path).spec
        error = failure('{"correctness_explanation": "x", "correctness": "Yes"}', spec)
        assert "clarity" in error
        assert "correctness" not in error.replace("clarity", "")

    def test_rubric_unknown_label_named(self, tmp_path: Path) -> None:
        spec = rubric_judge(tmp_path).spec
        error = failure('{"correctness_explanation": "x", "correctness": "Yes", "clarity": "superb"}', spec)
        assert "clarity" in error
        assert "superb" in error


class TestXml:
    def test_fields(self) -> None:
        spec = make_spec("BOOL", "XML", explanation=True)
        text = "<explanation>It is right.</explanation>\n<judgment>Yes</judgment>"
        assert parse_completion(text, spec).values == {"explanation": "It is right.", "judgment": True}

    def test_entities_unescaped(self) -> None:
        spec = make_spec("BOOL", "XML", explanation=True)
        text = (
            "<explanation>a &lt; b &amp;&amp; c &gt; d &quot;q&quot; &#39;s&#39;</explanation>"
            "<judgment>No</judgment>"
        )
        assert parse_completion(text, spec).values["explanation"] == "a < b && c > d \"q\" 's'"

    def test_entity_in_enum_label(self) -> None:
        spec = make_spec("ENUM", "XML", {"R&D": 1.0, "other": 0.0})
        assert judgment("<judgment>R&amp;D</judgment>", spec) == "R&D"

    def test_whitespace_and_prose_tolerated(self) -> None:
        spec = make_spec("BOOL", "XML", explanation=True)
        text = "Sure.\n<explanation>\n  multi\n  line\n</explanation>\n\n<judgment> no </judgment>\nDone."
        assert parse_completion(text, spec).values == {"explanation": "multi\n  line", "judgment": False}

    def test_missing_tag_named(self) -> None:
        error = failure("<judgment>Yes</judgment>", make_spec("BOOL", "XML", explanation=True))
        assert "explanation" in error

    def test_rubric(self, tmp_path: Path) -> None:
        spec = rubric_judge(tmp_path, "XML").spec
        text = (
            "<correctness_explanation>ok</correctness_explanation>\n"
            "<correctness>No</correctness>\n"
            "<clarity>GOOD</clarity>"
        )
        assert parse_completion(text, spec).values == {
            "correctness_explanation": "ok",
            "correctness": False,
            "clarity": "good",
        }
        assert "clarity" in failure(text.replace("GOOD", "meh"), spec)


class TestRaw:
    def test_bool_last_label_wins(self) -> None:
        spec = make_spec("BOOL", "RAW", explanation=True)
        result = parse_completion("No mistakes here, the answer is right.\nYes", spec)
        assert result.values == {"explanation": "No mistakes here, the answer is right.", "judgment": True}

    @pytest.mark.parametrize(
        ("text", "expected"), [("yes", True), ("NO", False), ("True", True), ("false", False)]
    )
    def test_bool_bare(self, text: str, expected: bool) -> None:
        assert judgment(text, make_spec("BOOL", "RAW")) is expected

    def test_bool_ignores_words_containing_labels(self) -> None:
        assert judgment("Nothing notable. Yesterday... No", make_spec("BOOL", "RAW")) is False

    def test_enum(self) -> None:
        spec = make_spec("ENUM", "RAW", {"good": 1.0, "poor": 0.0})
        assert judgment("Not good at all: poor", spec) == "poor"
        assert judgment("GOOD", spec) == "good"

    def test_numbers(self) -> None:
        assert judgment("I would rate it\n4", make_spec("INT", "RAW")) == 4
        assert judgment("Score: 0.75", make_spec("FLOAT", "RAW")) == 0.75

    def test_text(self) -> None:
        assert judgment("  A fine answer.  ", make_spec("TEXT", "RAW")) == "A fine answer."

    @pytest.mark.parametrize(
        ("judgment_type", "scores"), [("BOOL", None), ("INT", None), ("ENUM", {"a1": 1.0})]
    )
    def test_nothing_found(self, judgment_type: str, scores: Any) -> None:
        error = failure("I cannot decide.", make_spec(judgment_type, "RAW", scores))
        assert judgment_type in error


# -------------------------------------------------------------------------------- cleaning the text


class TestCleaning:
    @pytest.mark.parametrize(
        "text",
        [
            '```json\n{"judgment": "Yes"}\n```',
            '```\n{"judgment": "Yes"}\n```',
            '```JSON {"judgment": "Yes"}```',
            'Here you go:\n```json\n{"judgment": "Yes"}\n```\nAnything else?',
        ],
    )
    def test_code_fences(self, text: str) -> None:
        assert judgment(text, make_spec("BOOL")) is True

    def test_xml_in_fence(self) -> None:
        assert judgment("```xml\n<judgment>No</judgment>\n```", make_spec("BOOL", "XML")) is False

    @pytest.mark.parametrize(
        "text",
        [
            '<think>The answer might be {"judgment": "No"}.</think>{"judgment": "Yes"}',
            '<think>\nhmm\n</think>\n\n{"judgment": "Yes"}',
            '<THINK>No.</THINK>{"judgment": "Yes"}',
            '<think>a</think><think>No</think>{"judgment": "Yes"}',
        ],
    )
    def test_think_blocks_removed(self, text: str) -> None:
        assert judgment(text, make_spec("BOOL")) is True

    def test_think_block_in_xml_and_raw(self) -> None:
        assert judgment(
            "<think><judgment>No</judgment></think><judgment>Yes</judgment>", make_spec("BOOL", "XML")
        )
        assert judgment("<think>No, no, no.</think>Yes", make_spec("BOOL", "RAW")) is True

    def test_unterminated_think_is_a_parse_error(self) -> None:
        spec = make_spec("BOOL")
        error = failure('<think>Let me see. Maybe {"judgment": "No"} but', spec)
        assert error == "empty response"
        assert clean_completion("<think>still thinking") == ""

    def test_clean_completion(self) -> None:
        assert clean_completion('  <think>x</think>\n```json\n{"a": 1}\n```  ') == '{"a": 1}'
        assert clean_completion("plain") == "plain"

    def test_orphan_closing_think(self) -> None:
        text = 'The answer looks wrong, so {"judgment": "No"}? Checking again.\n</think>\n{"judgment": "Yes"}'
        assert judgment(text, make_spec("BOOL")) is True

    @pytest.mark.parametrize("text", ["", "   \n ", "<think>only thoughts</think>", "``` ```"])
    def test_empty(self, text: str) -> None:
        assert failure(text, make_spec("BOOL")) == "empty response"


# --------------------------------------------------------------------------------- convert_value


class TestConvertValue:
    def test_explanations_are_text(self) -> None:
        spec = make_spec("BOOL", explanation=True)
        field = spec.field("explanation")
        assert convert_value(field, "  why  ") == "why"
        assert convert_value(field, 3) == "3"

    def test_errors_name_the_field(self) -> None:
        field = make_spec("INT").field("judgment")
        with pytest.raises(FieldError, match="judgment"):
            convert_value(field, "many")
        with pytest.raises(FieldError, match="judgment"):
            convert_value(field, None)


class TestRoundTrip:
    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    @pytest.mark.parametrize(
        ("judgment_type", "scores", "value"),
        [
            ("BOOL", None, True),
            ("BOOL", None, False),
            ("INT", None, -7),
            ("INT", {"1": 0.0, "5": 1.0}, 5),
            ("FLOAT", None, 0.125),
            ("TEXT", None, 'a "quoted" <text> & more'),
            ("ENUM", {"a&b": 1.0, "c<d": 0.0}, "c<d"),
        ],
    )
    def test_render_then_parse(
        self, response_format: str, judgment_type: str, scores: Any, value: Any
    ) -> None:
        spec = make_spec(judgment_type, response_format, scores, explanation=True)
        values = {"explanation": 'why: "x" < y & z', "judgment": value}
        assert parse_completion(spec.render_answer(values), spec).values == values

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_rubric(self, tmp_path: Path, response_format: str) -> None:
        spec = rubric_judge(tmp_path, response_format).spec
        values = {"correctness_explanation": "Right.", "correctness": True, "clarity": "excellent"}
        assert parse_completion(spec.render_answer(values), spec).values == values


# ------------------------------------------------------------------------------- Judge.interpret


class TestInterpret:
    def test_ok(self, tmp_path: Path) -> None:
        judge = rubric_judge(tmp_path)
        out = judge.interpret(
            Completion(
                '{"correctness_explanation": "x", "correctness": "No", "clarity": "good"}',
                prompt_tokens=12,
                completion_tokens=20,
            )
        )
        assert out.status == "ok"
        assert out.ok
        assert out.error is None
        assert out.prompt_tokens == 12
        assert out.completion_tokens == 20
        assert out.aggregate_score == pytest.approx((2 * 0.0 + 1 * 0.5) / 3)

    @pytest.mark.parametrize(
        "text",
        [
            "I refuse to answer.",
            '{"correctness_explanation": "x", "correctness": "Yes"}',
            '{"correctness_explanation": "x", "correctness": "Perhaps", "clarity": "good"}',
            '{"correctness_explanation": "x", "correctness": "Yes", "clarity": "superb"}',
            "",
        ],
    )
    def test_parse_error_is_never_a_verdict(self, tmp_path: Path, text: str) -> None:
        judge = rubric_judge(tmp_path)
        out = judge.interpret(Completion(text, prompt_tokens=5, completion_tokens=7))
        assert out.status == "parse_error"
        assert not out.ok
        assert out.raw == text
        assert out.error
        assert out.aggregate_score is None
        assert out.score is None
        assert all(out.field_values.get(f.name) is None for f in judge.spec.fields)
        assert all(out.field_scores.get(f.name) is None for f in judge.spec.fields)
        assert out.prompt_tokens == 5
        assert out.completion_tokens == 7

    def test_parse_error_simple_judge(self) -> None:
        judge = make_judge("ENUM", scores={"Yes": 1.0, "No": 0.0}, explanation=True)
        out = judge.interpret(Completion('{"explanation": "x", "judgment": "Dunno"}'))
        assert out.status == "parse_error"
        assert "Dunno" in (out.error or "")
        assert out.score is None
        assert out.aggregate_score is None
        assert out.raw == '{"explanation": "x", "judgment": "Dunno"}'

    def test_parse_error_gives_none_for_every_field(self, tmp_path: Path) -> None:
        judge = rubric_judge(tmp_path)
        out = judge.interpret(Completion("not an answer"))
        names = [f.name for f in judge.spec.fields]
        assert out.field_values == dict.fromkeys(names)
        assert out.field_scores == dict.fromkeys(names)

    @pytest.mark.parametrize(
        ("finish_reason", "status"),
        [("length", "truncated"), ("too_long", "too_long"), ("error", "backend_error")],
    )
    def test_finish_reasons(self, tmp_path: Path, finish_reason: Any, status: str) -> None:
        judge = rubric_judge(tmp_path)
        text = '{"correctness_explanation": "x", "correctness": "Yes", "clarity": "good"}'
        out = judge.interpret(Completion(text, finish_reason=finish_reason, prompt_tokens=3))
        assert out.status == status
        assert out.error
        assert out.aggregate_score is None
        assert out.score is None
        assert all(out.field_values.get(f.name) is None for f in judge.spec.fields)
        assert out.prompt_tokens == 3

    def test_truncated_keeps_text_and_names_budget(self, tmp_path: Path) -> None:
        judge = rubric_judge(tmp_path)
        out = judge.interpret(Completion('{"correctness_explanation": "a very lo', finish_reason="length"))
        assert out.status == "truncated"
        assert out.raw == '{"correctness_explanation": "a very lo'
        assert str(judge.max_tokens) in (out.error or "")

    def test_backend_error_message_kept(self) -> None:
        out = make_judge().interpret(Completion("", finish_reason="error", error="CUDA out of memory"))
        assert out.status == "backend_error"
        assert out.error == "CUDA out of memory"

    def test_too_long_has_no_raw(self) -> None:
        out = make_judge().interpret(Completion("", finish_reason="too_long"))
        assert out.status == "too_long"
        assert out.raw is None
        assert out.error


def test_code_fence_inside_an_explanation_does_not_hide_the_answer() -> None:
    from jurist.answer.fields import OutputField
    from jurist.answer.spec import OutputSpec
    from jurist.config import JudgmentType, ResponseFormat

    spec = OutputSpec(
        (
            OutputField("explanation", "explanation", JudgmentType.TEXT),
            OutputField("judgment", "judgment", JudgmentType.BOOL, labels=("Yes", "No")),
        ),
        ResponseFormat.XML,
    )
    text = (
        "<explanation>It printed ```python\nprint(1)\n``` as asked.</explanation>\n<judgment>Yes</judgment>"
    )
    result = parse_completion(text, spec)
    assert result.ok and result.values["judgment"] is True
    assert "```python" in result.values["explanation"]
    fenced = "```xml\n<explanation>fine</explanation>\n<judgment>No</judgment>\n```"
    assert parse_completion(fenced, spec).values["judgment"] is False
