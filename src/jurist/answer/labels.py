"""Scores from token probabilities: label distributions, expected scores, confidence.

A label judgment is a distribution, not one token. In ``LOGPROBS`` scoring the engine reads the
probability of every allowed label right after the prompt (plus the answer's fixed prefix, e.g.
``{"judgment": "``) in one prefill, with no decoding; in generation mode with
``judge_params.label_probabilities``, the same distribution is read from the log-probabilities of the
generated token where each label field's value begins. From a distribution this module derives:

* ``p(label)``: the label log-probabilities renormalized over the allowed labels (they sum to 1);
* the most likely label, ``confidence`` (its probability) and ``entropy`` (in nats);
* ``expected_score``: sum of p(label) x score(label) over the labels that carry a score, renormalized
  over them (an N/A label's mass is left out, as N/A is left out of aggregates); for an INT scale this
  is G-Eval's probability-weighted score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from jurist.answer.fields import OutputField
from jurist.config.types import JudgmentType


@dataclass(frozen=True)
class LabelDistribution:
    """A probability for every allowed label, and what follows from it."""

    probs: dict[str, float]
    expected_score: float | None

    @cached_property
    def top(self) -> str:
        return max(self.probs, key=self.probs.__getitem__)

    @property
    def confidence(self) -> float:
        return self.probs[self.top]

    @property
    def entropy(self) -> float:
        return -sum(p * math.log(p) for p in self.probs.values() if p > 0)


def normalize(logprobs: Mapping[str, float]) -> dict[str, float]:
    """Softmax over the given labels' log-probabilities (labels at -inf get 0)."""
    finite = [v for v in logprobs.values() if math.isfinite(v)]
    if not finite:
        raise ValueError("no label has a finite log-probability")
    top = max(finite)
    weights = {label: math.exp(v - top) if math.isfinite(v) else 0.0 for label, v in logprobs.items()}
    total = sum(weights.values())
    return {label: w / total for label, w in weights.items()}


def expected_score(probs: Mapping[str, float], scores: Mapping[str, float | None]) -> float | None:
    """sum p(label) * score(label) over scored labels, renormalized over them; None if none is scored."""
    scored = [(probs.get(label, 0.0), score) for label, score in scores.items() if score is not None]
    mass = sum(p for p, _ in scored)
    if not scored or mass <= 0:
        return None
    return sum(p * s for p, s in scored) / mass


def distribution(f: OutputField, logprobs: Mapping[str, float]) -> LabelDistribution:
    """The distribution of a label field from its labels' log-probabilities."""
    probs = normalize(logprobs)
    bool_scores: Mapping[str, float | None] = {"Yes": 1.0, "No": 0.0}
    scores = bool_scores if f.judgment_type is JudgmentType.BOOL else (f.scores or {})
    return LabelDistribution(probs, expected_score(probs, scores))


# ------------------------------------------------------------------- distributions in generation


def _token_at(raw: str, tokens: Sequence[str], start: int) -> tuple[int, int] | None:
    """(index, text offset) of the generated token that holds character ``start`` of ``raw``.

    Tokens are aligned from the end of the answer, where the label fields are: the text before them
    (an explanation) may hold characters split across tokens, whose pieces do not decode on their own.
    A trailing token absent from the text (the end-of-sequence token) is skipped.
    """
    end = len(raw)
    for index in range(len(tokens) - 1, -1, -1):
        token = tokens[index]
        if not token:
            continue
        if raw.endswith(token, 0, end):
            begin = end - len(token)
            if begin <= start < end:
                return index, begin
            end = begin
        elif end != len(raw):
            return None
    return None


def generated_distribution(
    f: OutputField,
    texts: Mapping[str, str],
    suffix: str,
    start: int,
    raw: str,
    tokens: Sequence[str],
    alternatives: Sequence[Mapping[str, float]],
) -> LabelDistribution | None:
    """A label field's distribution read off a generated answer's per-token top alternatives.

    ``start`` is where the field's value begins in ``raw`` (see
    :meth:`~jurist.answer.formats.AnswerFormat.value_offset`); ``texts`` are the
    labels as written and ``suffix`` what follows a value. At the generated token that holds the value's
    first character, each alternative token (with its log-probability) is matched to the labels whose
    text agrees with it; a token that agrees with several labels (a shared first piece) is split evenly
    between them. The result is renormalized over the labels. Alternatives outside the reported top-k are
    not seen. None when no alternative leads to a label.
    """
    located = _token_at(raw, tokens, start)
    if located is None or located[0] >= len(alternatives):
        return None
    position, offset = located
    before = raw[offset:start]  # the part of that token preceding the value (e.g. an opening quote)
    mass: dict[str, float] = dict.fromkeys(texts, 0.0)
    for text, logprob in alternatives[position].items():
        if not text.startswith(before) or len(text) == len(before):
            continue
        piece = text[len(before) :]
        matches = [
            label
            for label, label_text in texts.items()
            if (label_text + suffix).startswith(piece) or piece.startswith(label_text + suffix)
        ]
        for label in matches:
            mass[label] += math.exp(logprob) / len(matches)
    total = sum(mass.values())
    if total <= 0:
        return None
    logprobs = {label: math.log(m / total) if m > 0 else -math.inf for label, m in mass.items()}
    return distribution(f, logprobs)
