"""Calibration of a judge's probabilities against human labels: isotonic or Platt maps, and ECE.

``jurist calibrate`` fits a map from a probability column of a result table (say
``truthfulness.judgment_p.Yes`` or a pairwise judge's ``p_a``) to the chance that the human label is the
positive one, on a labelled slice of the rows, and saves it as JSON next to the results;
``jurist judge dataset --calibration FILE`` then writes the mapped column, ``<judge>.calibrated``.

* isotonic: the non-decreasing step function that best fits the labels (pool-adjacent-violators), read
  with linear interpolation between the fitted points and held flat beyond them;
* platt: ``p = 1 / (1 + exp(-(a * logit(x) + b)))``, fitted by Newton's method on the log-loss with
  Platt's smoothed targets.

The expected calibration error (ECE), the one every command reports (``jurist calibrate``, ``jurist
audit``, ``jurist probe fit``), uses ``bins`` equal-width bins over [0, 1], bin ``k = floor(p * bins)``
holding [k / bins, (k + 1) / bins) and 1.0 falling in the last (:func:`calibration_bins`):
sum over bins of (rows in bin / rows) * |share of positives - mean probability|. :func:`reliability` gives
the same bins as a table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from jurist.errors import InputError

Method = Literal["isotonic", "platt"]
_EPS = 1e-6
BINS = 10


def calibration_bins(probs: Sequence[float] | np.ndarray, bins: int = BINS) -> np.ndarray:
    """Each probability's bin of ``bins`` equal-width bins over [0, 1]: ``floor(p * bins)``, so that bin k
    holds [k / bins, (k + 1) / bins) and 1.0 falls in the last bin."""
    values = np.asarray(probs, dtype=float)
    return np.clip((values * bins).astype(int), 0, bins - 1)


def reliability(
    probs: Sequence[float] | np.ndarray, outcomes: Sequence[bool] | np.ndarray | None, bins: int = BINS
) -> list[dict[str, Any]]:
    """The non-empty bins of :func:`calibration_bins`: each bin's bounds, rows and mean probability and
    (with outcomes) the share of positive outcomes, ``accuracy``."""
    values = np.asarray(probs, dtype=float)
    which = calibration_bins(values, bins)
    hits = None if outcomes is None else np.asarray(outcomes, dtype=float)
    table = []
    for b in range(bins):
        members = which == b
        if not members.any():
            continue
        row: dict[str, Any] = {
            "bin": [b / bins, (b + 1) / bins],
            "rows": int(members.sum()),
            "mean_confidence": float(values[members].mean()),
        }
        if hits is not None:
            row["accuracy"] = float(hits[members].mean())
        table.append(row)
    return table


def expected_calibration_error(
    probs: Sequence[float] | np.ndarray, outcomes: Sequence[bool] | np.ndarray, bins: int = BINS
) -> float | None:
    """ECE of probabilities against binary outcomes over the bins of :func:`reliability` (see the module);
    None without rows."""
    if len(probs) != len(outcomes):
        raise ValueError("probs and outcomes differ in length")
    if not len(probs):
        return None
    table = reliability(probs, outcomes, bins)
    gaps = sum(row["rows"] * abs(row["accuracy"] - row["mean_confidence"]) for row in table)
    return float(gaps) / len(probs)


def fit_isotonic(xs: Sequence[float], ys: Sequence[bool]) -> tuple[list[float], list[float]]:
    """Pool-adjacent-violators: the non-decreasing fit of ys on xs, as (x, fitted y) points."""
    tied: dict[float, list[float]] = {}  # rows with equal x form one starting block
    for x, y in zip(xs, ys, strict=True):
        tied.setdefault(x, [0.0, 0.0])
        tied[x][0] += float(y)
        tied[x][1] += 1.0
    blocks: list[list[float]] = []  # [sum of y, weight, min x, max x]
    for x in sorted(tied):
        blocks.append([tied[x][0], tied[x][1], x, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            y_sum, weight, _, hi = blocks.pop()
            blocks[-1][0] += y_sum
            blocks[-1][1] += weight
            blocks[-1][3] = hi
    points_x: list[float] = []
    points_y: list[float] = []
    for y_sum, weight, lo, hi in blocks:
        value = y_sum / weight
        for x in (lo, hi) if hi > lo else (lo,):
            points_x.append(x)
            points_y.append(value)
    return points_x, points_y


def fit_platt(xs: Sequence[float], ys: Sequence[bool], iterations: int = 100) -> tuple[float, float]:
    """Logistic regression of ys on logit(xs) by Newton's method: returns (a, b).

    As in Platt (1999), the targets are smoothed to (N+ + 1) / (N+ + 2) and 1 / (N- + 2), which keeps
    the fit finite when the labels are perfectly separated.
    """
    features = [logit(x) for x in xs]
    positives = sum(bool(y) for y in ys)
    negatives = len(ys) - positives
    high, low = (positives + 1) / (positives + 2), 1 / (negatives + 2)
    targets = [high if y else low for y in ys]
    a, b = 1.0, 0.0
    for _ in range(iterations):
        grad_a = grad_b = h_aa = h_ab = h_bb = 0.0
        for f, t in zip(features, targets, strict=True):
            p = _sigmoid(a * f + b)
            err = p - t
            w = p * (1 - p)
            grad_a += err * f
            grad_b += err
            h_aa += w * f * f
            h_ab += w * f
            h_bb += w
        h_aa += 1e-9
        h_bb += 1e-9
        det = h_aa * h_bb - h_ab * h_ab
        if abs(det) < 1e-12:
            break
        step_a = (h_bb * grad_a - h_ab * grad_b) / det
        step_b = (h_aa * grad_b - h_ab * grad_a) / det
        a, b = a - step_a, b - step_b
        if abs(step_a) < 1e-10 and abs(step_b) < 1e-10:
            break
    return a, b


def logit(p: float) -> float:
    """The log-odds of ``p``, clipped to [1e-6, 1 - 1e-6] first (0 and 1 stay finite)."""
    p = min(max(p, _EPS), 1 - _EPS)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


@dataclass
class Calibration:
    """A fitted map from one probability column to P(positive label)."""

    method: Method
    judge: str
    column: str
    positive: str
    params: dict[str, Any]
    fitted_rows: int
    report: dict[str, Any] = field(default_factory=dict)

    def apply_one(self, value: float | None) -> float | None:
        if value is None or not math.isfinite(value):
            return None
        if self.method == "platt":
            return _sigmoid(self.params["a"] * logit(value) + self.params["b"])
        xs: list[float] = self.params["x"]
        ys: list[float] = self.params["y"]
        if value <= xs[0]:
            return ys[0]
        if value >= xs[-1]:
            return ys[-1]
        for i in range(1, len(xs)):
            if value <= xs[i]:
                x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
                return y0 if x1 == x0 else y0 + (y1 - y0) * (value - x0) / (x1 - x0)
        return ys[-1]

    def apply(self, values: Sequence[float | None]) -> list[float | None]:
        return [self.apply_one(v) for v in values]

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(f"is not a jurist calibration file: {exc}", source=str(path)) from exc


def fit(
    probs: Sequence[float | None],
    outcomes: Sequence[bool | None],
    *,
    method: Method = "isotonic",
    judge: str,
    column: str,
    positive: str,
    fit_fraction: float = 0.5,
) -> Calibration:
    """Fit on the first ``fit_fraction`` of the rows that have both a probability and a label; report
    ECE before and after on the fit slice and on the held-out rest."""
    pairs = [(p, y) for p, y in zip(probs, outcomes, strict=True) if p is not None and y is not None]
    cut = max(1, int(len(pairs) * fit_fraction))
    train, held = pairs[:cut], pairs[cut:]
    if len(train) < 2 or len({y for _, y in train}) < 2:
        raise InputError(
            "calibration needs at least two labelled rows with both outcomes in the fitted slice"
        )
    xs, ys = [p for p, _ in train], [y for _, y in train]
    if method == "isotonic":
        px, py = fit_isotonic(xs, ys)
        params: dict[str, Any] = {"x": px, "y": py}
    elif method == "platt":
        a, b = fit_platt(xs, ys)
        params = {"a": a, "b": b}
    else:
        raise InputError(f"unknown calibration method {method!r}; known: isotonic, platt")
    calibration = Calibration(method, judge, column, positive, params, len(train))
    report: dict[str, Any] = {}
    for name, rows in (("fitted", train), ("held_out", held)):
        raw = [p for p, _ in rows]
        truth = [y for _, y in rows]
        mapped = [m for m in calibration.apply(raw) if m is not None]
        report[name] = {
            "rows": len(rows),
            "ece_before": expected_calibration_error(raw, truth),
            "ece_after": expected_calibration_error(mapped, truth) if rows else None,
        }
    calibration.report = report
    return calibration
