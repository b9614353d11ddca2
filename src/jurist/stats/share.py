"""A share (``successes`` of ``trials``) with its Wilson score interval: the one record every report gives a
proportion with, and its one JSON shape, ``{"estimate", "low", "high", "successes", "trials"}``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval for a proportion ``successes / n`` at ``confidence`` (None when n == 0).

    Unlike the normal approximation it stays inside [0, 1] and keeps near its nominal coverage for small n
    and proportions near 0 or 1, which is where judge accuracies on a few labelled rows live.
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Share:
    """``successes`` of ``trials`` with its Wilson interval at ``confidence``; without trials it has no
    estimate and no interval (None)."""

    successes: int
    trials: int
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not 0 <= self.successes <= self.trials:
            raise ValueError(f"a share needs 0 <= successes <= trials, got {self.successes} of {self.trials}")

    @classmethod
    def of(cls, flags: Iterable[bool], confidence: float = 0.95) -> Share:
        """The share of true ``flags``."""
        values = [bool(flag) for flag in flags]
        return cls(sum(values), len(values), confidence)

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> Share:
        """A share from its dict, or from the shapes files written before it hold: ``right`` of ``n`` (a
        probe head's metrics) or of ``rows`` (a baseline)."""
        if "successes" in data:
            return cls(int(data["successes"]), int(data["trials"]))
        return cls(int(data["right"]), int(data["n"] if "n" in data else data["rows"]))

    @property
    def estimate(self) -> float | None:
        return self.successes / self.trials if self.trials else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.successes, self.trials, self.confidence)

    @property
    def low(self) -> float | None:
        return None if (bounds := self.interval) is None else bounds[0]

    @property
    def high(self) -> float | None:
        return None if (bounds := self.interval) is None else bounds[1]

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{"estimate", "low", "high", "successes", "trials"}`` (None without trials)."""
        low, high = self.interval or (None, None)
        counts = {"successes": self.successes, "trials": self.trials}
        return {"estimate": self.estimate, "low": low, "high": high, **counts}
