"""Prediction-powered estimates (PPI++): a judge's scores on every row, corrected by a labelled sample.

The judge's mean score is a biased estimate of the mean human label; the labels alone are unbiased but
few. PPI++ (Angelopoulos, Duchi and Zrnic, 2023) combines them. With ``n`` labelled rows (labels ``y``,
judge scores ``f``) drawn at random from the judged rows and ``N`` unlabelled rows (judge scores ``g``):

    theta = lam * mean(g) + mean(y - lam * f)
    se    = sqrt(var(lam * g) / N + var(y - lam * f) / n)        (population variances)
    lam   = cov(y, f) / ((1 + n / N) * var(f and g together)),   clipped to [0, 1]

``lam`` (power tuning) is the weight that minimises the variance: 0 when the judge tells nothing about the
labels (the estimate is then the labels' mean), near 1 for a good judge. The interval is
``theta +- z * se`` with ``z`` the normal quantile of the confidence, as in the ``ppi-python`` package.

Beside it, :func:`ppi_mean` gives the labels-only mean (``mean(y) +- z * sd(y) / sqrt(n)``), the judge-only
mean over every row (whose interval says nothing about its bias) and the effective number of labels: how
many labels alone would give the PPI++ interval's width. The difference of two independent estimates (two
groups of rows, :func:`difference`) adds their variances.

The labelled rows must be a random sample of the judged rows: PPI's guarantee rests on it. A sample drawn
with unequal probabilities (``jurist label --strategy active``, which records each row's probability with
its label) is weighted by their inverse (:func:`ppi_weighted_mean`), which keeps the guarantee;
:func:`corrected_mean` picks between the two. ``jurist estimate`` over a result table is
:mod:`jurist.analysis.estimate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from jurist.errors import InputError

MIN_LABELS = 2
FEW_LABELS = 30


@dataclass(frozen=True)
class Interval:
    """An estimate with its standard error and its two-sided interval at ``confidence``."""

    estimate: float
    se: float
    low: float
    high: float
    confidence: float

    @property
    def width(self) -> float:
        return self.high - self.low

    @classmethod
    def normal(cls, estimate: float, se: float, confidence: float) -> Interval:
        from scipy import stats  # scipy loads when an interval is computed, not with jurist

        z = float(stats.norm.ppf(0.5 + confidence / 2))
        return cls(float(estimate), float(se), float(estimate - z * se), float(estimate + z * se), confidence)


@dataclass(frozen=True)
class MeanEstimate:
    """The PPI++ estimate of the mean label, beside the labels-only and judge-only means."""

    ppi: Interval
    labels_only: Interval
    judge_only: Interval
    lam: float
    labelled: int
    unlabelled: int
    weighted: bool = False

    @property
    def effective_labels(self) -> float:
        """How many labels alone would give an interval as narrow as PPI++'s: ``n * se_labels² / se_ppi²``."""
        if self.ppi.se == 0:
            return float("inf")
        return self.labelled * (self.labels_only.se / self.ppi.se) ** 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "ppi": asdict(self.ppi),
            "labels_only": asdict(self.labels_only),
            "judge_only": asdict(self.judge_only),
            "lambda": self.lam,
            "labelled_rows": self.labelled,
            "unlabelled_rows": self.unlabelled,
            "effective_labels": self.effective_labels,
            **({"design": "inverse-probability weighted"} if self.weighted else {}),
        }


def power_tuning(y: np.ndarray, f: np.ndarray, g: np.ndarray) -> float:
    """PPI++'s variance-minimising ``lam`` for a mean, clipped to [0, 1] (0 when the scores do not vary)."""
    n, big_n = len(y), len(g)
    together = np.concatenate([f, g])
    spread = float(np.var(together, ddof=1)) if len(together) > 1 else 0.0
    if spread == 0.0:
        return 0.0
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    return float(np.clip(covariance / ((1 + n / big_n) * spread), 0.0, 1.0))


def _checked(
    labels: Sequence[float] | np.ndarray,
    labelled_scores: Sequence[float] | np.ndarray,
    unlabelled_scores: Sequence[float] | np.ndarray,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, labelled scores, unlabelled scores) as arrays, after the checks every estimate makes."""
    if not 0 < confidence < 1:
        raise InputError(f"the confidence must lie between 0 and 1, not {confidence}")
    y = np.asarray(labels, dtype=float)
    f = np.asarray(labelled_scores, dtype=float)
    if len(y) != len(f):
        raise ValueError(f"{len(y)} labels for {len(f)} labelled scores")
    if len(y) < MIN_LABELS:
        raise InputError(f"an estimate needs at least {MIN_LABELS} labelled rows with a score, not {len(y)}")
    return y, f, np.asarray(unlabelled_scores, dtype=float)


def _judge_only(scores: np.ndarray, confidence: float) -> Interval:
    """The judge's own mean over every row, with the interval that ignores its bias."""
    return Interval.normal(scores.mean(), np.std(scores, ddof=1) / np.sqrt(len(scores)), confidence)


def ppi_mean(
    labels: Sequence[float] | np.ndarray,
    labelled_scores: Sequence[float] | np.ndarray,
    unlabelled_scores: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> MeanEstimate:
    """The PPI++ estimate of the mean label from ``n`` labels with the judge's scores on those rows and the
    judge's scores on ``N`` unlabelled rows; ``lam`` fixed (1 is plain PPI) or, by default, tuned."""
    y, f, g = _checked(labels, labelled_scores, unlabelled_scores, confidence)
    # every row labelled: nothing to add to the labels (lam 0, the labels' mean)
    weight = 0.0 if len(g) == 0 else power_tuning(y, f, g) if lam is None else float(lam)
    theta = weight * (g.mean() if len(g) else 0.0) + (y - weight * f).mean()
    se = np.sqrt((np.var(weight * g) / len(g) if len(g) else 0.0) + np.var(y - weight * f) / len(y))
    everything = np.concatenate([f, g])
    labels_only = Interval.normal(y.mean(), np.std(y, ddof=1) / np.sqrt(len(y)), confidence)
    return MeanEstimate(
        ppi=Interval.normal(theta, se, confidence) if len(g) else labels_only,
        labels_only=labels_only,
        judge_only=_judge_only(everything, confidence),
        lam=weight,
        labelled=len(y),
        unlabelled=len(g),
    )


def ppi_weighted_mean(
    labels: Sequence[float] | np.ndarray,
    labelled_scores: Sequence[float] | np.ndarray,
    probabilities: Sequence[float] | np.ndarray,
    unlabelled_scores: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> MeanEstimate:
    """The PPI++ estimate of the mean label when row ``i`` was labelled with its own probability ``pi_i``
    (an active or other unequal-probability plan, as ``jurist label`` samples): each labelled row's
    residual is weighted by ``w_i = 1 / pi_i`` (Zrnic and Candes, 2024, "Active Statistical Inference").

    With ``f_all`` the judge's scores on all ``N`` rows and ``r = y - lam * f`` on the ``n`` labelled ones::

        theta = lam * mean(f_all) + sum(w * r) / sum(w)
        se²   = var(lam * f_all) / N + sum(w² * (r - rbar_w)²) / sum(w)²

    The residual's mean is normalised by the sum of the weights (a Hajek estimate), so a labeller who
    stops early, or labels drawn with probabilities known only up to a common factor, still give a valid
    estimate. With equal weights ``se²`` is PPI++'s ``var(lam g) / N + var(r) / n``. ``lam`` minimises
    ``se²``: ``sum(w² dy df) / (sum(w)² var(f_all) / N + sum(w² df²))`` with ``dy``, ``df`` the deviations
    from the weighted means, clipped to [0, 1] (0: the estimate is the weighted mean of the labels).
    ``labels_only`` is that weighted mean with its own standard error."""
    y, f, g = _checked(labels, labelled_scores, unlabelled_scores, confidence)
    pi = np.asarray(probabilities, dtype=float)
    if len(pi) != len(y):
        raise ValueError(f"{len(pi)} probabilities for {len(y)} labels")
    if np.any(~(pi > 0)) or np.any(pi > 1):
        raise InputError("every labelled row's selection probability must lie in (0, 1]")
    everything = np.concatenate([f, g])
    w = 1.0 / pi
    total = w.sum()
    dy = y - np.dot(w, y) / total
    df = f - np.dot(w, f) / total
    spread = float(np.var(everything)) / len(everything)
    if lam is not None:
        weight = float(lam)
    else:
        denominator = total**2 * spread + float(np.dot(w**2, df**2))
        weight = 0.0 if denominator == 0 else float(np.dot(w**2, dy * df)) / denominator
        weight = float(np.clip(weight, 0.0, 1.0))
    residual = dy - weight * df
    theta = weight * everything.mean() + np.dot(w, y - weight * f) / total
    se = np.sqrt(weight**2 * spread + float(np.dot(w**2, residual**2)) / total**2)
    labels_only = Interval.normal(
        np.dot(w, y) / total, np.sqrt(float(np.dot(w**2, dy**2))) / total, confidence
    )
    return MeanEstimate(
        ppi=Interval.normal(theta, se, confidence),
        labels_only=labels_only,
        judge_only=_judge_only(everything, confidence),
        lam=weight,
        labelled=len(y),
        unlabelled=len(g),
        weighted=True,
    )


def split_rows(
    labels: Sequence[float | None] | np.ndarray, scores: Sequence[float | None] | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, scores on the labelled rows, scores on the unlabelled rows) from one label (NaN or None
    when unlabelled) and one score (NaN or None when the judge gave none) per row; rows without a score
    are left out, labelled or not."""
    y = np.asarray([np.nan if v is None else v for v in labels], dtype=float)
    s = np.asarray([np.nan if v is None else v for v in scores], dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"{len(y)} labels for {len(s)} scores")
    scored = ~np.isnan(s)
    labelled = scored & ~np.isnan(y)
    return y[labelled], s[labelled], s[scored & np.isnan(y)]


def difference(first: MeanEstimate, second: MeanEstimate, confidence: float = 0.95) -> dict[str, Any]:
    """The difference ``first - second`` of two estimates on disjoint rows, each kind with its interval
    (independent samples: the variances add)."""
    out: dict[str, Any] = {}
    for kind in ("ppi", "labels_only", "judge_only"):
        a, b = getattr(first, kind), getattr(second, kind)
        out[kind] = asdict(Interval.normal(a.estimate - b.estimate, float(np.hypot(a.se, b.se)), confidence))
    return out


def corrected_mean(
    targets: Sequence[float | None],
    scores: Sequence[float | None],
    chances: Sequence[float | None],
    confidence: float,
) -> MeanEstimate:
    """The PPI++ estimate ``jurist estimate`` gives from one target (None: unlabelled), one score (None:
    the row is left out) and one selection probability (None: unknown) per row: weighted by the labelled
    rows' inverse probabilities (:func:`ppi_weighted_mean`) where every labelled row has one and they
    differ, plain :func:`ppi_mean` otherwise."""
    y, f, g = split_rows(targets, scores)
    pi = [p for t, s, p in zip(targets, scores, chances, strict=True) if t is not None and s is not None]
    known = [p for p in pi if p is not None]
    if len(known) == len(pi) and known and not np.allclose(known, known[0], rtol=1e-9, atol=0):
        return ppi_weighted_mean(y, f, np.asarray(known, dtype=float), g, confidence=confidence)
    return ppi_mean(y, f, g, confidence=confidence)
