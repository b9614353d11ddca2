"""``rubric_judge_params``: several criteria judged in one call (Oumi's section), and what a rubric judge's
``judge_params`` may not set."""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field, field_validator, model_validator

from jurist.config.judge_params import JudgeParams
from jurist.config.rules import check_scores, coerce_scores
from jurist.config.types import IDENTIFIER, Aggregation, JudgmentType, StrictModel


class Criterion(StrictModel):
    """One criterion of a rubric judge: one output field (plus its explanation)."""

    id: str
    """The criterion's output field (letters, digits and underscores); its column is <judge>.<id>."""
    description: str
    """What the criterion asks, shown to the model."""
    judgment_type: JudgmentType = JudgmentType.BOOL
    """The criterion's judgment type: BOOL, INT, FLOAT, TEXT or ENUM."""
    judgment_scores: dict[str, float | None] | None = None
    """Label -> score for this criterion (as judge_params.judgment_scores)."""
    include_explanation: bool = True
    """Ask for <id>_explanation before the judgment."""
    weight: float = Field(default=1.0, gt=0.0)
    """The criterion's weight in WEIGHTED_MEAN aggregation (> 0)."""

    @field_validator("judgment_scores", mode="before")
    @classmethod
    def _labels_are_strings(cls, value: Any) -> Any:
        return coerce_scores(value)

    @field_validator("id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not IDENTIFIER.fullmatch(value):
            raise ValueError(
                f"criterion id {value!r} must be identifier-like: letters, digits and underscores, "
                "not starting with a digit"
            )
        if value == "explanation" or value.endswith("_explanation"):
            raise ValueError(
                f"criterion id {value!r} is reserved: 'explanation' and '*_explanation' name the "
                "generated explanation fields"
            )
        return value

    @field_validator("weight")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"weight must be finite, got {value!r}")
        return value

    @model_validator(mode="after")
    def _scores_fit_type(self) -> Criterion:
        check_scores(self.judgment_type, self.judgment_scores, f"criterion {self.id!r}")
        return self


class RubricJudgeParams(StrictModel):
    """Several criteria judged in one call (Oumi's ``rubric_judge_params``)."""

    aggregation: Aggregation = Aggregation.WEIGHTED_MEAN
    """How the criteria's scores combine into the judge's score: WEIGHTED_MEAN, MIN, ALL (1.0 when every
    scored criterion is 1.0) or NONE."""
    criteria: list[Criterion] = Field(min_length=1)
    """The criteria, judged in one call, one output field each (at least one)."""

    @model_validator(mode="after")
    def _unique_ids(self) -> RubricJudgeParams:
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.id in seen:
                raise ValueError(f"criterion id {criterion.id!r} appears twice")
            seen.add(criterion.id)
        return self

    def problem_with(self, jp: JudgeParams) -> str | None:
        """What a rubric judge's ``judge_params`` may not set or ask for (None: nothing)."""
        for key in ("judgment_type", "judgment_scores", "include_explanation"):
            if key in jp.model_fields_set:
                return (
                    f"judge_params.{key} is not allowed in a rubric judge: set it per criterion in "
                    "rubric_judge_params.criteria"
                )
        if jp.scoring.reads_labels:
            return (
                f"judge_params.scoring {jp.scoring.value} reads one label distribution after one prefill; "
                "a rubric judge writes several fields (use label_probabilities in GENERATE scoring instead)"
            )
        return None
