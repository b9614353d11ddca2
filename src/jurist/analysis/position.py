"""The position prior of a pairwise judge that read both orders: how far it favours the answer shown first.

For one row, let the judge's log-odds for the first-shown answer be ``c + b`` in order ab (a shown first)
and ``-c + b`` in order ba, where ``c`` is what the content says for a and ``b`` the pull of the first
place. Their mean is ``b`` whatever the content: the row's position prior. Over a run, the mean of the
rows' priors estimates the judge's prior, with a t interval. 0 is no position bias; +2.2 means an even
pair gets about 0.9 for whichever answer is shown first. Small judges sit far from 0 (Qwen2.5-Coder-1.5B
named the first-shown answer 92 % of the time on LLMBar).

Probabilities come from a judge that scores them (``scoring: LOGPROBS``, or the vote shares of samples):
its ``ab_p_first`` and ``ba_p_first`` columns. Each is clipped to [1e-6, 1 - 1e-6] before the log-odds, so
that a vote share of 0 or 1 stays finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CLIP", "format_prior", "position_prior", "row_prior"]

CLIP = 1e-6


def _logit(p: float) -> float:
    p = min(max(p, CLIP), 1 - CLIP)
    return math.log(p / (1 - p))


def row_prior(p_first_ab: float | None, p_first_ba: float | None) -> float | None:
    """One row's position prior: the mean of the log-odds of the first-shown answer in the two orders
    (None when either probability is missing)."""
    if p_first_ab is None or p_first_ba is None:
        return None
    if math.isnan(p_first_ab) or math.isnan(p_first_ba):
        return None
    return (_logit(p_first_ab) + _logit(p_first_ba)) / 2


def position_prior(
    p_first_ab: Sequence[float | None], p_first_ba: Sequence[float | None], confidence: float = 0.95
) -> dict[str, Any] | None:
    """The mean position prior over the rows with both probabilities, with its t interval, and the
    probability it gives the first-shown answer of an even pair; None without rows."""
    if len(p_first_ab) != len(p_first_ba):
        raise ValueError(f"{len(p_first_ab)} ab probabilities but {len(p_first_ba)} ba ones")
    priors = [p for p in map(row_prior, p_first_ab, p_first_ba) if p is not None]
    n = len(priors)
    if n == 0:
        return None
    mean = sum(priors) / n
    if n > 1:
        sd = math.sqrt(sum((p - mean) ** 2 for p in priors) / (n - 1))
        half = _quantile(confidence, n - 1) * sd / math.sqrt(n)
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


def _quantile(confidence: float, dof: int) -> float:
    """The two-sided quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy import stats  # loaded when a statistic is computed, not with jurist

    return float(stats.t.ppf(0.5 + confidence / 2, dof))


def format_prior(prior: Mapping[str, Any]) -> str:
    """A prior as one line of text."""
    low, high = prior.get("low"), prior.get("high")
    bounds = "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"
    even = prior["first_shown_probability"]
    return (
        f"position prior {prior['mean_log_odds']:+.2f} log-odds for the first-shown answer{bounds} over "
        f"{prior['rows']} rows (an even pair gets {even:.2f} for the answer shown first; 0 is no bias)"
    )
