"""Spearman's rho against scipy and a hand-ranked example, and its interval's coverage by simulation."""

from __future__ import annotations

import numpy as np
from scipy import stats

from jurist.stats.ranking import spearman


def test_rho_matches_a_hand_ranking_and_scipy() -> None:
    x = [10.0, 20.0, 30.0, 40.0, 50.0]
    y = [1.0, 3.0, 2.0, 5.0, 4.0]  # ranks differ by d = 0, 1, 1, 1, 1: rho = 1 - 6 * 4 / (5 * 24) = 0.8
    found = spearman(x, y)
    assert found.estimate is not None and abs(found.estimate - 0.8) < 1e-12
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=50), rng.normal(size=50)
    assert abs((spearman(a, b).estimate or 0) - stats.spearmanr(a, b).statistic) < 1e-12


def test_too_few_rows_or_a_constant_side_give_no_correlation() -> None:
    assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]).estimate is None
    assert spearman([1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0]).estimate is None


def test_the_interval_covers_the_population_rho_about_95_times_in_100() -> None:
    """Bivariate normal with correlation r: the population Spearman is (6 / pi) asin(r / 2). Over many
    samples of 80 rows the 95 % interval should cover it close to 95 % of the time."""
    rng = np.random.default_rng(0)
    r = 0.6
    truth = 6 / np.pi * np.arcsin(r / 2)
    cov = [[1.0, r], [r, 1.0]]
    covered = 0
    draws = 800
    for _ in range(draws):
        sample = rng.multivariate_normal([0.0, 0.0], cov, size=80)
        found = spearman(sample[:, 0], sample[:, 1])
        assert found.low is not None and found.high is not None
        covered += found.low <= truth <= found.high
    share = covered / draws
    assert 0.92 <= share <= 0.98, share
