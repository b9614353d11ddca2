"""Oumi's rules on judgment values, shared by the config models: scores per label, few-shot values; and
Oumi's rule-based judges (``rule_judge_params``: :class:`RuleJudgeParams`, the ``regex`` rule).

Each check raises ``ValueError`` with a message naming where the problem is; pydantic turns it into a
validation error that :mod:`jurist.config.loading` reports with the file and the dotted key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, ValidationError, field_validator, model_validator

from jurist.config.types import JudgmentType, ResponseFormat, StrictModel


def check_scores(judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str) -> None:
    """Apply Oumi's rules on ``judgment_scores`` for one judgment."""
    if scores is None:
        if judgment_type is JudgmentType.ENUM:
            raise ValueError(f"{where}: an ENUM judgment needs judgment_scores (its labels and their scores)")
        return
    if not scores:
        raise ValueError(f"{where}: judgment_scores is empty")
    if judgment_type is JudgmentType.BOOL:
        raise ValueError(
            f"{where}: BOOL judgments score 1.0 / 0.0 automatically; judgment_scores is for ENUM, INT, "
            "FLOAT and TEXT"
        )
    for label, score in scores.items():
        if not str(label).strip():
            raise ValueError(f"{where}: judgment_scores has an empty label")
        if score is None:
            if judgment_type is not JudgmentType.ENUM:
                raise ValueError(
                    f"{where}: label {label!r} maps to null; null (N/A) scores are allowed only for ENUM "
                    f"judgments, not {judgment_type.value}"
                )
            continue
        if not math.isfinite(score):
            raise ValueError(f"{where}: label {label!r} has a non-finite score {score!r}")
    if judgment_type is JudgmentType.INT:
        for label in scores:
            if not re.fullmatch(r"-?\d+", str(label).strip()):
                raise ValueError(f"{where}: INT judgment_scores label {label!r} is not an integer")
    if judgment_type is JudgmentType.FLOAT:
        for label in scores:
            try:
                float(label)
            except ValueError:
                raise ValueError(f"{where}: FLOAT judgment_scores label {label!r} is not a number") from None


def coerce_scores(value: Any) -> Any:
    """YAML reads ``1: 0.0`` with an int key; labels are strings."""
    if isinstance(value, Mapping):
        return {str(key): score for key, score in value.items()}
    return value


def check_example_value(
    value: Any, judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str
) -> None:
    """A few-shot judgment must be a value the judge itself could answer."""
    text = str(value).strip()
    if judgment_type is JudgmentType.BOOL:
        if not isinstance(value, bool) and text.lower() not in ("yes", "no", "true", "false"):
            raise ValueError(f"{where}: {value!r} is not a BOOL judgment (Yes/No/True/False)")
    elif judgment_type is JudgmentType.ENUM:
        labels = list(scores or ())
        if text.casefold() not in {label.casefold() for label in labels}:
            raise ValueError(f"{where}: {value!r} is not one of the labels {', '.join(labels)}")
    elif judgment_type in (JudgmentType.INT, JudgmentType.FLOAT):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{where}: {value!r} is not a number") from None
        if judgment_type is JudgmentType.INT:
            if isinstance(value, bool) or not number.is_integer():
                raise ValueError(f"{where}: {value!r} is not an integer")
            if scores and int(number) not in {int(label) for label in scores}:
                raise ValueError(f"{where}: {value!r} is not one of {', '.join(scores)}")


def _message(text: str) -> str:
    return text.removeprefix("Value error, ")


class RegexRuleConfig(StrictModel):
    """Oumi's ``regex`` rule: does ``pattern`` match the text of ``input_field``? ``inverse`` passes when it
    does not. ``match_mode``: ``search`` (anywhere), ``match`` (at the start) or ``fullmatch``; ``flags``:
    Python's ``re`` flags as a number (2 = IGNORECASE)."""

    pattern: str = Field(min_length=1)
    """The regular expression (Python's re syntax)."""
    input_field: str = "text"
    """The column whose text is matched."""
    match_mode: str = "search"
    """search (anywhere), match (at the start) or fullmatch (the whole text)."""
    inverse: bool = False
    """Pass when the pattern does not match."""
    flags: int = Field(default=0, ge=0)
    """Python's re flags as a number (2 = IGNORECASE)."""

    @model_validator(mode="after")
    def _compiles(self) -> RegexRuleConfig:
        if self.match_mode not in ("search", "match", "fullmatch"):
            raise ValueError(f"match_mode {self.match_mode!r} must be search, match or fullmatch")
        try:
            re.compile(self.pattern, self.flags)
        except (re.error, ValueError) as exc:
            raise ValueError(f"pattern {self.pattern!r} is not a valid regular expression: {exc}") from None
        return self


RULE_TYPES = {"regex": RegexRuleConfig}


class RuleJudgeParams(StrictModel):
    """A judge that applies a deterministic rule and runs no model (Oumi's ``rule_judge_params``).

    ``rule_type`` names the rule (Oumi's registry has ``regex``), ``rule_config`` its settings,
    ``input_fields`` the columns every row must have. The judgment is True when the rule passes (score
    1.0), False otherwise (0.0)."""

    takes_samples: ClassVar[bool] = False
    """Such a judge does not vote on repeated samples (``judge_params.samples`` is refused)."""

    rule_type: str
    """The rule: regex."""
    input_fields: list[str] = Field(min_length=1)
    """Columns every row must have (a row without one is missing_input)."""
    rule_config: dict[str, Any] = Field(default_factory=dict)
    """The rule's settings (for regex: pattern, input_field, match_mode, inverse, flags; below)."""
    response_format: ResponseFormat = ResponseFormat.XML
    """Oumi's field, accepted as it is: a rule writes no model answer, so it changes nothing."""
    judgment_type: JudgmentType = JudgmentType.BOOL
    """Must be BOOL: a rule passes or fails."""
    judgment_scores: dict[str, float | None] | None = None
    """Must be unset: a pass scores 1.0, a failure 0.0."""

    @field_validator("input_fields")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        if not all(isinstance(name, str) and name.strip() for name in value):
            raise ValueError("input_fields must be non-empty names")
        return value

    def problem_with(self, jp: Any) -> str | None:
        """What a rule judge's ``judge_params`` (:class:`~jurist.config.judge_params.JudgeParams`) may not
        set: it runs no model (None: nothing)."""
        for key in ("scoring", "label_probabilities", "examples"):
            if key in jp.model_fields_set:
                return f"judge_params.{key} does not apply to a rule judge: it runs no model"
        return None

    @model_validator(mode="after")
    def _known_rule(self) -> RuleJudgeParams:
        rule = RULE_TYPES.get(self.rule_type)
        if rule is None:
            raise ValueError(f"rule_type {self.rule_type!r} is unknown; rule types: {', '.join(RULE_TYPES)}")
        if self.judgment_type is not JudgmentType.BOOL or self.judgment_scores:
            raise ValueError(
                f"the {self.rule_type} rule passes or fails: judgment_type must be BOOL, without "
                "judgment_scores"
            )
        try:
            rule.model_validate(self.rule_config)
        except ValidationError as exc:
            problems = "; ".join(
                f"rule_config.{'.'.join(str(p) for p in e['loc']) or '(all)'}: "
                + ("unknown key" if e["type"] == "extra_forbidden" else _message(e["msg"]))
                for e in exc.errors()
            )
            raise ValueError(problems) from None
        return self

    @property
    def regex(self) -> RegexRuleConfig:
        """The rule's settings, validated."""
        return RegexRuleConfig.model_validate(self.rule_config)
