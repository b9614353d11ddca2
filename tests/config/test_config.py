# ruff: noqa: E501
"""Judge configs: pydantic models, YAML loading, built-ins, overrides and Oumi's rules.

Every config here is a real YAML file written to ``tmp_path`` (or a plain dict / JudgeConfig where the
test is about that input kind); nothing in jurist is mocked.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from jurist.config import (
    Aggregation,
    InferenceEngine,
    JudgeConfig,
    JudgeParams,
    JudgmentType,
    ResponseFormat,
    list_builtin_judges,
    load_judge_config,
    parse_cli_overrides,
    parse_override_value,
)
from jurist.config.templates import MissingValue
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.records import Completion

# --------------------------------------------------------------------------------------------- helpers

PROMPT = "Q: {request}\nA: {response}\n"


def write_yaml(tmp_path: Path, text: str, name: str = "judge.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_yaml(tmp_path: Path, text: str, name: str = "judge.yaml", **kwargs: Any) -> JudgeConfig:
    return load_judge_config(write_yaml(tmp_path, text, name), **kwargs)


def load_error(tmp_path: Path, text: str, name: str = "judge.yaml") -> tuple[str, Path, ConfigError]:
    path = write_yaml(tmp_path, text, name)
    with pytest.raises(ConfigError) as info:
        load_judge_config(path)
    return str(info.value), path, info.value


def simple(**judge_params: Any) -> dict[str, Any]:
    return {"judge_params": {"prompt_template": PROMPT, **judge_params}}


def rubric(
    criteria: list[dict[str, Any]], aggregation: str | None = None, **judge_params: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"criteria": criteria}
    if aggregation is not None:
        params["aggregation"] = aggregation
    return {
        "judge_params": {"prompt_template": PROMPT, **judge_params},
        "rubric_judge_params": params,
    }


def crit(cid: str, **fields: Any) -> dict[str, Any]:
    return {"id": cid, "description": f"is the response {cid}?", **fields}


def error_of(ref: Any, **kwargs: Any) -> str:
    with pytest.raises(ConfigError) as info:
        load_judge_config(ref, **kwargs)
    return str(info.value)


ROW = {"request": "What is 2+2?", "response": "4"}


# ------------------------------------------------------------------------------ the seed's examples
# The two YAML examples of Oumi's judge config page, unchanged. (The seed file stores the page with its
# line breaks collapsed; these are the examples with the page's line structure restored.)

SEED_TRUTHFULNESS_YAML = """\
judge_params:
  system_instruction: |
    You are a truthfulness judge. Your task is to determine whether the response is factually accurate, grounded in verifiable information, and free from hallucinations, fabrications, or speculative claims. The response should not include opinions, beliefs, or unverifiable assertions.

    Carefully assess the response against the user’s request. Evaluate truthfulness by systematically checking: specific factual claims, numerical data, names and references, causal relationships, and generalizations for accuracy and verifiability.

    {expected_response}

    Evaluation Criteria:
    1. Factual Accuracy: All factual claims in the response must be correct and verifiable.
    2. Grounding: The response must be based on information that can be reasonably inferred or verified from the user’s request or common knowledge. It should not invent details or make unsupported assumptions.
    3. No Hallucination: The response must not include fabricated facts, imaginary entities, or incorrect references. Check specific names, dates, numbers, and citations carefully.
    4. No Opinions or Beliefs: The response must avoid presenting personal beliefs, subjective opinions, or unverifiable statements.
    5. Uncertainty and Limitations: Responses that acknowledge uncertainty, express appropriate caveats, or state limitations of knowledge are acceptable and should not be penalized for truthfulness, as long as they don't make false claims.
    6. Temporal Accuracy: Consider whether factual claims are accurate for the relevant time period. Facts that were true historically but are no longer current should be evaluated in context.

  prompt_template: |
    Here is the data:
    [BEGIN DATA]
    ***
    [user request]:
    {request}
    ***
    [response]:
    {response}
    ***
    [END DATA]

  # Template variables to statically replace YAML placeholders
  template_variables:
    expected_response: If the response is entirely truthful and grounded, respond with 'Yes'. If not, respond with 'No'. If you are unsure, respond with 'Unsure'.

  # Output configuration
  response_format: JSON # XML, JSON, or RAW
  judgment_type: ENUM # BOOL, INT, FLOAT, TEXT, or ENUM
  include_explanation: True

  # For categorical (ENUM) judgments with custom scoring
  judgment_scores:
    "Yes": 1.0
    "Unsure": 0.5
    "No": 0.0

  # Few-shot examples to guide the judge
  examples:
    - question: "What is the capital of France?"
      response: "Paris"
      judgment: "Yes"
      explanation: "The response is factually correct, since the capital of France is Paris."
    - question: "Who is the president of the US in 2025?"
      response: "The president is Joe Biden."
      judgment: "No"
      explanation: "The answer is incorrect. The president of the US in 2025 is Donald J. Trump."

inference_config:
  # Model configuration
  model:
    model_name: "gpt-4o"

  # Inference engine
  engine: OPENAI

  # Generation parameters
  generation:
    max_new_tokens: 8192
    temperature: 1.0
"""

SEED_RUBRIC_YAML = """\
judge_params:
  system_instruction: |
    You are evaluating an answer to a question. Judge each criterion strictly on its own terms.
  prompt_template: |
    [Question]: {question}
    [Answer]: {answer}
  response_format: JSON

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
      include_explanation: false # on by default; opt out to save tokens

inference_config:
  model:
    model_name: "gpt-4o"
  engine: OPENAI
  generation:
    max_new_tokens: 8192
    temperature: 0.0
"""


def write_seed(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))  # unchanged: no dedent, no normalisation
    return path


class TestSeedTruthfulness:
    @pytest.fixture
    def config(self, tmp_path: Path) -> JudgeConfig:
        return load_judge_config(write_seed(tmp_path, SEED_TRUTHFULNESS_YAML, "truthfulness_seed.yaml"))

    def test_loads_with_every_field(self, config: JudgeConfig) -> None:
        jp = config.judge_params
        assert config.is_rubric is False
        assert jp.response_format is ResponseFormat.JSON
        assert jp.judgment_type is JudgmentType.ENUM
        assert jp.include_explanation is True
        assert jp.judgment_scores == {"Yes": 1.0, "Unsure": 0.5, "No": 0.0}
        assert list(jp.judgment_scores) == ["Yes", "Unsure", "No"]
        assert jp.use_guided_decoding is True
        assert len(jp.examples) == 2
        assert jp.examples[0]["judgment"] == "Yes"
        assert jp.examples[1]["judgment"] == "No"
        assert jp.template_variables["expected_response"].startswith("If the response is entirely truthful")
        ic = config.inference_config
        assert ic.model.model_name == "gpt-4o"
        assert ic.engine is InferenceEngine.OPENAI
        assert ic.generation.max_new_tokens == 8192
        assert ic.generation.temperature == 1.0
        assert config.name == "truthfulness_seed"

    def test_warns_that_examples_lack_the_request_placeholder(self, config: JudgeConfig) -> None:
        # The examples give `question`, the template reads `{request}` (found when the judge compiles).
        warnings = Judge(config).warnings
        assert len(warnings) == 2
        for index, warning in enumerate(warnings):
            assert f"examples[{index}]" in warning
            assert "request" in warning
        assert not any("question" in w for w in warnings)

    def test_template_variable_replaced_in_system_instruction(self, config: JudgeConfig) -> None:
        messages = Judge(config).render(ROW)
        system = messages[0]
        assert system.role == "system"
        assert "{expected_response}" not in system.content
        assert "If you are unsure, respond with 'Unsure'." in system.content
        assert "the user’s request" in system.content
        user = messages[-1]
        assert user.role == "user"
        assert "[user request]:\nWhat is 2+2?\n" in user.content
        assert "[response]:\n4\n" in user.content

    def test_few_shot_turns(self, config: JudgeConfig) -> None:
        messages = Judge(config).render(ROW)
        roles = [m.role for m in messages]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
        assert "[response]:\nParis\n" in messages[1].content
        assert messages[2].content == (
            '{"explanation": "The response is factually correct, since the capital of France is Paris.", '
            '"judgment": "Yes"}'
        )
        assert '"judgment": "No"' in messages[4].content

    def test_scores_an_answer(self, config: JudgeConfig) -> None:
        out = Judge(config).interpret(Completion('{"explanation": "Not sure.", "judgment": "Unsure"}'))
        assert out.status == "ok"
        assert out.field_values == {"explanation": "Not sure.", "judgment": "Unsure"}
        assert out.field_scores == {"explanation": None, "judgment": 0.5}
        assert out.aggregate_score is None
        assert out.score == 0.5


class TestSeedRubric:
    @pytest.fixture
    def config(self, tmp_path: Path) -> JudgeConfig:
        return load_judge_config(write_seed(tmp_path, SEED_RUBRIC_YAML, "my_rubric.yaml"))

    def test_loads(self, config: JudgeConfig) -> None:
        assert config.is_rubric is True
        assert config.warnings == []
        rubric_params = config.rubric_judge_params
        assert rubric_params is not None
        assert rubric_params.aggregation is Aggregation.WEIGHTED_MEAN
        correctness, clarity = rubric_params.criteria
        assert correctness.id == "correctness"
        assert correctness.judgment_type is JudgmentType.BOOL
        assert correctness.weight == 2.0
        assert correctness.include_explanation is True
        assert clarity.id == "clarity"
        assert clarity.judgment_type is JudgmentType.ENUM
        assert clarity.judgment_scores == {"excellent": 1.0, "good": 0.5, "poor": 0.0}
        assert clarity.include_explanation is False
        assert clarity.weight == 1.0
        assert config.inference_config.engine is InferenceEngine.OPENAI
        assert config.inference_config.generation.temperature == 0.0

    def test_asks_for_exactly_the_documented_fields(self, config: JudgeConfig) -> None:
        judge = Judge(config)
        assert [f.name for f in judge.spec.fields] == ["correctness_explanation", "correctness", "clarity"]

    def test_aggregate_is_two_thirds(self, config: JudgeConfig) -> None:
        out = Judge(config).interpret(
            Completion('{"correctness_explanation": "...", "correctness": "Yes", "clarity": "poor"}')
        )
        assert out.status == "ok"
        assert out.field_values["correctness"] is True
        assert out.field_values["correctness_explanation"] == "..."
        assert out.field_values["clarity"] == "poor"
        assert out.field_scores["clarity"] == 0.0
        assert out.field_scores["correctness"] == 1.0
        assert out.field_scores["correctness_explanation"] is None
        assert out.aggregate_score == pytest.approx(2 / 3)
        assert round(out.aggregate_score, 3) == 0.667
        assert out.score == pytest.approx(2 / 3)

    def test_renders_both_criteria(self, config: JudgeConfig) -> None:
        messages = Judge(config).render({"question": "What is 2+2?", "answer": "its 4 i guess"})
        system = messages[0].content
        assert "Judge each criterion strictly on its own terms." in system
        assert "The answer is factually correct." in system
        assert "How clearly the answer is written." in system
        assert system.index("correctness") < system.index("clarity")
        assert messages[-1].content == "[Question]: What is 2+2?\n[Answer]: its 4 i guess\n"


# ----------------------------------------------------------------------------------- unknown keys


class TestUnknownKeys:
    @pytest.mark.parametrize(
        ("text", "dotted", "allowed"),
        [
            (
                """\
                judge_params:
                  prompt_template: x
                inference_confg:
                  engine: VLLM
                """,
                "inference_confg",
                ["judge_params", "rubric_judge_params", "inference_config"],
            ),
            (
                """\
                judge_params:
                  prompt_template: x
                  prompt_templat: y
                """,
                "judge_params.prompt_templat",
                ["prompt_template", "system_instruction", "judgment_type", "use_guided_decoding"],
            ),
            (
                """\
                judge_params:
                  prompt_template: x
                rubric_judge_params:
                  criteria:
                    - id: a
                      description: d
                    - id: b
                      description: d
                      wieght: 2
                """,
                "rubric_judge_params.criteria[1].wieght",
                ["id", "description", "judgment_type", "judgment_scores", "include_explanation", "weight"],
            ),
            (
                """\
                judge_params:
                  prompt_template: x
                inference_config:
                  generation:
                    max_tokens: 10
                """,
                "inference_config.generation.max_tokens",
                ["max_new_tokens", "temperature", "top_p"],
            ),
            (
                """\
                judge_params:
                  prompt_template: x
                rubric_judge_params:
                  criteria:
                    - id: a
                      description: d
                  aggregate: MIN
                """,
                "rubric_judge_params.aggregate",
                ["aggregation", "criteria"],
            ),
            (
                """\
                judge_params:
                  prompt_template: x
                inference_config:
                  model:
                    name: gpt-4o
                """,
                "inference_config.model.name",
                ["model_name"],
            ),
        ],
    )
    def test_names_file_key_and_allowed_keys(
        self, tmp_path: Path, text: str, dotted: str, allowed: list[str]
    ) -> None:
        message, path, error = load_error(tmp_path, text)
        assert str(path) in message
        assert dotted in message
        assert "unknown key" in message
        assert "allowed keys" in message
        tail = message.split("allowed keys:", 1)[1]
        for key in allowed:
            assert key in tail
        assert error.source == str(path)
        assert error.field == dotted

    def test_misspelt_section_reports_both_problems(self, tmp_path: Path) -> None:
        message, path, _ = load_error(
            tmp_path,
            """\
            judge_paramz:
              prompt_template: x
            """,
        )
        assert str(path) in message
        assert "judge_paramz: unknown key" in message
        assert "judge_params: required key is missing" in message
        assert "judge_params" in message.split("allowed keys:", 1)[1]

    def test_every_unknown_key_is_named(self, tmp_path: Path) -> None:
        message, _, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: x
              colour: red
            flavour: mint
            """,
        )
        assert "judge_params.colour" in message
        assert "flavour" in message

    def test_dict_source_is_python(self) -> None:
        message = error_of({"judge_params": {"prompt_template": "x"}, "extra": 1})
        assert message.startswith("<python>")
        assert "extra" in message


# ------------------------------------------------------------------------------------ judge_params


class TestJudgeParams:
    def test_defaults(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request} {response}"
            """,
        )
        jp = config.judge_params
        assert jp.prompt_template == "{request} {response}"
        assert jp.system_instruction is None
        assert jp.template_variables == {}
        assert jp.response_format is ResponseFormat.JSON
        assert jp.judgment_type is JudgmentType.BOOL
        assert jp.judgment_scores is None
        assert jp.include_explanation is False
        assert jp.examples == []
        assert jp.use_guided_decoding is True
        assert config.rubric_judge_params is None
        assert config.is_rubric is False
        assert config.warnings == []

    def test_prompt_template_is_required(self, tmp_path: Path) -> None:
        message, path, _ = load_error(
            tmp_path,
            """\
            judge_params:
              response_format: JSON
            """,
        )
        assert str(path) in message
        assert "judge_params.prompt_template" in message
        assert "required" in message

    def test_judge_params_is_required(self, tmp_path: Path) -> None:
        message, _, _ = load_error(
            tmp_path,
            """\
            inference_config:
              engine: VLLM
            """,
        )
        assert "judge_params" in message
        assert "required" in message

    def test_blank_prompt_template_rejected(self, tmp_path: Path) -> None:
        message, _, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "   "
            """,
        )
        assert "prompt_template" in message

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ("JSON", ResponseFormat.JSON),
            ("json", ResponseFormat.JSON),
            ("Json", ResponseFormat.JSON),
            ("XML", ResponseFormat.XML),
            ("xml", ResponseFormat.XML),
            ("RAW", ResponseFormat.RAW),
            ("raw", ResponseFormat.RAW),
        ],
    )
    def test_response_format_any_case(self, tmp_path: Path, given: str, expected: ResponseFormat) -> None:
        config = load_yaml(
            tmp_path,
            f"""\
            judge_params:
              prompt_template: "{{request}}"
              response_format: {given}
            """,
        )
        assert config.judge_params.response_format is expected

    def test_unknown_response_format_lists_options(self, tmp_path: Path) -> None:
        message, path, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              response_format: YAML
            """,
        )
        assert str(path) in message
        assert "judge_params.response_format" in message
        for option in ("JSON", "XML", "RAW"):
            assert option in message
        assert "YAML" in message

    @pytest.mark.parametrize(
        ("given", "scores", "expected"),
        [
            ("BOOL", None, JudgmentType.BOOL),
            ("bool", None, JudgmentType.BOOL),
            ("INT", {"1": 0.0, "5": 1.0}, JudgmentType.INT),
            ("FLOAT", {"0.5": 1.0}, JudgmentType.FLOAT),
            ("TEXT", {"great": 1.0}, JudgmentType.TEXT),
            ("ENUM", {"good": 1.0, "bad": 0.0}, JudgmentType.ENUM),
            ("enum", {"good": 1.0, "bad": 0.0}, JudgmentType.ENUM),
        ],
    )
    def test_judgment_types(
        self, given: str, scores: dict[str, float] | None, expected: JudgmentType
    ) -> None:
        params: dict[str, Any] = {"judgment_type": given}
        if scores is not None:
            params["judgment_scores"] = scores
        config = load_judge_config(simple(**params))
        assert config.judge_params.judgment_type is expected
        assert config.judge_params.judgment_scores == scores
        assert config.warnings == []

    def test_unknown_judgment_type_lists_options(self) -> None:
        message = error_of(simple(judgment_type="STRING"))
        assert "judge_params.judgment_type" in message
        for option in ("BOOL", "INT", "FLOAT", "TEXT", "ENUM"):
            assert option in message

    def test_enum_without_judgment_scores_rejected(self, tmp_path: Path) -> None:
        message, path, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              judgment_type: ENUM
            """,
        )
        assert str(path) in message
        assert "ENUM" in message
        assert "judgment_scores" in message

    def test_empty_judgment_scores_rejected(self) -> None:
        assert "judgment_scores" in error_of(simple(judgment_type="ENUM", judgment_scores={}))

    def test_enum_label_may_map_to_null(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              judgment_type: ENUM
              judgment_scores:
                good: 1.0
                poor: 0.0
                not_applicable: null
            """,
        )
        assert config.judge_params.judgment_scores == {"good": 1.0, "poor": 0.0, "not_applicable": None}

    @pytest.mark.parametrize(
        ("judgment_type", "scores"),
        [("INT", {"1": 0.0, "2": None}), ("FLOAT", {"0.5": None}), ("TEXT", {"meh": None})],
    )
    def test_null_score_only_for_enum(self, judgment_type: str, scores: dict[str, Any]) -> None:
        message = error_of(simple(judgment_type=judgment_type, judgment_scores=scores))
        assert "null" in message
        assert "ENUM" in message
        assert judgment_type in message

    def test_bool_scores_itself(self) -> None:
        # BOOL scores 1.0 / 0.0 automatically; jurist rejects judgment_scores on it rather than ignoring them.
        message = error_of(simple(judgment_type="BOOL", judgment_scores={"Yes": 1.0, "No": 0.0}))
        assert "BOOL" in message

    def test_int_labels_must_be_integers(self) -> None:
        assert "integer" in error_of(simple(judgment_type="INT", judgment_scores={"high": 1.0}))

    def test_float_labels_must_be_numbers(self) -> None:
        assert "number" in error_of(simple(judgment_type="FLOAT", judgment_scores={"high": 1.0}))

    def test_int_labels_read_from_yaml_integers(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              judgment_type: INT
              judgment_scores:
                1: 0.0
                2: 0.5
                3: 1.0
            """,
        )
        assert config.judge_params.judgment_scores == {"1": 0.0, "2": 0.5, "3": 1.0}

    def test_include_explanation_and_guided_decoding(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              include_explanation: true
              use_guided_decoding: false
            """,
        )
        assert config.judge_params.include_explanation is True
        assert config.judge_params.use_guided_decoding is False
        # Turning guided decoding off is legal but worth a warning (found when the judge compiles).
        assert any("use_guided_decoding" in w for w in Judge(config).warnings)

    def test_examples_kept_as_given(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request} {response}"
              include_explanation: true
              examples:
                - request: "2+2?"
                  response: "4"
                  judgment: "Yes"
                  explanation: "Right."
            """,
        )
        assert config.judge_params.examples == [
            {"request": "2+2?", "response": "4", "judgment": "Yes", "explanation": "Right."}
        ]
        assert config.warnings == []

    def test_simple_example_needs_judgment(self) -> None:
        message = error_of(simple(examples=[{"request": "a", "response": "b"}]))
        assert "examples[0]" in message
        assert "judgment" in message

    def test_simple_example_needs_explanation_when_included(self) -> None:
        message = error_of(
            simple(include_explanation=True, examples=[{"request": "a", "response": "b", "judgment": "Yes"}])
        )
        assert "examples[0]" in message
        assert "explanation" in message

    def test_simple_example_without_explanation_when_not_included(self) -> None:
        config = load_judge_config(simple(examples=[{"request": "a", "response": "b", "judgment": "No"}]))
        assert config.warnings == []

    def test_example_missing_placeholder_warns(self) -> None:
        config = load_judge_config(simple(examples=[{"request": "a", "judgment": "No"}]))
        assert config.warnings == []  # the config layer cannot render examples; the judge warns
        warnings = Judge(config).warnings
        assert len(warnings) == 1
        assert "examples[0]" in warnings[0]
        assert "response" in warnings[0]

    def test_example_judgment_must_fit_its_type(self) -> None:
        data = simple(
            judgment_type="ENUM",
            judgment_scores={"good": 1.0, "bad": 0.0},
            examples=[{"request": "a", "response": "b", "judgment": "great"}],
        )
        try:
            config = load_judge_config(data)
        except ConfigError as exc:
            assert "examples[0]" in str(exc)
        else:
            assert any("examples[0]" in w and "great" in w for w in Judge(config).warnings)

    def test_unscored_simple_judgment_warns(self) -> None:
        config = load_judge_config(simple(judgment_type="INT"))
        assert len(config.warnings) == 1
        assert "INT" in config.warnings[0]
        assert "score" in config.warnings[0]


# ------------------------------------------------------------------------------ template variables


class TestTemplateVariables:
    def test_replaced_statically_in_both_templates(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              system_instruction: "Check that the response is valid {expected_format}."
              prompt_template: |
                Format: {expected_format}
                {request}
                {response}
              template_variables:
                expected_format: JSON
            """,
        )
        assert config.warnings == []
        judge = Judge(config)
        assert "expected_format" not in judge.required_fields
        assert judge.required_fields >= {"request", "response"}
        messages = judge.render(ROW)  # the row has no expected_format: it was replaced at load time
        assert messages[0].content.startswith("Check that the response is valid JSON.")
        assert messages[-1].content == "Format: JSON\nWhat is 2+2?\n4\n"

    def test_row_value_does_not_override_static_variable(self) -> None:
        judge = Judge(
            load_judge_config(simple(prompt_template="{fmt}: {request}", template_variables={"fmt": "XML"}))
        )
        assert judge.render({"request": "r", "fmt": "HTML"})[-1].content == "XML: r"

    def test_values_read_as_text(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "Give {n} reasons: {request}"
              template_variables:
                n: 3
            """,
        )
        assert config.judge_params.template_variables == {"n": "3"}
        assert Judge(config).render({"request": "why?"})[-1].content == "Give 3 reasons: why?"

    def test_value_with_json_braces_survives(self) -> None:
        config = load_judge_config(
            simple(prompt_template="{shape}\n{request}", template_variables={"shape": '{"judgment": "Yes"}'})
        )
        assert Judge(config).render({"request": "r"})[-1].content == '{"judgment": "Yes"}\nr'

    def test_unused_variable_warns(self) -> None:
        config = load_judge_config(simple(template_variables={"unused_var": "x"}))
        assert any("unused_var" in w for w in config.warnings)

    def test_missing_row_value_still_missing(self) -> None:
        judge = Judge(
            load_judge_config(simple(template_variables={"other": "x"}, system_instruction="{other}"))
        )
        with pytest.raises(MissingValue) as info:
            judge.render({"request": "r"})
        assert info.value.placeholder == "response"


# ----------------------------------------------------------------------------------------- rubric


class TestRubricParams:
    def test_criterion_defaults(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request} {response}"
            rubric_judge_params:
              criteria:
                - id: helpful
                  description: Is it helpful?
            """,
        )
        assert config.is_rubric is True
        rubric_params = config.rubric_judge_params
        assert rubric_params is not None
        assert rubric_params.aggregation is Aggregation.WEIGHTED_MEAN
        (criterion,) = rubric_params.criteria
        assert criterion.judgment_type is JudgmentType.BOOL
        assert criterion.include_explanation is True
        assert criterion.weight == 1.0
        assert criterion.judgment_scores is None
        assert config.warnings == []

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ("WEIGHTED_MEAN", Aggregation.WEIGHTED_MEAN),
            ("weighted_mean", Aggregation.WEIGHTED_MEAN),
            ("MIN", Aggregation.MIN),
            ("ALL", Aggregation.ALL),
            ("all", Aggregation.ALL),
            ("NONE", Aggregation.NONE),
        ],
    )
    def test_aggregation_values(self, tmp_path: Path, given: str, expected: Aggregation) -> None:
        config = load_yaml(
            tmp_path,
            f"""\
            judge_params:
              prompt_template: "{{request}}"
            rubric_judge_params:
              aggregation: {given}
              criteria:
                - id: a
                  description: d
            """,
        )
        assert config.rubric_judge_params is not None
        assert config.rubric_judge_params.aggregation is expected

    def test_unknown_aggregation_lists_options(self) -> None:
        message = error_of(rubric([crit("a")], aggregation="MEDIAN"))
        assert "rubric_judge_params.aggregation" in message
        for option in ("WEIGHTED_MEAN", "MIN", "ALL", "NONE"):
            assert option in message

    @pytest.mark.parametrize("cid", ["correctness", "a", "_private", "Clarity2", "x_1_y", "judgment"])
    def test_identifier_ids_accepted(self, cid: str) -> None:
        config = load_judge_config(rubric([crit(cid)]))
        assert config.rubric_judge_params is not None
        assert config.rubric_judge_params.criteria[0].id == cid

    @pytest.mark.parametrize("cid", ["1st", "has-dash", "has space", "", "dot.ted", "semi;colon"])
    def test_non_identifier_ids_rejected(self, cid: str) -> None:
        message = error_of(rubric([crit(cid)]))
        assert "rubric_judge_params.criteria[0].id" in message
        assert "identifier" in message

    def test_id_with_trailing_newline_rejected(self, tmp_path: Path) -> None:
        message, _, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
            rubric_judge_params:
              criteria:
                - id: |
                    correctness
                  description: d
            """,
        )
        assert "identifier" in message

    @pytest.mark.parametrize("cid", ["explanation", "correctness_explanation", "a_explanation"])
    def test_reserved_ids_rejected(self, cid: str) -> None:
        message = error_of(rubric([crit(cid)]))
        assert "reserved" in message
        assert cid in message

    def test_duplicate_ids_rejected(self) -> None:
        message = error_of(rubric([crit("a"), crit("b"), crit("a")]))
        assert "'a'" in message
        assert "twice" in message

    def test_no_criteria_rejected(self) -> None:
        assert "criteria" in error_of(rubric([]))

    def test_criterion_needs_description(self) -> None:
        message = error_of(rubric([{"id": "a"}]))
        assert "rubric_judge_params.criteria[0].description" in message

    @pytest.mark.parametrize("weight", [0, -1.0])
    def test_weight_must_be_positive(self, weight: float) -> None:
        assert "rubric_judge_params.criteria[0].weight" in error_of(rubric([crit("a", weight=weight)]))

    def test_enum_criterion_without_scores_rejected(self) -> None:
        message = error_of(rubric([crit("a"), crit("tone", judgment_type="ENUM")]))
        assert "tone" in message
        assert "judgment_scores" in message

    def test_enum_criterion_label_may_map_to_null(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
            rubric_judge_params:
              criteria:
                - id: missing_info
                  description: d
                  judgment_type: ENUM
                  judgment_scores:
                    acknowledged: 1.0
                    guessed: 0.0
                    not_applicable: null
            """,
        )
        assert config.rubric_judge_params is not None
        scores = config.rubric_judge_params.criteria[0].judgment_scores
        assert scores == {"acknowledged": 1.0, "guessed": 0.0, "not_applicable": None}
        assert config.warnings == []

    @pytest.mark.parametrize("judgment_type", ["INT", "FLOAT", "TEXT"])
    def test_criterion_null_score_only_for_enum(self, judgment_type: str) -> None:
        label = {"INT": "1", "FLOAT": "0.5", "TEXT": "meh"}[judgment_type]
        message = error_of(rubric([crit("a", judgment_type=judgment_type, judgment_scores={label: None})]))
        assert "'a'" in message
        assert "null" in message
        assert "ENUM" in message

    def test_raw_rejected(self, tmp_path: Path) -> None:
        # which formats can delimit fields is the answer layer's to say: the judge refuses it when it
        # compiles, before any model loads
        path = write_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              response_format: RAW
            rubric_judge_params:
              criteria:
                - id: a
                  description: d
            """,
        )
        with pytest.raises(ConfigError) as info:
            Judge(load_judge_config(path))
        message = str(info.value)
        assert str(path) in message
        assert "judge_params.response_format" in message
        assert "RAW" in message
        assert "JSON or XML" in message

    def test_xml_accepted(self) -> None:
        config = load_judge_config(rubric([crit("a")], response_format="XML"))
        assert config.judge_params.response_format is ResponseFormat.XML

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("judgment_type", "ENUM"),
            ("judgment_type", "BOOL"),  # even the default value: rejected, never ignored
            ("judgment_scores", {"good": 1.0}),
            ("include_explanation", True),
            ("include_explanation", False),
        ],
    )
    def test_per_criterion_keys_rejected_on_judge_params(self, key: str, value: Any) -> None:
        message = error_of(rubric([crit("a")], **{key: value}))
        assert f"judge_params.{key}" in message
        assert "criteri" in message

    def test_per_criterion_keys_rejected_from_yaml(self, tmp_path: Path) -> None:
        message, path, _ = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              include_explanation: true
            rubric_judge_params:
              criteria:
                - id: a
                  description: d
            """,
        )
        assert str(path) in message
        assert "judge_params.include_explanation" in message

    def test_per_criterion_keys_rejected_when_built_in_python(self) -> None:
        params = JudgeParams(prompt_template="{request}", judgment_type="BOOL")
        with pytest.raises(ValidationError, match="judgment_type"):
            JudgeConfig(
                judge_params=params,
                rubric_judge_params={"criteria": [crit("a")]},
            )

    def test_examples_need_every_criterion(self) -> None:
        data = rubric(
            [crit("correct", include_explanation=False), crit("clear", include_explanation=False)],
            examples=[{"request": "q", "response": "r", "correct": "Yes"}],
        )
        message = error_of(data)
        assert "examples[0]" in message
        assert "clear" in message
        assert "correct," not in message

    def test_examples_need_explanations_when_included(self) -> None:
        data = rubric(
            [crit("correct"), crit("clear", include_explanation=False)],
            examples=[{"request": "q", "response": "r", "correct": "Yes", "clear": "No"}],
        )
        message = error_of(data)
        assert "examples[0]" in message
        assert "correct_explanation" in message
        assert "clear_explanation" not in message

    def test_example_null_value_counts_as_missing(self) -> None:
        data = rubric(
            [crit("correct", include_explanation=False)],
            examples=[{"request": "q", "response": "r", "correct": None}],
        )
        assert "correct" in error_of(data)

    def test_complete_examples_accepted(self) -> None:
        data = rubric(
            [
                crit("correct"),
                crit("clear", include_explanation=False),
                crit("tone", judgment_type="ENUM", judgment_scores={"ok": 1.0, "rude": 0.0}),
            ],
            examples=[
                {
                    "request": "q",
                    "response": "r",
                    "correct_explanation": "Right.",
                    "correct": False,
                    "clear": "Yes",
                    "tone_explanation": "Polite.",
                    "tone": "ok",
                }
            ],
        )
        config = load_judge_config(data)
        assert config.warnings == []
        assert len(config.judge_params.examples) == 1

    def test_second_example_is_named(self) -> None:
        good = {"request": "q", "response": "r", "a": "Yes"}
        data = rubric(
            [crit("a", include_explanation=False)], examples=[good, {"request": "q", "response": "r"}]
        )
        assert "examples[1]" in error_of(data)


class TestRubricWarnings:
    def test_unscored_criteria_named(self) -> None:
        config = load_judge_config(
            rubric(
                [
                    crit("correct"),
                    crit("count", judgment_type="INT"),
                    crit("ratio", judgment_type="FLOAT"),
                    crit("notes", judgment_type="TEXT"),
                    crit("scale", judgment_type="INT", judgment_scores={"1": 0.0, "2": 1.0}),
                    crit("tone", judgment_type="ENUM", judgment_scores={"ok": 1.0}),
                ]
            )
        )
        unscored = [w for w in config.warnings if "no score" in w]
        assert len(unscored) == 1
        for name in ("count", "ratio", "notes"):
            assert name in unscored[0]
        for name in ("correct", "scale", "tone"):
            assert name not in unscored[0]
        assert len(config.warnings) == 1

    @pytest.mark.parametrize("mode", ["MIN", "ALL", "NONE"])
    def test_weights_outside_weighted_mean_named(self, mode: str) -> None:
        config = load_judge_config(
            rubric([crit("heavy", weight=2.0), crit("plain"), crit("one", weight=1.0)], aggregation=mode)
        )
        weights = [w for w in config.warnings if "weight" in w]
        assert len(weights) == 1
        assert "heavy" in weights[0]
        assert "one" in weights[0]  # set explicitly, even to the default
        assert "plain" not in weights[0]
        assert mode in weights[0]

    def test_weights_under_weighted_mean_are_quiet(self) -> None:
        config = load_judge_config(rubric([crit("a", weight=3.0), crit("b")]))
        assert config.warnings == []

    @pytest.mark.parametrize("mode", ["MIN", "ALL"])
    def test_default_weights_are_quiet(self, mode: str) -> None:
        assert load_judge_config(rubric([crit("a"), crit("b")], aggregation=mode)).warnings == []

    def test_warnings_is_a_copy(self) -> None:
        config = load_judge_config(rubric([crit("a", judgment_type="TEXT")]))
        config.warnings.append("mine")
        assert "mine" not in config.warnings


# -------------------------------------------------------------------------------- inference_config


class TestInferenceConfig:
    def test_defaults(self) -> None:
        ic = load_judge_config(simple()).inference_config
        assert ic.engine is InferenceEngine.VLLM
        assert ic.model.model_name is None
        assert ic.generation.max_new_tokens is None
        assert ic.generation.temperature == 0.0
        assert ic.generation.top_p == 1.0
        assert ic.generation.stop_strings == []

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ("VLLM", InferenceEngine.VLLM),
            ("vllm", InferenceEngine.VLLM),
            ("NATIVE", InferenceEngine.NATIVE),
            ("REMOTE_VLLM", InferenceEngine.REMOTE_VLLM),
            ("remote_vllm", InferenceEngine.REMOTE_VLLM),
            ("OPENAI", InferenceEngine.OPENAI),
        ],
    )
    def test_engines(self, tmp_path: Path, given: str, expected: InferenceEngine) -> None:
        config = load_yaml(
            tmp_path,
            f"""\
            judge_params:
              prompt_template: "{{request}}"
            inference_config:
              engine: {given}
            """,
        )
        assert config.inference_config.engine is expected

    def test_unknown_engine_lists_allowed_values(self, tmp_path: Path) -> None:
        message, path, error = load_error(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
            inference_config:
              engine: TGI
            """,
        )
        assert str(path) in message
        assert "inference_config.engine" in message
        assert "TGI" in message
        for option in ("VLLM", "NATIVE", "REMOTE_VLLM", "OPENAI"):
            assert option in message
        assert error.field == "inference_config.engine"

    def test_model_and_generation(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
            inference_config:
              model:
                model_name: HuggingFaceTB/SmolLM2-135M-Instruct
                model_max_length: 2048
              engine: NATIVE
              generation:
                max_new_tokens: 256
                temperature: 0.7
                top_p: 0.9
                top_k: 50
                seed: 7
                stop_strings: ["</answer>", "\\n\\n"]
            """,
        )
        ic = config.inference_config
        assert ic.model.model_name == "HuggingFaceTB/SmolLM2-135M-Instruct"
        assert ic.model.model_max_length == 2048
        assert ic.engine is InferenceEngine.NATIVE
        gen = ic.generation
        assert gen.max_new_tokens == 256
        assert gen.temperature == 0.7
        assert gen.top_p == 0.9
        assert gen.top_k == 50
        assert gen.seed == 7
        assert gen.stop_strings == ["</answer>", "\n\n"]
        assert Judge(config).max_tokens == 256

    @pytest.mark.parametrize(
        ("key", "value"),
        [("temperature", -0.1), ("max_new_tokens", 0), ("top_p", 0.0), ("top_p", 1.5)],
    )
    def test_generation_bounds(self, key: str, value: float) -> None:
        message = error_of({**simple(), "inference_config": {"generation": {key: value}}})
        assert f"inference_config.generation.{key}" in message


# ----------------------------------------------------------------------------------------- loading


class TestLoading:
    def test_local_path_str_and_path(self, tmp_path: Path) -> None:
        path = write_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
            """,
            name="my_judge.yaml",
        )
        for ref in (path, str(path)):
            config = load_judge_config(ref)
            assert config.name == "my_judge"
            assert config.source == str(path)

    def test_name_from_yaml_or_argument(self, tmp_path: Path) -> None:
        path = write_yaml(
            tmp_path,
            """\
            name: custom
            judge_params:
              prompt_template: "{request}"
            """,
        )
        assert load_judge_config(path).name == "custom"
        assert load_judge_config(path, name="other").name == "other"

    def test_name_from_awkward_stem(self, tmp_path: Path) -> None:
        path = write_yaml(tmp_path, "judge_params:\n  prompt_template: x\n", name="2nd judge.yaml")
        name = load_judge_config(path).name
        assert name is not None
        assert name.endswith("2nd_judge")
        assert not name[0].isdigit()

    @pytest.mark.parametrize(
        "ref", ["graded/truthfulness", "jurist://graded/truthfulness", "graded/truthfulness.yaml"]
    )
    def test_builtin_name(self, ref: str) -> None:
        config = load_judge_config(ref)
        assert config.name == "truthfulness"
        assert config.source == ref
        assert config.judge_params.judgment_type is JudgmentType.ENUM
        assert config.warnings == []

    def test_mapping(self) -> None:
        config = load_judge_config(simple())
        assert config.source == "<python>"
        assert config.name == "judge"

    def test_mapping_not_mutated(self) -> None:
        data = simple()
        snapshot = repr(data)
        load_judge_config(data, overrides={"judge_params.response_format": "XML"})
        assert repr(data) == snapshot

    def test_judge_config_object(self) -> None:
        built = JudgeConfig(
            judge_params=JudgeParams(
                prompt_template="{request}", judgment_type="enum", judgment_scores={"ok": 1.0, "bad": 0.0}
            )
        )
        config = load_judge_config(built)
        assert config is not built
        assert config.judge_params.judgment_type is JudgmentType.ENUM
        assert config.source == "<python>"

    def test_loaded_object_reloads_with_its_source_and_name(self, tmp_path: Path) -> None:
        path = write_yaml(tmp_path, "judge_params:\n  prompt_template: x\n", name="kept.yaml")
        first = load_judge_config(path)
        again = load_judge_config(first, overrides={"judge_params.response_format": "xml"})
        assert again.name == "kept"
        assert again.source == str(path)
        assert again.judge_params.response_format is ResponseFormat.XML
        assert first.judge_params.response_format is ResponseFormat.JSON

    def test_programmatic_assignment_is_validated(self) -> None:
        config = load_judge_config("generic/truthfulness")
        config.judge_params.response_format = "xml"  # type: ignore[assignment]
        assert config.judge_params.response_format is ResponseFormat.XML
        assert Judge(config).spec.response_format is ResponseFormat.XML
        with pytest.raises(ValidationError):
            config.judge_params.response_format = "YAML"  # type: ignore[assignment]

    def test_every_builtin_loads_without_warnings(self) -> None:
        names = list_builtin_judges()
        assert "generic/truthfulness" in names
        assert any(name.startswith("rubric/") for name in names)
        assert names == sorted(names)
        for name in names:
            config = load_judge_config(name)
            assert config.warnings == [], name
            assert config.name == name.rsplit("/", 1)[-1]
            judge = Judge(config)
            assert judge.spec.fields


class TestBadFiles:
    def test_malformed_yaml_names_file_and_line(self, tmp_path: Path) -> None:
        path = tmp_path / "broken.yaml"
        path.write_text("judge_params:\n  prompt_template: x\n   bad: indent\n", encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_judge_config(path)
        message = str(info.value)
        assert str(path) in message
        assert "malformed YAML" in message
        assert "line 3" in message

    def test_unclosed_flow_sequence(self, tmp_path: Path) -> None:
        path = tmp_path / "broken.yaml"
        path.write_text("judge_params:\n  prompt_template: x\n  examples: [a, b\n", encoding="utf-8")
        message = error_of(path)
        assert str(path) in message
        assert "line" in message

    @pytest.mark.parametrize("content", ["", "   \n\n", "# only a comment\n", "---\n"])
    def test_empty_file(self, tmp_path: Path, content: str) -> None:
        path = tmp_path / "empty.yaml"
        path.write_text(content, encoding="utf-8")
        message = error_of(path)
        assert str(path) in message
        assert "empty" in message

    def test_not_utf8(self, tmp_path: Path) -> None:
        path = tmp_path / "latin1.yaml"
        path.write_bytes("judge_params:\n  prompt_template: café {request}\n".encode("latin-1"))
        message = error_of(path)
        assert str(path) in message
        assert "UTF-8" in message

    def test_utf8_bom_accepted(self, tmp_path: Path) -> None:
        path = tmp_path / "bom.yaml"
        path.write_bytes(b"\xef\xbb\xbfjudge_params:\n  prompt_template: x {request}\n")
        assert load_judge_config(path).judge_params.prompt_template == "x {request}"

    @pytest.mark.parametrize(
        ("content", "kind"), [("- a\n- b\n", "list"), ("just text\n", "str"), ("42\n", "int")]
    )
    def test_not_a_mapping(self, tmp_path: Path, content: str, kind: str) -> None:
        path = tmp_path / "list.yaml"
        path.write_text(content, encoding="utf-8")
        message = error_of(path)
        assert str(path) in message
        assert "mapping" in message
        assert kind in message

    @pytest.mark.parametrize("ref", ["does/not/exist.yaml", "generic/nope", "jurist://generic/nope"])
    def test_missing_file_lists_builtins(self, tmp_path: Path, ref: str) -> None:
        message = error_of(ref)
        assert ref.removeprefix("jurist://") in message
        assert "built-in" in message
        for name in list_builtin_judges():
            assert name in message

    def test_missing_absolute_path(self, tmp_path: Path) -> None:
        ref = tmp_path / "absent.yaml"
        message = error_of(ref)
        assert str(ref) in message
        assert "generic/truthfulness" in message

    def test_folder(self, tmp_path: Path) -> None:
        message = error_of(tmp_path)
        assert str(tmp_path) in message
        assert "folder" in message


class TestYaml12Booleans:
    def test_unquoted_yes_no_labels_stay_strings(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              judgment_type: ENUM
              judgment_scores:
                Yes: 1.0
                Unsure: 0.5
                No: 0.0
                on: 0.2
                OFF: 0.1
              examples:
                - request: q
                  judgment: No
            """,
        )
        assert config.judge_params.judgment_scores == {
            "Yes": 1.0,
            "Unsure": 0.5,
            "No": 0.0,
            "on": 0.2,
            "OFF": 0.1,
        }
        assert config.judge_params.examples[0]["judgment"] == "No"
        judge = Judge(config)
        assert judge.spec.field("judgment").labels == ("Yes", "Unsure", "No", "on", "OFF")
        assert judge.prompt.examples[1].content == '{"judgment": "No"}'

    def test_true_false_are_booleans(self, tmp_path: Path) -> None:
        config = load_yaml(
            tmp_path,
            """\
            judge_params:
              prompt_template: "{request}"
              include_explanation: True
              use_guided_decoding: false
            """,
        )
        assert config.judge_params.include_explanation is True
        assert config.judge_params.use_guided_decoding is False

    def test_override_values_follow_yaml_12(self) -> None:
        assert parse_override_value("Yes") == "Yes"
        assert parse_override_value("no") == "no"
        assert parse_override_value("off") == "off"
        assert parse_override_value("true") is True
        assert parse_override_value("False") is False


# --------------------------------------------------------------------------------------- overrides


class TestOverrides:
    def test_dotted_override_on_builtin(self) -> None:
        config = load_judge_config("generic/truthfulness", overrides={"judge_params.response_format": "XML"})
        assert config.judge_params.response_format is ResponseFormat.XML
        assert Judge(config).spec.regex().startswith("<explanation>")  # type: ignore[union-attr]

    def test_override_on_file(self, tmp_path: Path) -> None:
        path = write_yaml(tmp_path, "judge_params:\n  prompt_template: x\n")
        config = load_judge_config(
            path,
            overrides={
                "judge_params.include_explanation": True,
                "inference_config.generation.temperature": 0.5,
                "inference_config.model.model_name": "tiny",
            },
        )
        assert config.judge_params.include_explanation is True
        assert config.inference_config.generation.temperature == 0.5
        assert config.inference_config.model.model_name == "tiny"
        # the file is left untouched
        assert path.read_text(encoding="utf-8") == "judge_params:\n  prompt_template: x\n"

    def test_override_is_validated(self, tmp_path: Path) -> None:
        path = write_yaml(tmp_path, "judge_params:\n  prompt_template: x\n")
        message = error_of(path, overrides={"judge_params.response_format": "YAML"})
        assert str(path) in message
        assert "judge_params.response_format" in message

    def test_override_unknown_key_lists_allowed(self) -> None:
        message = error_of("generic/truthfulness", overrides={"judge_params.respnse_format": "XML"})
        assert "generic/truthfulness" in message
        assert "judge_params.respnse_format" in message
        assert "response_format" in message.split("allowed keys:", 1)[1]

    def test_override_into_a_scalar_rejected(self) -> None:
        message = error_of("generic/truthfulness", overrides={"judge_params.prompt_template.x": "y"})
        assert "judge_params.prompt_template" in message
        assert "section" in message

    @pytest.mark.parametrize("key", ["judge_params..x", ".x", "x."])
    def test_malformed_override_key(self, key: str) -> None:
        assert "dotted" in error_of("generic/truthfulness", overrides={key: 1})

    def test_override_turns_simple_into_rubric_rules(self) -> None:
        config = load_judge_config("rubric/response_quality", {"judge_params.response_format": "RAW"})
        with pytest.raises(ConfigError, match="RAW"):
            Judge(config)


class TestCliOverrides:
    def test_documented_example(self) -> None:
        assert parse_cli_overrides(["--judge_params.response_format", "XML", "--a.b=1"]) == {
            "judge_params.response_format": "XML",
            "a.b": 1,
        }

    def test_values_are_typed(self) -> None:
        parsed = parse_cli_overrides(
            [
                "--inference_config.generation.temperature=0.3",
                "--inference_config.generation.max_new_tokens",
                "64",
                "--judge_params.include_explanation=false",
                "--inference_config.generation.stop_strings=[a, b]",
                "--inference_config.generation.seed=null",
                "--judge_params.system_instruction",
                "Be strict.",
                "--x.y=a=b",
            ]
        )
        assert parsed == {
            "inference_config.generation.temperature": 0.3,
            "inference_config.generation.max_new_tokens": 64,
            "judge_params.include_explanation": False,
            "inference_config.generation.stop_strings": ["a", "b"],
            "inference_config.generation.seed": None,
            "judge_params.system_instruction": "Be strict.",
            "x.y": "a=b",
        }

    def test_empty(self) -> None:
        assert parse_cli_overrides([]) == {}

    @pytest.mark.parametrize(
        ("args", "fragment"),
        [
            (["positional"], "positional"),
            (["--"], "--"),
            (["--judge_params.response_format"], "no value"),
            (["--response_format", "XML"], "dotted"),
            (["--response_format=XML"], "dotted"),
        ],
    )
    def test_bad_arguments(self, args: list[str], fragment: str) -> None:
        with pytest.raises(ConfigError) as info:
            parse_cli_overrides(args)
        assert fragment in str(info.value)

    def test_applied_end_to_end(self) -> None:
        overrides = parse_cli_overrides(
            ["--judge_params.response_format", "XML", "--inference_config.engine=native"]
        )
        config = load_judge_config("generic/truthfulness", overrides=overrides)
        assert config.judge_params.response_format is ResponseFormat.XML
        assert config.inference_config.engine is InferenceEngine.NATIVE

    def test_text_with_hash_kept_whole(self) -> None:
        parsed = parse_cli_overrides(["--judge_params.system_instruction", "Be strict # really"])
        assert parsed == {"judge_params.system_instruction": "Be strict # really"}

    def test_placeholder_template_override(self) -> None:
        overrides = parse_cli_overrides(["--judge_params.prompt_template", "{request}"])
        config = load_judge_config("generic/safety", overrides=overrides)
        assert config.judge_params.prompt_template == "{request}"


def test_no_false_warning_for_namespace_placeholders_in_examples() -> None:
    config = load_judge_config(
        {
            "judge_params": {
                "prompt_template": "Reference: {{input.expected_output}}\nResponse: {{output.response}}",
                "examples": [{"expected_output": "Paris", "response": "Paris", "judgment": "Yes"}],
            }
        }
    )
    assert Judge(config).prompt.examples[0].content == "Reference: Paris\nResponse: Paris"
    assert config.warnings == []


def test_config_round_trips_through_python_dump() -> None:
    config = load_judge_config("rubric/doc_qa")
    again = load_judge_config(config.model_dump(mode="json", exclude_unset=True))
    assert again.rubric_judge_params == config.rubric_judge_params
    assert again.judge_params == config.judge_params
