"""Selective evaluation with a guarantee: confidence thresholds chosen by fixed-sequence testing.

A judge keeps a verdict when its confidence is at least a threshold and abstains (or escalates) otherwise.
Given labelled rows, :func:`choose_threshold` picks the lowest threshold for which the agreement of the
kept verdicts with the labels is certified to be at least ``target`` with probability at least
``1 - delta`` ("Trust or Escalate", Jung et al., ICLR 2025):

* the candidate thresholds are the labelled rows' distinct confidences, from the highest down, starting
  at the first that keeps at least ``MIN_KEPT_SHARE`` of the rows and enough rows for a certificate to be
  possible at all (:func:`min_labels`): a start on a handful of rows would fail by chance and end the
  sequence. This order depends on the confidences only, never on the labels, so the guarantee holds;
* at each candidate the null hypothesis "the disagreement rate of verdicts kept at this threshold exceeds
  ``1 - target``" is tested with the exact binomial p-value ``P(Binomial(n, 1 - target) <= errors)``;
* the sequence stops at the first candidate whose null cannot be rejected at level ``delta``; the last
  rejected candidate is the threshold. Testing in a fixed order controls the chance of any false rejection
  at ``delta`` without a correction for the number of candidates.

Rejecting at level ``delta`` is the same as the exact (Clopper-Pearson) upper ``1 - delta`` bound of the
disagreement rate being at most ``1 - target`` (:func:`clopper_pearson_upper`). A cascade
(:func:`calibrate_cascade`) calibrates each thresholded stage on the labelled rows that reach it, at
``delta / stages`` (a union bound), so that every stage's kept verdicts are certified at once.

The statistics are exact sums in pure Python (``math.lgamma``); the tests check them against SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from jurist.errors import InputError

MIN_KEPT_SHARE = 0.1
"""The first candidate threshold keeps at least this share of the labelled rows (see the module)."""


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(Binomial(n, p) <= k)``, summed exactly in log space."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    terms = [
        base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def clopper_pearson_upper(errors: int, n: int, delta: float) -> float:
    """The exact one-sided upper ``1 - delta`` confidence bound of a rate seen ``errors`` times in ``n``:
    the ``p`` at which ``P(Binomial(n, p) <= errors) = delta`` (found by bisection); 1.0 when
    ``errors == n``."""
    if n <= 0 or errors >= n:
        return 1.0
    low, high = errors / n, 1.0
    for _ in range(100):
        middle = (low + high) / 2
        if binomial_cdf(errors, n, middle) > delta:
            low = middle
        else:
            high = middle
    return high


def min_labels(target: float, delta: float) -> int:
    """The fewest labelled rows that could certify agreement ``target`` at level ``delta``: even when every
    kept verdict agrees, fewer rows leave ``target ** n > delta``."""
    check_target(target, delta)
    return max(1, math.ceil(math.log(delta) / math.log(target) - 1e-12))


def check_target(target: float, delta: float) -> None:
    if not 0.0 < target < 1.0:
        raise InputError(f"the target agreement must be between 0 and 1 (exclusive), not {target}")
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be between 0 and 1 (exclusive), not {delta}")


def check_enough_labels(rows: int, target: float, delta: float, stages: int) -> None:
    """Refuse (:class:`InputError`, with the smallest number of labels that could) a target that ``rows``
    labelled rows cannot certify over ``stages`` thresholded stages, even if every kept verdict agreed."""
    if stages and rows < (needed := min_labels(target, delta / stages)):
        raise InputError(
            f"{rows} labelled rows cannot certify agreement {target} at delta {delta} over {stages} "
            f"thresholded stage(s) (delta {delta / stages:.4g} each): it takes at least {needed} "
            "labelled rows, even if every kept verdict agreed"
        )


@dataclass(frozen=True)
class ThresholdChoice:
    """A calibrated threshold. ``threshold``: None when no candidate passed (the stage keeps nothing).
    ``kept`` / ``errors``: labelled rows kept at it and how many of them disagree with their label;
    ``bound``: the exact upper bound of the disagreement rate of kept verdicts (1.0 when nothing is kept);
    ``rows``: labelled rows the stage was calibrated on; ``tested``: candidates tested."""

    threshold: float | None
    kept: int
    errors: int
    bound: float
    rows: int
    tested: int
    target: float
    delta: float

    @property
    def certified(self) -> bool:
        return self.threshold is not None

    @property
    def agreement_bound(self) -> float:
        """The certified lower bound of the kept verdicts' agreement (0 when nothing is kept)."""
        return 1.0 - self.bound

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "threshold": self.threshold,
            "labelled_rows": self.rows,
            "kept": self.kept,
            "disagreements": self.errors,
            "agreement_lower_bound": round(self.agreement_bound, 6),
            "candidates_tested": self.tested,
            "delta": self.delta,
        }


def choose_threshold(
    confidences: Sequence[float | None], correct: Sequence[bool], target: float, delta: float
) -> ThresholdChoice:
    """The lowest confidence threshold whose kept verdicts are certified to agree with the labels at rate
    ``target`` or better with probability ``1 - delta`` (fixed-sequence testing, see the module). A row
    with no confidence (None: the judge failed or was unsure) is never kept."""
    check_target(target, delta)
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences for {len(correct)} labels")
    pairs = sorted(
        ((c, ok) for c, ok in zip(confidences, correct, strict=True) if c is not None), reverse=True
    )
    allowed = 1.0 - target
    needed = max(min_labels(target, delta), math.ceil(MIN_KEPT_SHARE * len(pairs)))
    chosen: float | None = None
    kept = errors = tested = 0
    best = (0, 0)
    index = 0
    while index < len(pairs):
        level = pairs[index][0]
        while index < len(pairs) and pairs[index][0] == level:  # every row at this confidence is kept
            kept += 1
            errors += not pairs[index][1]
            index += 1
        if kept < needed:
            continue
        tested += 1
        if binomial_cdf(errors, kept, allowed) > delta:
            break
        chosen, best = level, (kept, errors)
    n, e = best
    bound = clopper_pearson_upper(e, n, delta) if chosen is not None else 1.0
    return ThresholdChoice(chosen, n, e, bound, len(correct), tested, target, delta)


def calibrate_cascade(
    stages: Sequence[tuple[Sequence[float | None], Sequence[bool]]],
    target: float,
    delta: float,
    *,
    abstain: bool,
) -> list[ThresholdChoice | None]:
    """Thresholds for a cascade: ``stages`` holds, per stage, every labelled row's confidence and whether
    its verdict agrees with the label (the same rows, in the same order, for every stage). Each thresholded
    stage (all of them with ``abstain``, else all but the last, which decides every row that reaches it) is
    calibrated on the rows that earlier stages escalate, at ``delta`` divided by the number of thresholded
    stages. The last stage's entry is None without ``abstain``."""
    if not stages:
        raise ValueError("a cascade needs at least one stage")
    thresholded = len(stages) if abstain else len(stages) - 1
    rows = len(stages[0][0])
    check_enough_labels(rows, target, delta, thresholded)
    reaching = list(range(rows))
    out: list[ThresholdChoice | None] = []
    for number, (confidences, correct) in enumerate(stages):
        if number >= thresholded:
            out.append(None)
            continue
        choice = choose_threshold(
            [confidences[i] for i in reaching], [correct[i] for i in reaching], target, delta / thresholded
        )
        out.append(choice)
        if choice.threshold is not None:
            reaching = [i for i in reaching if not _kept(confidences[i], choice.threshold)]
    return out


def _kept(confidence: float | None, threshold: float) -> bool:
    return confidence is not None and confidence >= threshold
