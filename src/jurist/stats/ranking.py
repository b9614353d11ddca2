"""How two scorings of the same rows agree in order: Spearman's rank correlation with its interval.

The interval is Fisher's z transform of rho with Bonett and Wright's (2000) standard error for Spearman's
coefficient, ``sqrt((1 + rho^2 / 2) / (n - 3))``, which keeps close to its nominal coverage where the plain
``1 / sqrt(n - 3)`` of Pearson's coefficient is too narrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Correlation:
    """A rank correlation over ``n`` rows, with its interval at ``confidence`` (None below 4 rows or when a
    side does not vary)."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float = 0.95

    def as_dict(self) -> dict[str, Any]:
        return {"spearman": self.estimate, "low": self.low, "high": self.high, "rows": self.n}


def spearman(x: Sequence[float] | Any, y: Sequence[float] | Any, confidence: float = 0.95) -> Correlation:
    """Spearman's rho of ``x`` and ``y`` (ties get their mean rank) with its interval (see the module)."""
    from scipy import stats

    n = len(x)
    if n != len(y):
        raise ValueError(f"{n} values against {len(y)}")
    if n < 4 or len(set(map(float, x))) < 2 or len(set(map(float, y))) < 2:
        return Correlation(None, None, None, n, confidence)
    rho = float(stats.spearmanr(x, y).statistic)
    if abs(rho) >= 1.0:
        return Correlation(rho, rho, rho, n, confidence)
    z = math.atanh(rho)
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * math.sqrt((1 + rho**2 / 2) / (n - 3))
    return Correlation(rho, math.tanh(z - half), math.tanh(z + half), n, confidence)
