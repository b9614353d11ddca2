"""The position prior of a pairwise judge that read both orders: how far it favours the answer shown first.

For one row, let the judge's log-odds for the first-shown answer be ``c + b`` in order ab (a shown first)
and ``-c + b`` in order ba, where ``c`` is what the content says for a and ``b`` the pull of the first
place. Their mean is ``b`` whatever the content: the row's position prior. Over a run, the mean of the
rows' priors estimates the judge's prior, with a t interval. 0 is no position bias; +2.2 means an even
pair gets about 0.9 for whichever answer is shown first. Small judges sit far from 0 (Qwen2.5-Coder-1.5B
named the first-shown answer 92 % of the time on LLMBar).

Probabilities come from a judge that scores them (``scoring: LOGPROBS``, or the vote shares of samples):
its ``ab_p_first`` and ``ba_p_first`` columns. Each is clipped to [1e-6, 1 - 1e-6] before the log-odds
(:func:`jurist.stats.calibration.logit`), so that a vote share of 0 or 1 stays finite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import starmap
from typing import Any

from jurist.stats.calibration import logit


def row_prior(p_first_ab: float | None, p_first_ba: float | None) -> float | None:
    """One row's position prior: the mean of the log-odds of the first-shown answer in the two orders
    (None when either probability is missing)."""
    if p_first_ab is None or p_first_ba is None:
        return None
    if math.isnan(p_first_ab) or math.isnan(p_first_ba):
        return None
    return (logit(p_first_ab) + logit(p_first_ba)) / 2


def position_prior(
    p_first_ab: Sequence[float | None], p_first_ba: Sequence[float | None], confidence: float = 0.95
) -> dict[str, Any] | None:
    """The mean position prior over the rows with both probabilities, with its t interval, and the
    probability it gives the first-shown answer of an even pair; None without rows."""
    if len(p_first_ab) != len(p_first_ba):
        raise ValueError(f"{len(p_first_ab)} ab probabilities but {len(p_first_ba)} ba ones")
    return streamed_position_prior(lambda: zip(p_first_ab, p_first_ba, strict=True), confidence)


def streamed_position_prior(
    pairs: Callable[[], Iterable[tuple[float | None, float | None]]], confidence: float = 0.95
) -> dict[str, Any] | None:
    """:func:`position_prior` over the rows' ``(p_first_ab, p_first_ba)`` that ``pairs()`` yields, without
    holding them: ``pairs`` is called twice (the mean, then the spread around it), so that memory stays flat
    however many rows a run has (a run reads them from its committed parts, one part at a time)."""

    def priors() -> Iterator[float]:
        return (p for p in starmap(row_prior, pairs()) if p is not None)

    n = 0

    def counted() -> Iterator[float]:
        nonlocal n
        for prior in priors():
            n += 1
            yield prior

    total = sum(counted())  # sum() as over a list of the priors: the same float on every Python version
    if n == 0:
        return None
    mean = total / n
    if n > 1:
        from scipy import stats  # loaded when a statistic is computed, not with jurist

        sd = math.sqrt(sum((p - mean) ** 2 for p in priors()) / (n - 1))
        half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    else:
        half = math.inf
    return {
        "mean_log_odds": mean,
        "low": mean - half if math.isfinite(half) else None,
        "high": mean + half if math.isfinite(half) else None,
        "rows": n,
        "first_shown_probability": 1 / (1 + math.exp(-mean)),
        "confidence": confidence,
    }
