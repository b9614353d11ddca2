"""The metrics' formulas, exactly as scikit-plots' ``LLMJudge`` documents them, and their undefined cases.

A score is a float in [0, 1], or None (NaN in :class:`~jurist.scikitplots.results.JudgeResult`) with the
reason it is undefined; an undefined score is not a failure.

=====================  ====================================================  ===============================
metric                 score                                                 undefined when
=====================  ====================================================  ===============================
answer_correctness     TP / (TP + (FP + FN) / 2)                             TP = FP = FN = 0
answer_relevance       (rating - 1) / 4                                      never
context_precision      sum of precision@k over relevant ranks k / n_relevant  no contexts (0.0: none relevant)
context_recall         n_attributed / n_statements                           no statement, or no contexts
faithfulness           n_supported / n_claims                                no claim, or no contexts
criteria_score         (rating - 1) / (scale - 1)                            never
=====================  ====================================================  ===============================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    """A metric's score, or None and the reason it is undefined."""

    score: float | None
    undefined: str | None = None

    def __post_init__(self) -> None:
        if (self.score is None) == (self.undefined is None):
            raise ValueError("a score is either a number or undefined with a reason")


def statement_f1(tp: int, fp: int, fn: int) -> Scored:
    """answer_correctness: TP / (TP + (FP + FN) / 2); undefined when all three are 0."""
    if min(tp, fp, fn) < 0:
        raise ValueError(f"counts must not be negative, got tp={tp}, fp={fp}, fn={fn}")
    if tp == fp == fn == 0:
        return Scored(None, "neither the answer nor the reference makes a statement (tp = fp = fn = 0)")
    return Scored(tp / (tp + (fp + fn) / 2))


def rating_score(rating: int, scale: int) -> Scored:
    """answer_relevance (scale 5) and criteria_score: (rating - 1) / (scale - 1)."""
    if scale < 2:
        raise ValueError(f"scale must be at least 2, got {scale}")
    if not 1 <= rating <= scale:
        raise ValueError(f"rating {rating} is outside 1-{scale}")
    return Scored((rating - 1) / (scale - 1))


def average_precision(relevant: Sequence[bool]) -> Scored:
    """context_precision: the mean of precision@k over the ranks k of the relevant contexts, in retrieval
    order; 0.0 when none is relevant; undefined without contexts."""
    if not relevant:
        return Scored(None, "no contexts were given (no call made)")
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, 1):
        if is_relevant:
            hits += 1
            total += hits / rank
    return Scored(total / hits if hits else 0.0)


def fraction(part: int, whole: int, undefined: str) -> Scored:
    """context_recall and faithfulness: ``part / whole``; undefined when whole is 0 (``undefined`` says
    why)."""
    if not 0 <= part <= whole:
        raise ValueError(f"{part} of {whole} is not a fraction")
    if whole == 0:
        return Scored(None, undefined)
    return Scored(part / whole)
