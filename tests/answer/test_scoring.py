"""Scores: per-field scores, the four aggregations, N/A handling, simple vs rubric judges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist.answer.fields import OutputField
from jurist.answer.scoring import aggregate, field_score, score_fields
from jurist.config import Aggregation, JudgmentType, load_judge_config
from jurist.judges.judge import Judge
from jurist.records import Completion


def judgment_field(judgment_type: JudgmentType, scores: dict[str, float | None] | None = None) -> OutputField:
    return OutputField("j", "judgment", judgment_type, scores=scores)


# ----------------------------------------------------------------------------------- field scores


class TestFieldScore:
    def test_bool(self) -> None:
        f = judgment_field(JudgmentType.BOOL)
        assert field_score(f, True) == 1.0
        assert field_score(f, False) == 0.0

    def test_enum(self) -> None:
        f = judgment_field(JudgmentType.ENUM, {"excellent": 1.0, "good": 0.7, "poor": 0.3, "n_a": None})
        assert field_score(f, "excellent") == 1.0
        assert field_score(f, "good") == 0.7
        assert field_score(f, "poor") == 0.3
        assert field_score(f, "n_a") is None

    def test_int_only_with_scores(self) -> None:
        assert field_score(judgment_field(JudgmentType.INT), 4) is None
        f = judgment_field(JudgmentType.INT, {"1": 0.0, "3": 0.5, "5": 1.0})
        assert field_score(f, 5) == 1.0
        assert field_score(f, 3) == 0.5
        assert field_score(f, 1) == 0.0
        assert field_score(f, 2) is None

    def test_float_only_with_scores(self) -> None:
        assert field_score(judgment_field(JudgmentType.FLOAT), 0.5) is None
        f = judgment_field(JudgmentType.FLOAT, {"0.5": 1.0, "1": 0.25})
        assert field_score(f, 0.5) == 1.0
        assert field_score(f, 1.0) == 0.25  # matched numerically: "1" == 1.0
        assert field_score(f, 0.7) is None

    def test_text_only_with_scores(self) -> None:
        assert field_score(judgment_field(JudgmentType.TEXT), "great") is None
        f = judgment_field(JudgmentType.TEXT, {"Great": 1.0, "meh": 0.2})
        assert field_score(f, "Great") == 1.0
        assert field_score(f, "great ") == 1.0
        assert field_score(f, "MEH") == 0.2
        assert field_score(f, "awful") is None

    def test_explanations_never_score(self) -> None:
        f = OutputField("explanation", "explanation", JudgmentType.TEXT, scores={"x": 1.0})
        assert field_score(f, "x") is None

    @pytest.mark.parametrize("judgment_type", list(JudgmentType))
    def test_none_value_scores_none(self, judgment_type: JudgmentType) -> None:
        assert field_score(judgment_field(judgment_type, {"1": 1.0}), None) is None

    def test_score_fields_one_entry_per_field(self) -> None:
        fields = [
            OutputField("a_explanation", "explanation", JudgmentType.TEXT, criterion="a"),
            OutputField("a", "judgment", JudgmentType.BOOL, criterion="a"),
            OutputField("b", "judgment", JudgmentType.ENUM, scores={"x": 0.4}, criterion="b"),
            OutputField("c", "judgment", JudgmentType.TEXT, criterion="c"),
        ]
        assert score_fields(fields, {"a_explanation": "why", "a": False, "b": "x", "c": "t"}) == {
            "a_explanation": None,
            "a": 0.0,
            "b": 0.4,
            "c": None,
        }
        assert score_fields(fields, {}) == dict.fromkeys(["a_explanation", "a", "b", "c"])


# -------------------------------------------------------------------------------------- aggregate


class TestAggregate:
    def test_weighted_mean(self) -> None:
        # (2*1.0 + 1*0.5 + 1.5*0.0) / (2 + 1 + 1.5) = 2.5 / 4.5
        assert aggregate([1.0, 0.5, 0.0], [2.0, 1.0, 1.5], Aggregation.WEIGHTED_MEAN) == pytest.approx(5 / 9)

    def test_plain_mean_with_default_weights(self) -> None:
        assert aggregate([1.0, 0.0, 0.5, 0.5], [1.0] * 4, Aggregation.WEIGHTED_MEAN) == pytest.approx(0.5)

    def test_na_drops_out_with_its_weight(self) -> None:
        # the N/A's weight 10 appears neither in the numerator nor in the denominator
        result = aggregate([1.0, None, 0.0], [3.0, 10.0, 1.0], Aggregation.WEIGHTED_MEAN)
        assert result == pytest.approx(3 / 4)
        # not the same as counting N/A as 0.0
        assert aggregate([1.0, 0.0, 0.0], [3.0, 10.0, 1.0], Aggregation.WEIGHTED_MEAN) == pytest.approx(
            3 / 14
        )

    def test_min(self) -> None:
        assert aggregate([0.9, 0.3, 0.7], [5.0, 1.0, 1.0], Aggregation.MIN) == 0.3
        assert aggregate([0.9, None, 0.7], [1.0, 1.0, 1.0], Aggregation.MIN) == 0.7

    def test_all(self) -> None:
        assert aggregate([1.0, 1.0], [1.0, 2.0], Aggregation.ALL) == 1.0
        assert aggregate([1.0, 0.99], [1.0, 1.0], Aggregation.ALL) == 0.0
        assert aggregate([1.0, 0.0], [1.0, 1.0], Aggregation.ALL) == 0.0
        # only the criteria that scored count
        assert aggregate([1.0, None, 1.0], [1.0, 1.0, 1.0], Aggregation.ALL) == 1.0
        assert aggregate([None, 0.5], [1.0, 1.0], Aggregation.ALL) == 0.0

    def test_none_mode(self) -> None:
        assert aggregate([1.0, 0.5], [1.0, 1.0], Aggregation.NONE) is None

    @pytest.mark.parametrize("mode", list(Aggregation))
    def test_nothing_scored(self, mode: Aggregation) -> None:
        assert aggregate([None, None], [1.0, 2.0], mode) is None
        assert aggregate([], [], mode) is None

    def test_single(self) -> None:
        assert aggregate([0.25], [7.0], Aggregation.WEIGHTED_MEAN) == 0.25

    def test_length_mismatch(self) -> None:
        with pytest.raises(ValueError, match="length"):
            aggregate([1.0], [1.0, 2.0], Aggregation.MIN)


# ----------------------------------------------------------------------------- through the judge


RUBRIC_YAML = """\
judge_params:
  prompt_template: "{question} {answer}"
  response_format: JSON
rubric_judge_params:
  aggregation: MODE
  criteria:
    - id: correct
      description: Is it correct?
      include_explanation: false
      weight: 3
    - id: complete
      description: Is it complete?
      judgment_type: ENUM
      judgment_scores:
        complete: 1.0
        partial: 0.5
        incomplete: 0.0
      include_explanation: false
      weight: 2
    - id: missing_info
      description: Did it handle missing information?
      judgment_type: ENUM
      judgment_scores:
        acknowledged: 1.0
        guessed: 0.0
        not_applicable: null
      include_explanation: false
      weight: 4
    - id: notes
      description: Anything else?
      judgment_type: TEXT
      include_explanation: false
"""


def rubric_judge(tmp_path: Path, mode: str = "WEIGHTED_MEAN") -> Judge:
    path = tmp_path / "rubric.yaml"
    text = RUBRIC_YAML.replace("MODE", mode)
    if mode != "WEIGHTED_MEAN":
        text = (
            text.replace("      weight: 3\n", "")
            .replace("      weight: 2\n", "")
            .replace("      weight: 4\n", "")
        )
    path.write_text(text, encoding="utf-8")
    return Judge(load_judge_config(path))


def answer(correct: str, complete: str, missing_info: str, notes: str = "none") -> Completion:
    return Completion(
        json.dumps({"correct": correct, "complete": complete, "missing_info": missing_info, "notes": notes})
    )


class TestRubricJudge:
    def test_unscored_criterion_warned(self, tmp_path: Path) -> None:
        warnings = rubric_judge(tmp_path).config.warnings
        assert len(warnings) == 1
        assert "notes" in warnings[0]

    @pytest.mark.parametrize(
        ("values", "expected"),
        [
            # (3*1 + 2*0.5 + 4*1) / 9
            (("Yes", "partial", "acknowledged"), 8 / 9),
            # (3*0 + 2*1 + 4*0) / 9
            (("No", "complete", "guessed"), 2 / 9),
            # N/A: (3*1 + 2*0.5) / 5 -- weight 4 drops out of both sides
            (("Yes", "partial", "not_applicable"), 4 / 5),
            (("Yes", "complete", "not_applicable"), 1.0),
            (("No", "incomplete", "not_applicable"), 0.0),
        ],
    )
    def test_weighted_mean(self, tmp_path: Path, values: tuple[str, str, str], expected: float) -> None:
        out = rubric_judge(tmp_path).interpret(answer(*values))
        assert out.status == "ok"
        assert out.aggregate_score == pytest.approx(expected)
        assert out.score == out.aggregate_score
        assert out.field_scores["notes"] is None

    def test_na_reported_but_unscored(self, tmp_path: Path) -> None:
        out = rubric_judge(tmp_path).interpret(answer("Yes", "partial", "not_applicable"))
        assert out.field_values["missing_info"] == "not_applicable"
        assert out.field_scores == {"correct": 1.0, "complete": 0.5, "missing_info": None, "notes": None}
        assert out.field_values["notes"] == "none"

    @pytest.mark.parametrize(
        ("mode", "values", "expected"),
        [
            ("MIN", ("Yes", "partial", "acknowledged"), 0.5),
            ("MIN", ("Yes", "complete", "not_applicable"), 1.0),
            ("MIN", ("Yes", "complete", "guessed"), 0.0),
            ("ALL", ("Yes", "complete", "acknowledged"), 1.0),
            ("ALL", ("Yes", "complete", "not_applicable"), 1.0),
            ("ALL", ("Yes", "partial", "acknowledged"), 0.0),
            ("ALL", ("No", "complete", "not_applicable"), 0.0),
            ("NONE", ("Yes", "complete", "acknowledged"), None),
            ("WEIGHTED_MEAN", ("Yes", "partial", "acknowledged"), 8 / 9),
        ],
    )
    def test_modes(
        self, tmp_path: Path, mode: str, values: tuple[str, str, str], expected: float | None
    ) -> None:
        judge = rubric_judge(tmp_path, mode)
        out = judge.interpret(answer(*values))
        assert out.status == "ok"
        if expected is None:
            assert out.aggregate_score is None
            assert out.score is None
            assert out.field_scores["correct"] == 1.0  # field scores are still reported
        else:
            assert out.aggregate_score == pytest.approx(expected)

    def test_default_weights_give_plain_mean(self, tmp_path: Path) -> None:
        path = tmp_path / "plain.yaml"
        path.write_text(
            RUBRIC_YAML.replace("MODE", "WEIGHTED_MEAN")
            .replace("      weight: 3\n", "")
            .replace("      weight: 2\n", "")
            .replace("      weight: 4\n", ""),
            encoding="utf-8",
        )
        out = Judge(load_judge_config(path)).interpret(answer("No", "partial", "acknowledged"))
        assert out.aggregate_score == pytest.approx((0.0 + 0.5 + 1.0) / 3)

    def test_nothing_scored(self, tmp_path: Path) -> None:
        config = load_judge_config(
            {
                "judge_params": {"prompt_template": "{q}"},
                "rubric_judge_params": {
                    "criteria": [
                        {
                            "id": "applies",
                            "description": "d",
                            "judgment_type": "ENUM",
                            "judgment_scores": {"yes": 1.0, "n_a": None},
                            "include_explanation": False,
                        },
                        {
                            "id": "note",
                            "description": "d",
                            "judgment_type": "TEXT",
                            "include_explanation": False,
                        },
                    ]
                },
            }
        )
        out = Judge(config).interpret(Completion('{"applies": "n_a", "note": "x"}'))
        assert out.status == "ok"
        assert out.aggregate_score is None
        assert out.score is None
        assert out.field_values == {"applies": "n_a", "note": "x"}

    def test_int_and_text_criteria_with_scores_count(self) -> None:
        config = load_judge_config(
            {
                "judge_params": {"prompt_template": "{q}"},
                "rubric_judge_params": {
                    "criteria": [
                        {
                            "id": "depth",
                            "description": "1-3",
                            "judgment_type": "INT",
                            "judgment_scores": {"1": 0.0, "2": 0.5, "3": 1.0},
                            "include_explanation": False,
                        },
                        {
                            "id": "tone",
                            "description": "t",
                            "judgment_type": "TEXT",
                            "judgment_scores": {"friendly": 1.0, "rude": 0.0},
                            "include_explanation": False,
                            "weight": 3,
                        },
                    ]
                },
            }
        )
        assert config.warnings == []
        out = Judge(config).interpret(Completion('{"depth": 2, "tone": "Friendly"}'))
        assert out.field_scores == {"depth": 0.5, "tone": 1.0}
        assert out.aggregate_score == pytest.approx((0.5 + 3 * 1.0) / 4)


class TestSimpleJudge:
    def make(self, **params: Any) -> Judge:
        return Judge(load_judge_config({"judge_params": {"prompt_template": "{request}", **params}}))

    @pytest.mark.parametrize(("label", "score"), [("Yes", 1.0), ("No", 0.0)])
    def test_bool(self, label: str, score: float) -> None:
        out = self.make().interpret(Completion(json.dumps({"judgment": label})))
        assert out.status == "ok"
        assert out.aggregate_score is None
        assert out.score == score
        assert out.field_scores == {"judgment": score}

    def test_enum(self) -> None:
        judge = self.make(judgment_type="ENUM", judgment_scores={"Yes": 1.0, "Unsure": 0.5, "No": 0.0})
        out = judge.interpret(Completion('{"judgment": "unsure"}'))
        assert out.field_values == {"judgment": "Unsure"}
        assert out.score == 0.5
        assert out.aggregate_score is None

    def test_enum_na(self) -> None:
        judge = self.make(judgment_type="ENUM", judgment_scores={"good": 1.0, "n_a": None})
        out = judge.interpret(Completion('{"judgment": "n_a"}'))
        assert out.status == "ok"
        assert out.score is None

    def test_unscored_types(self) -> None:
        for judgment_type, text in (("INT", "4"), ("FLOAT", "0.5"), ("TEXT", '"fine"')):
            judge = self.make(judgment_type=judgment_type)
            out = judge.interpret(Completion('{"judgment": ' + text + "}"))
            assert out.status == "ok"
            assert out.score is None
            assert out.aggregate_score is None

    def test_int_with_scores(self) -> None:
        judge = self.make(
            judgment_type="INT", judgment_scores={"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0}
        )
        out = judge.interpret(Completion('{"judgment": "4"}'))
        assert out.field_values == {"judgment": 4}
        assert out.score == 0.75

    def test_explanation_does_not_score(self) -> None:
        out = self.make(include_explanation=True).interpret(
            Completion('{"explanation": "ok", "judgment": "No"}')
        )
        assert out.field_scores == {"explanation": None, "judgment": 0.0}
        assert out.score == 0.0
