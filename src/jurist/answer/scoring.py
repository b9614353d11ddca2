"""Scores: one per judgment field, and a rubric's aggregate, exactly as Oumi documents them.

* BOOL scores 1.0 / 0.0; ENUM scores what ``judgment_scores`` maps the label to (null means N/A: no score);
  INT, FLOAT and TEXT score only through ``judgment_scores`` (matched numerically for INT and FLOAT,
  exactly for TEXT); explanations never score.
* ``aggregate_score`` ranges over the criteria that scored on the row, so an N/A or an unscoreable
  criterion drops out of numerator and denominator alike. WEIGHTED_MEAN is sum(w * s) / sum(w); MIN is the
  lowest score; ALL is 1.0 when every scored criterion is 1.0, else 0.0; NONE gives no aggregate. When no
  criterion scored, the aggregate is None.

:class:`Scorer` applies both to one row's values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.answer.fields import OutputField
from jurist.config.models import RubricJudgeParams
from jurist.config.types import Aggregation, JudgmentType


def field_score(f: OutputField, value: Any) -> float | None:
    """The score of one typed field value (None: no score)."""
    if not f.is_judgment or value is None:
        return None
    if f.judgment_type is JudgmentType.BOOL:
        return 1.0 if value else 0.0
    scores = f.scores
    if not scores:
        return None
    if f.judgment_type in (JudgmentType.INT, JudgmentType.FLOAT):
        for label, score in scores.items():
            if float(label) == float(value):
                return score
        return None
    if f.judgment_type is JudgmentType.TEXT:
        if value in scores:
            return scores[value]
        folded = {k.strip().casefold(): v for k, v in scores.items()}
        return folded.get(str(value).strip().casefold())
    return scores.get(value)


def aggregate(scores: Sequence[float | None], weights: Sequence[float], mode: Aggregation) -> float | None:
    """Combine per-criterion scores (None = did not score) under an aggregation mode."""
    if len(scores) != len(weights):
        raise ValueError("scores and weights differ in length")
    if mode is Aggregation.NONE:
        return None
    scored = [(s, w) for s, w in zip(scores, weights, strict=True) if s is not None]
    if not scored:
        return None
    if mode is Aggregation.WEIGHTED_MEAN:
        total = sum(w for _, w in scored)
        return sum(s * w for s, w in scored) / total
    if mode is Aggregation.MIN:
        return min(s for s, _ in scored)
    return 1.0 if all(s == 1.0 for s, _ in scored) else 0.0


def score_fields(fields: Sequence[OutputField], values: Mapping[str, Any]) -> dict[str, float | None]:
    """``field_scores``: one entry per output field (None for explanations and unscored fields)."""
    return {f.name: field_score(f, values.get(f.name)) for f in fields}


@dataclass(frozen=True)
class Scores:
    """The scores of one row's values: per field, the rubric's aggregate, and the row's single score."""

    fields: dict[str, float | None]
    aggregate: float | None
    score: float | None


class Scorer:
    """Scores a judge's typed values: a rubric's criteria aggregate into the row's score; a simple judge's
    score is its judgment's."""

    def __init__(self, fields: Sequence[OutputField], rubric: RubricJudgeParams | None) -> None:
        self.fields = tuple(fields)
        self.rubric = rubric

    def score(self, values: Mapping[str, Any]) -> Scores:
        field_scores = score_fields(self.fields, values)
        if self.rubric is None:
            return Scores(field_scores, None, field_scores.get("judgment"))
        agg = aggregate(
            [field_scores[c.id] for c in self.rubric.criteria],
            [c.weight for c in self.rubric.criteria],
            self.rubric.aggregation,
        )
        return Scores(field_scores, agg, agg)
