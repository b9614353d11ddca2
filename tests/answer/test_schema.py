"""Output schemas: field order, JSON schema, the guided-decoding regex, the token bound, instructions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurist.answer.fields import BOOL_LABELS, labels_for
from jurist.answer.spec import OutputSpec
from jurist.answer.values import MAX_FRACTION_DIGITS, MAX_INT_DIGITS
from jurist.config import JudgmentType, ResponseFormat, load_judge_config
from jurist.judges.judge import Judge
from jurist.records import Constraint

CLEF = "𝄞"  # 4 bytes in UTF-8


def make_spec(
    judgment_type: str = "BOOL",
    response_format: str = "JSON",
    scores: dict[str, Any] | None = None,
    explanation: bool = True,
    cap: int = 400,
    guided: bool = True,
) -> OutputSpec:
    params: dict[str, Any] = {
        "prompt_template": "{request}",
        "judgment_type": judgment_type,
        "response_format": response_format,
        "include_explanation": explanation,
        "max_explanation_chars": cap,
        "use_guided_decoding": guided,
    }
    if scores is not None:
        params["judgment_scores"] = scores
    return Judge(load_judge_config({"judge_params": params})).spec


RUBRIC_YAML = """\
judge_params:
  prompt_template: "{question} {answer}"
  response_format: FMT
  max_explanation_chars: CAP
rubric_judge_params:
  criteria:
    - id: correct
      description: Is it correct?
      weight: 2
    - id: clarity
      description: How clear is it?
      judgment_type: ENUM
      judgment_scores: {excellent: 1.0, good: 0.5, poor: 0.0, n_a: null}
      include_explanation: false
    - id: depth
      description: Depth from 1 to 5.
      judgment_type: INT
      judgment_scores: {1: 0.0, 3: 0.5, 5: 1.0}
    - id: confidence
      description: Your confidence.
      judgment_type: FLOAT
      include_explanation: false
    - id: summary
      description: One-line summary.
      judgment_type: TEXT
"""


def rubric_spec(tmp_path: Path, fmt: str = "JSON", cap: int = 400) -> OutputSpec:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC_YAML.replace("FMT", fmt).replace("CAP", str(cap)), encoding="utf-8")
    return Judge(load_judge_config(path)).spec


RUBRIC_FIELDS = [
    "correct_explanation",
    "correct",
    "clarity",
    "depth_explanation",
    "depth",
    "confidence",
    "summary_explanation",
    "summary",
]

RUBRIC_VALUES: dict[str, Any] = {
    "correct_explanation": 'It says "4" \\ right',
    "correct": True,
    "clarity": "good",
    "depth_explanation": "Covers <all> & more.",
    "depth": 3,
    "confidence": 0.75,
    "summary_explanation": "Short.",
    "summary": "Fine answer, nothing missing.",
}


def matches(spec: OutputSpec, text: str) -> bool:
    pattern = spec.regex()
    assert pattern is not None
    return re.fullmatch(pattern, text) is not None


# ----------------------------------------------------------------------------------------- fields


class TestFields:
    def test_simple_explanation_first(self) -> None:
        spec = make_spec(explanation=True)
        assert [f.name for f in spec.fields] == ["explanation", "judgment"]
        assert [f.kind for f in spec.fields] == ["explanation", "judgment"]
        assert [f.name for f in spec.judgment_fields] == ["judgment"]

    def test_simple_without_explanation(self) -> None:
        spec = make_spec(explanation=False)
        assert [f.name for f in spec.fields] == ["judgment"]

    def test_rubric_order(self, tmp_path: Path) -> None:
        spec = rubric_spec(tmp_path)
        assert [f.name for f in spec.fields] == RUBRIC_FIELDS
        assert [f.name for f in spec.judgment_fields] == [
            "correct",
            "clarity",
            "depth",
            "confidence",
            "summary",
        ]
        assert spec.field("depth_explanation").criterion == "depth"
        assert spec.field("depth_explanation").kind == "explanation"
        assert spec.field("depth").description == "Depth from 1 to 5."
        with pytest.raises(KeyError):
            spec.field("clarity_explanation")

    def test_rubric_order_follows_yaml_not_alphabet(self) -> None:
        config = load_judge_config(
            {
                "judge_params": {"prompt_template": "{q}"},
                "rubric_judge_params": {
                    "criteria": [
                        {"id": "zeta", "description": "z", "include_explanation": False},
                        {"id": "alpha", "description": "a"},
                        {"id": "mid", "description": "m", "include_explanation": False},
                    ]
                },
            }
        )
        names = [f.name for f in Judge(config).spec.fields]
        assert names == ["zeta", "alpha_explanation", "alpha", "mid"]

    def test_labels(self, tmp_path: Path) -> None:
        spec = rubric_spec(tmp_path)
        assert spec.field("correct").labels == BOOL_LABELS == ("Yes", "No")
        assert spec.field("clarity").labels == ("excellent", "good", "poor", "n_a")
        assert spec.field("depth").labels == ("1", "3", "5")
        assert spec.field("confidence").labels is None
        assert spec.field("summary").labels is None
        assert spec.field("clarity").scores == {"excellent": 1.0, "good": 0.5, "poor": 0.0, "n_a": None}

    def test_labels_for(self) -> None:
        assert labels_for(JudgmentType.BOOL, None) == ("Yes", "No")
        assert labels_for(JudgmentType.ENUM, {"a": 1.0, "b": None}) == ("a", "b")
        assert labels_for(JudgmentType.INT, {"1": 0.0, "2": 1.0}) == ("1", "2")
        assert labels_for(JudgmentType.INT, None) is None
        assert labels_for(JudgmentType.FLOAT, {"0.5": 1.0}) is None
        assert labels_for(JudgmentType.TEXT, None) is None

    def test_arrow_kinds(self, tmp_path: Path) -> None:
        spec = rubric_spec(tmp_path)
        kinds = {f.name: f.arrow_kind for f in spec.judgment_fields}
        assert kinds == {
            "correct": "bool",
            "clarity": "string",
            "depth": "int64",
            "confidence": "float64",
            "summary": "string",
        }


# ------------------------------------------------------------------------------------ JSON schema


class TestJsonSchema:
    def test_bool(self) -> None:
        assert make_spec("BOOL").json_schema() == {
            "type": "object",
            "properties": {
                "explanation": {"type": "string", "maxLength": 400},
                "judgment": {"type": "string", "enum": ["Yes", "No"]},
            },
            "required": ["explanation", "judgment"],
            "additionalProperties": False,
        }

    @pytest.mark.parametrize(
        ("judgment_type", "scores", "expected"),
        [
            (
                "ENUM",
                {"good": 1.0, "bad": 0.0, "n/a": None},
                {"type": "string", "enum": ["good", "bad", "n/a"]},
            ),
            ("INT", None, {"type": "integer"}),
            ("INT", {"1": 0.0, "2": 0.5, "3": 1.0}, {"type": "integer", "enum": [1, 2, 3]}),
            ("FLOAT", None, {"type": "number"}),
            ("FLOAT", {"0.5": 1.0}, {"type": "number"}),
            ("TEXT", None, {"type": "string", "maxLength": 123}),
        ],
    )
    def test_judgment_types(
        self, judgment_type: str, scores: dict[str, Any] | None, expected: dict[str, Any]
    ) -> None:
        schema = make_spec(judgment_type, scores=scores, explanation=False, cap=123).json_schema()
        assert schema["properties"] == {"judgment": expected}
        assert schema["required"] == ["judgment"]

    def test_rubric(self, tmp_path: Path) -> None:
        schema = rubric_spec(tmp_path, cap=50).json_schema()
        assert list(schema["properties"]) == RUBRIC_FIELDS
        assert schema["required"] == RUBRIC_FIELDS
        assert schema["additionalProperties"] is False
        for name in ("correct_explanation", "depth_explanation", "summary_explanation", "summary"):
            assert schema["properties"][name] == {"type": "string", "maxLength": 50}
        assert schema["properties"]["clarity"]["enum"] == ["excellent", "good", "poor", "n_a"]
        assert schema["properties"]["depth"] == {"type": "integer", "enum": [1, 3, 5]}
        assert schema["properties"]["confidence"] == {"type": "number"}

    def test_is_json_serialisable(self, tmp_path: Path) -> None:
        json.dumps(rubric_spec(tmp_path).json_schema())


# ------------------------------------------------------------------------------------------ regex

ANSWER_CASES = [
    ("BOOL", None, True),
    ("BOOL", None, False),
    ("BOOL", None, "yes"),
    ("INT", None, 0),
    ("INT", None, -42),
    ("INT", None, 4.0),
    ("INT", None, 999_999_999),
    ("INT", {"1": 0.0, "10": 1.0}, 10),
    ("INT", {"1": 0.0, "10": 1.0}, 1),
    ("FLOAT", None, 0.25),
    ("FLOAT", None, 3.0),
    ("FLOAT", None, -0.5),
    ("FLOAT", None, 0),
    ("TEXT", None, 'He said "hi" \\ <b> & done\nnext\tline'),
    ("TEXT", None, ""),
    ("ENUM", {"good": 1.0, "bad": 0.0}, "bad"),
    ("ENUM", {"a&b": 1.0, "c<d>": 0.0, 'say "x"': None, "slash\\": 0.5}, "a&b"),
    ("ENUM", {"a&b": 1.0, "c<d>": 0.0, 'say "x"': None, "slash\\": 0.5}, "c<d>"),
    ("ENUM", {"a&b": 1.0, "c<d>": 0.0, 'say "x"': None, "slash\\": 0.5}, 'say "x"'),
    ("ENUM", {"a&b": 1.0, "c<d>": 0.0, 'say "x"': None, "slash\\": 0.5}, "slash\\"),
    ("ENUM", {"très bien": 1.0, "bof": 0.0}, "très bien"),
    ("ENUM", {"good": 1.0, "very good": 1.0, "good.": 0.0}, "very good"),
]


class TestRegex:
    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    @pytest.mark.parametrize("explanation", [True, False])
    @pytest.mark.parametrize(("judgment_type", "scores", "value"), ANSWER_CASES)
    def test_rendered_answer_matches(
        self, response_format: str, explanation: bool, judgment_type: str, scores: Any, value: Any
    ) -> None:
        spec = make_spec(judgment_type, response_format, scores, explanation)
        values = {"explanation": 'Because 𝄞 "quoted" <tag> & ok.', "judgment": value}
        answer = spec.render_answer(values)
        assert matches(spec, answer), answer

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_rubric_answer_matches(self, tmp_path: Path, response_format: str) -> None:
        spec = rubric_spec(tmp_path, response_format)
        answer = spec.render_answer(RUBRIC_VALUES)
        assert matches(spec, answer), answer

    def test_exact_json_shape(self) -> None:
        spec = make_spec("BOOL")
        assert spec.render_answer({"explanation": "ok", "judgment": True}) == (
            '{"explanation": "ok", "judgment": "Yes"}'
        )

    def test_exact_xml_shape(self) -> None:
        spec = make_spec("BOOL", "XML")
        assert spec.render_answer({"explanation": "a < b", "judgment": False}) == (
            "<explanation>a &lt; b</explanation>\n<judgment>No</judgment>"
        )

    @pytest.mark.parametrize(
        "answer",
        [
            '{"explanation":"ok","judgment":"Yes"}',
            '{"explanation": "ok","judgment": "Yes"}',
            '{ "explanation": "ok", "judgment": "Yes" }',
            '{"explanation": "ok",  "judgment": "Yes"}',
            '{\n  "explanation": "ok",\n  "judgment": "Yes"\n}',
            ' {"explanation": "ok", "judgment": "Yes"}',
            '{"explanation": "ok", "judgment": "Yes"}\n',
            '{"explanation" : "ok", "judgment": "Yes"}',
        ],
    )
    def test_json_rejects_whitespace_variants(self, answer: str) -> None:
        spec = make_spec("BOOL")
        assert matches(spec, '{"explanation": "ok", "judgment": "Yes"}')
        assert not matches(spec, answer)

    @pytest.mark.parametrize(
        "answer",
        [
            "<explanation>ok</explanation><judgment>Yes</judgment>",
            "<explanation>ok</explanation>\n\n<judgment>Yes</judgment>",
            "<explanation>ok</explanation>\n<judgment> Yes</judgment>",
            "<explanation>ok</explanation>\n<judgment>Yes </judgment>",
            "<explanation>ok</explanation>\n<judgment>Yes</judgment>\n",
            " <explanation>ok</explanation>\n<judgment>Yes</judgment>",
        ],
    )
    def test_xml_rejects_whitespace_variants(self, answer: str) -> None:
        spec = make_spec("BOOL", "XML")
        assert matches(spec, "<explanation>ok</explanation>\n<judgment>Yes</judgment>")
        assert not matches(spec, answer)

    @pytest.mark.parametrize(
        "answer",
        [
            '{"judgment": "Yes"}',  # missing explanation
            '{"explanation": "ok"}',  # missing judgment
            '{"judgment": "Yes", "explanation": "ok"}',  # wrong order
            '{"explanation": "ok", "judgment": "Yes", "extra": 1}',  # unknown field
            '{"explanation": "ok", "judgment": "Maybe"}',  # unknown label
            '{"explanation": "ok", "judgment": "yes"}',  # labels are exact
            '{"explanation": "ok", "judgment": true}',  # labels, not JSON booleans
            '{"explanation": "o"k", "judgment": "Yes"}',  # unescaped quote
            '{"explanation": "ok\n", "judgment": "Yes"}',  # raw control character
            "",
        ],
    )
    def test_json_rejects_malformed(self, answer: str) -> None:
        assert not matches(make_spec("BOOL"), answer)

    @pytest.mark.parametrize(
        "answer",
        [
            "<judgment>Yes</judgment>",
            "<explanation>ok</explanation>",
            "<judgment>Yes</judgment>\n<explanation>ok</explanation>",
            "<explanation>ok</explanation>\n<judgment>Maybe</judgment>",
            "<explanation>a < b</explanation>\n<judgment>Yes</judgment>",
            "<explanation>ok</explanation>\n<verdict>Yes</verdict>",
        ],
    )
    def test_xml_rejects_malformed(self, answer: str) -> None:
        assert not matches(make_spec("BOOL", "XML"), answer)

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_unknown_enum_label_rejected(self, response_format: str) -> None:
        spec = make_spec("ENUM", response_format, {"good": 1.0, "bad": 0.0}, explanation=False)
        assert matches(spec, spec.render_answer({"judgment": "good"}))
        assert not matches(spec, spec.render_answer({"judgment": "great"}))
        assert not matches(spec, spec.render_answer({"judgment": "goo"}))
        assert not matches(spec, spec.render_answer({"judgment": "Good"}))

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_int_label_set_enforced(self, response_format: str) -> None:
        spec = make_spec("INT", response_format, {"1": 0.0, "2": 0.5, "3": 1.0}, explanation=False)
        for ok in (1, 2, 3):
            assert matches(spec, spec.render_answer({"judgment": ok}))
        for bad in (0, 4, 12, -1):
            assert not matches(spec, spec.render_answer({"judgment": bad}))
        if response_format == "JSON":
            assert not matches(spec, '{"judgment": "2"}')  # a number, not a string

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    @pytest.mark.parametrize("text", ["1.", ".5", "01", "1e3", "+1", "1.1234567", "--1", "0x10"])
    def test_float_shape(self, response_format: str, text: str) -> None:
        spec = make_spec("FLOAT", response_format, explanation=False)
        wrap = '{"judgment": %s}' if response_format == "JSON" else "<judgment>%s</judgment>"
        assert matches(spec, wrap % "0.123456")
        assert not matches(spec, wrap % text)

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_int_digits_bounded(self, response_format: str) -> None:
        spec = make_spec("INT", response_format, explanation=False)
        wrap = '{"judgment": %s}' if response_format == "JSON" else "<judgment>%s</judgment>"
        assert matches(spec, wrap % ("9" * MAX_INT_DIGITS))
        assert not matches(spec, wrap % ("9" * (MAX_INT_DIGITS + 1)))
        assert not matches(spec, wrap % "4.0")

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_explanation_length_capped(self, response_format: str) -> None:
        spec = make_spec("BOOL", response_format, cap=20)
        assert matches(spec, spec.render_answer({"explanation": "x" * 20, "judgment": True}))
        assert matches(spec, spec.render_answer({"explanation": CLEF * 20, "judgment": True}))
        assert not matches(spec, spec.render_answer({"explanation": "x" * 21, "judgment": True}))

    def test_text_judgment_length_capped(self) -> None:
        spec = make_spec("TEXT", "JSON", explanation=False, cap=16)
        assert matches(spec, spec.render_answer({"judgment": "y" * 16}))
        assert not matches(spec, spec.render_answer({"judgment": "y" * 17}))

    def test_json_escapes_count_as_one_character(self) -> None:
        spec = make_spec("BOOL", cap=16)
        assert matches(spec, spec.render_answer({"explanation": '"' * 16, "judgment": True}))
        assert matches(spec, spec.render_answer({"explanation": "\n" * 16, "judgment": True}))

    def test_rubric_rejects_missing_criterion(self, tmp_path: Path) -> None:
        spec = rubric_spec(tmp_path)
        answer = spec.render_answer(RUBRIC_VALUES)
        assert not matches(spec, answer.replace(', "clarity": "good"', ""))
        assert not matches(spec, answer.replace('"clarity": "good"', '"clarity": "fine"'))

    def test_raw_has_no_regex(self) -> None:
        spec = make_spec("BOOL", "RAW")
        assert spec.regex() is None
        assert spec.guided is False
        assert (
            Judge(
                load_judge_config({"judge_params": {"prompt_template": "{a}", "response_format": "RAW"}})
            ).constraint
            is None
        )


# ------------------------------------------------------------------------------------ token bound


def longest_value(spec: OutputSpec, name: str) -> Any:
    f = spec.field(name)
    if f.labels is not None:
        if f.judgment_type is JudgmentType.BOOL:
            return "Yes"
        if f.judgment_type is JudgmentType.INT:
            return max(f.labels, key=len)
        return max(f.labels, key=lambda label: len(json.dumps(label, ensure_ascii=False).encode()))
    if f.judgment_type is JudgmentType.INT:
        return -int("9" * MAX_INT_DIGITS)
    if f.judgment_type is JudgmentType.FLOAT:
        return None  # written by hand below: json.dumps would round it
    return CLEF * f.max_chars


def longest_answer(spec: OutputSpec) -> str:
    values = {f.name: longest_value(spec, f.name) for f in spec.fields}
    answer = spec.render_answer(values)
    longest_float = "-" + "9" * MAX_INT_DIGITS + "." + "9" * MAX_FRACTION_DIGITS
    for f in spec.fields:
        if f.judgment_type is JudgmentType.FLOAT and f.is_judgment:
            if spec.response_format is ResponseFormat.JSON:
                answer = answer.replace(f'"{f.name}": ""', f'"{f.name}": {longest_float}')
            else:
                answer = answer.replace(f"<{f.name}></{f.name}>", f"<{f.name}>{longest_float}</{f.name}>")
    return answer


class TestMaxTokens:
    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    @pytest.mark.parametrize(
        ("judgment_type", "scores"),
        [
            ("BOOL", None),
            ("INT", None),
            ("INT", {"1": 0.0, "100": 1.0}),
            ("FLOAT", None),
            ("TEXT", None),
            ("ENUM", {"ok": 1.0, "très très mauvais": 0.0, "a&b<c>": 0.5, 'q"x\\': None}),
        ],
    )
    def test_bounds_longest_answer(self, response_format: str, judgment_type: str, scores: Any) -> None:
        spec = make_spec(judgment_type, response_format, scores, explanation=True, cap=32)
        answer = longest_answer(spec)
        assert matches(spec, answer), answer
        size = len(answer.encode("utf-8"))
        assert spec.max_answer_bytes() >= size
        assert spec.max_tokens() >= size
        assert spec.max_tokens() > spec.max_answer_bytes()

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_rubric_bound(self, tmp_path: Path, response_format: str) -> None:
        spec = rubric_spec(tmp_path, response_format, cap=24)
        answer = longest_answer(spec)
        assert matches(spec, answer), answer
        assert spec.max_tokens() >= len(answer.encode("utf-8"))

    def test_explanation_of_four_byte_characters(self) -> None:
        spec = make_spec("BOOL", "JSON", cap=100)
        answer = spec.render_answer({"explanation": CLEF * 100, "judgment": True})
        assert matches(spec, answer)
        assert len(answer.encode("utf-8")) > 400
        assert spec.max_tokens() >= len(answer.encode("utf-8"))

    def test_bound_grows_with_cap(self) -> None:
        assert make_spec(cap=100).max_tokens() > make_spec(cap=50).max_tokens()

    def test_judge_uses_bound_when_unset(self) -> None:
        judge = Judge(
            load_judge_config({"judge_params": {"prompt_template": "{a}", "include_explanation": True}})
        )
        assert judge.max_tokens == judge.spec.max_tokens()
        unguided = Judge(
            load_judge_config({"judge_params": {"prompt_template": "{a}", "use_guided_decoding": False}})
        )
        assert unguided.max_tokens == 1024


# ---------------------------------------------------------------------------------- instructions


class TestInstructions:
    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_rubric_mentions_every_field(self, tmp_path: Path, response_format: str) -> None:
        spec = rubric_spec(tmp_path, response_format)
        text = spec.instructions()
        for name in RUBRIC_FIELDS:
            assert name in text
        for label in ("excellent", "good", "poor", "n_a", "Yes", "No"):
            assert label in text
        positions = [text.index(f'"{n}"' if response_format == "JSON" else f"<{n}>") for n in RUBRIC_FIELDS]
        assert positions == sorted(positions)

    @pytest.mark.parametrize("response_format", ["JSON", "XML"])
    def test_simple_mentions_fields_and_labels(self, response_format: str) -> None:
        spec = make_spec("ENUM", response_format, {"Yes": 1.0, "Unsure": 0.5, "No": 0.0})
        text = spec.instructions()
        for word in ("explanation", "judgment", "Yes", "Unsure", "No", "400"):
            assert word in text

    def test_example_in_instructions_matches_regex(self, tmp_path: Path) -> None:
        spec = rubric_spec(tmp_path)
        example = spec.instructions().split("Example: ", 1)[1]
        assert matches(spec, example)

    def test_raw_instructions(self) -> None:
        text = make_spec("ENUM", "RAW", {"good": 1.0, "bad": 0.0}).instructions()
        assert "good" in text
        assert "bad" in text
        assert "explain" in text.lower()

    def test_in_system_message(self) -> None:
        judge = Judge(load_judge_config("rubric/response_quality"))
        system = judge.render({"request": "q", "response": "r"})[0].content
        assert judge.spec.instructions() in system


class TestConstraint:
    def test_json_constraint(self) -> None:
        judge = Judge(load_judge_config({"judge_params": {"prompt_template": "{a}"}}))
        assert judge.spec.guided is True
        assert judge.constraint is not None
        assert judge.constraint.regex == judge.spec.regex()
        assert judge.constraint.json_schema is None and judge.constraint.kind == "regex"
        schema = judge.spec.constraint(("json_schema",))
        assert schema is not None and schema.json_schema == judge.spec.json_schema()
        assert judge.spec.constraint(("json_schema", "regex")) == schema  # the backend's preference wins

    def test_xml_constraint_has_no_schema(self) -> None:
        judge = Judge(
            load_judge_config({"judge_params": {"prompt_template": "{a}", "response_format": "XML"}})
        )
        assert judge.constraint is not None
        assert judge.constraint.regex == judge.spec.regex()
        assert judge.constraint.json_schema is None
        assert judge.spec.constraint(("json_schema",)) is None  # an XML answer is no JSON object

    def test_a_constraint_holds_exactly_one_kind(self) -> None:
        with pytest.raises(ValueError, match="exactly one of regex, choices or json_schema; got none"):
            Constraint()
        with pytest.raises(ValueError, match="got regex, json_schema"):
            Constraint(regex="a", json_schema={"type": "string"})
        with pytest.raises(ValueError, match="at least one choice"):
            Constraint(choices=())
        assert Constraint(choices=("a", "b")).kind == "choice"

    def test_guided_decoding_off(self) -> None:
        judge = Judge(
            load_judge_config({"judge_params": {"prompt_template": "{a}", "use_guided_decoding": False}})
        )
        assert judge.spec.guided is False
        assert judge.constraint is None

    def test_fingerprint_tracks_shape(self) -> None:
        assert make_spec("BOOL").fingerprint() == make_spec("BOOL").fingerprint()
        assert make_spec("BOOL").fingerprint() != make_spec("BOOL", "XML").fingerprint()
        assert make_spec("BOOL").fingerprint() != make_spec("BOOL", cap=50).fingerprint()
        assert make_spec("BOOL").fingerprint() != make_spec("BOOL", guided=False).fingerprint()
