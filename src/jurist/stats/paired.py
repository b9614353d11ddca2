"""Statistics of two judges' verdicts on the same rows: Cohen's kappa with its standard error, McNemar's
test, a paired mean difference, and the difference of two judges' accuracies corrected by PPI++
(:mod:`jurist.analysis.compare` puts them together for two result tables).

The accuracy difference is ``delta = mean_i d_i`` over all compared rows, ``d_i = 1[A right on i] -
1[B right on i]``, from labels on a random sample of the rows.

Where A and B give the same verdict, ``d_i = 0`` exactly, labelled or not, and which rows those are is known
on every row. So the rows split into two strata, known in advance: ``D``, the rows where the verdicts differ
(``N_D`` of ``N``), and the rest, where ``d = 0``. Then ``delta = (N_D / N) * mean_{i in D} d_i`` and only the
mean over ``D`` is unknown. It is estimated by PPI++ (:func:`jurist.stats.estimate.ppi_mean`) inside
``D``: the labels are the ``d_i`` of the labelled rows of ``D`` (a random sample of ``D`` when the labelled
rows are a random sample of all rows), and the prediction of ``d_i`` on every row of ``D`` is
``f_i = c_A,i - c_B,i``, each judge's confidence in its own verdict (its ``judgment_confidence``, a
cascade's ``confidence``, ``max(p_a, 1 - p_a)``: :func:`jurist.labels.sampling.confidences`; 0 where either
has none). On a row where two verdicts of a yes/no question differ, exactly one is right; if the two
confidences were calibrated probabilities, averaging them gives ``P(A's verdict is right) =
(c_A + 1 - c_B) / 2`` and so ``E[d_i] = 2 P - 1 = c_A - c_B``. PPI++'s power tuning weighs the prediction by
how well it predicts ``d`` on the labelled rows (``lambda``, clipped to [0, 1]); the estimate stays unbiased
and its interval valid whatever the confidences are worth, and without confidences ``lambda`` is 0 and the
estimate is the labelled rows' mean of ``d`` over ``D``, scaled by ``N_D / N``: the stratified estimate.
Stratifying never needs a prediction on the rows where the judges agree and spends no variance there: the
plain paired mean of ``d`` over the labelled rows (``labels_only`` in the result) counts those rows' zeros
with the noise of how many of them were labelled.

The interval is normal (``estimate +- z * se``) with the delta method's
``se² = (N_D / N)² se_D² + theta_D² (N_D / N)(1 - N_D / N) / N``: the second term counts the share of rows
where the judges differ as the sample it is of how often they differ, so that the interval is about the
two judges on rows drawn as these were (and covers the mean over these very rows the more so); on a large
table it is small, on a small fully labelled one it gives about the plain paired interval. It wants some
30 labelled rows in ``D`` (a warning says so below that).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from jurist.stats.estimate import FEW_LABELS, MIN_LABELS, Interval, ppi_mean

EXACT_BELOW = 25  # discordant rows below which McNemar's test is the exact binomial one


def kappa_interval(a: Sequence[Hashable], b: Sequence[Hashable], confidence: float = 0.95) -> Interval | None:
    """Cohen's kappa of two raters' categories with its large-sample standard error and normal interval.

    ``kappa = (p_o - p_e) / (1 - p_e)``, ``p_o`` the share of equal pairs, ``p_e = sum_k r_k c_k`` from the
    two raters' shares ``r`` and ``c`` of each category. Its variance is the delta method's: each pair
    ``i = (x, y)`` has influence ``(1[x = y] - p_o) / (1 - p_e) - (1 - p_o) (c_x + r_y - 2 p_e) / (1 - p_e)²``
    and ``var = mean(influence²) / n``, the same figure as Fleiss, Cohen and Everitt's (1969) formula.
    None with no pairs or when ``p_e`` is 1 (both raters give one and the same category throughout).
    """
    if len(a) != len(b):
        raise ValueError(f"{len(a)} ratings for {len(b)}")
    n = len(a)
    if n == 0:
        return None
    codes = {v: k for k, v in enumerate(dict.fromkeys([*a, *b]))}
    x = np.asarray([codes[v] for v in a])
    y = np.asarray([codes[v] for v in b])
    rows = np.bincount(x, minlength=len(codes)) / n
    cols = np.bincount(y, minlength=len(codes)) / n
    observed = float(np.mean(x == y))
    chance = float(rows @ cols)
    if chance >= 1:
        return None
    kappa = (observed - chance) / (1 - chance)
    influence = ((x == y) - observed) / (1 - chance) - (1 - observed) * (cols[x] + rows[y] - 2 * chance) / (
        1 - chance
    ) ** 2
    se = math.sqrt(float(np.mean(influence**2)) / n)
    return Interval.normal(kappa, se, confidence)


def mcnemar(only_a: int, only_b: int) -> dict[str, Any]:
    """McNemar's test from the two discordant counts: the exact two-sided binomial test (p = 1/2) below
    :data:`EXACT_BELOW` discordant rows, else the continuity-corrected chi-square with one degree of
    freedom; p is 1 with no discordant row."""
    from scipy import stats

    n = only_a + only_b
    if n < EXACT_BELOW:
        p = float(stats.binomtest(only_a, n, 0.5).pvalue) if n else 1.0
        method, statistic = "exact binomial", float(min(only_a, only_b))
    else:
        statistic = (abs(only_a - only_b) - 1) ** 2 / n
        p = float(stats.chi2.sf(statistic, 1))
        method = "chi-square, continuity corrected"
    return {
        "only_a": only_a,
        "only_b": only_b,
        "statistic": statistic,
        "p_value": p,
        "method": method,
    }


def paired_difference(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95
) -> dict[str, Any] | None:
    """The means of paired values and their difference ``a - b`` with its t interval (n - 1 degrees of
    freedom); None below two pairs."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} values for {len(y)}")
    if len(x) < 2:
        return None
    from scipy import stats

    d = x - y
    se = float(np.std(d, ddof=1) / math.sqrt(len(d)))
    half = float(stats.t.ppf(0.5 + confidence / 2, len(d) - 1)) * se
    mean = float(d.mean())
    return {
        "rows": len(d),
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "difference": asdict(Interval(mean, se, mean - half, mean + half, confidence)),
    }


def accuracy_difference(
    differs: Sequence[bool] | np.ndarray,
    d: Sequence[float] | np.ndarray,
    predicted: Sequence[float] | np.ndarray | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The mean over all rows of ``d = 1[A right] - 1[B right]``, stratified by where the verdicts differ
    and corrected by PPI++ inside that stratum (see the module).

    ``differs``: per row, whether the two verdicts differ. ``d``: per row, ``d_i`` on a labelled row and NaN
    on an unlabelled one (0 wherever the verdicts are equal). ``predicted``: per row, a prediction of ``d_i``
    (used only where the verdicts differ; default 0, no prediction). The result holds ``ppi`` (an
    :class:`~jurist.stats.estimate.Interval` as a dict, or None with ``reason`` when fewer than two
    labelled rows have differing verdicts), ``labels_only`` (the plain paired mean of ``d`` over the
    labelled rows), ``lambda``, the row counts and the effective number of labels."""
    split = np.asarray(differs, dtype=bool)
    values = np.asarray(d, dtype=float)
    guess = np.zeros(len(split)) if predicted is None else np.asarray(predicted, dtype=float)
    if not len(split) == len(values) == len(guess):
        raise ValueError(f"{len(split)} rows, {len(values)} values of d and {len(guess)} predictions")
    labelled = ~np.isnan(values)
    if np.any(labelled & ~split & (values != 0)):
        raise ValueError("d is not 0 on a labelled row where the verdicts are equal")
    n_all, n_diff = len(split), int(split.sum())
    out: dict[str, Any] = {
        "of": "A - B",
        "rows": n_all,
        "labelled_rows": int(labelled.sum()),
        "differing_rows": n_diff,
        "labelled_differing_rows": int((labelled & split).sum()),
        "lambda": None,
        "ppi": None,
        "effective_labels": None,
    }
    n_lab = out["labelled_rows"]
    out["labels_only"] = None
    if n_lab >= MIN_LABELS:
        spread = np.std(values[labelled], ddof=1) / math.sqrt(n_lab)
        out["labels_only"] = asdict(Interval.normal(values[labelled].mean(), spread, confidence))
    if n_all == 0:
        out["reason"] = "no rows to compare"
        return out
    if n_diff == 0:
        out["ppi"] = asdict(Interval(0.0, 0.0, 0.0, 0.0, confidence))
        out["reason"] = "the verdicts are equal on every row: the accuracies are equal"
        return out
    inside = labelled & split
    if out["labelled_differing_rows"] < MIN_LABELS:
        out["reason"] = (
            f"{out['labelled_differing_rows']} labelled rows where the verdicts differ: "
            f"the difference needs at least {MIN_LABELS}"
        )
        return out
    within = ppi_mean(values[inside], guess[inside], guess[split & ~labelled], confidence=confidence)
    share = n_diff / n_all
    ppi = within.ppi
    out["lambda"] = within.lam
    # the share that differs is itself a sample of how often the two judges differ: its variance counts
    se = math.sqrt((share * ppi.se) ** 2 + ppi.estimate**2 * share * (1 - share) / n_all)
    out["ppi"] = asdict(Interval.normal(share * ppi.estimate, se, confidence))
    labels_only = out["labels_only"]
    if labels_only is not None and out["ppi"]["se"] > 0:
        out["effective_labels"] = n_lab * (labels_only["se"] / out["ppi"]["se"]) ** 2
    if out["labelled_differing_rows"] < FEW_LABELS:
        out["warning"] = (
            f"only {out['labelled_differing_rows']} labelled rows where the verdicts differ: the interval's "
            f"normal approximation wants {FEW_LABELS} or more"
        )
    return out
