"""A share with its Wilson interval: the interval against scipy's own (an independent implementation), the
closed form written out, and a simulation of its coverage; the record's one dict shape and the older
shapes it reads."""

from __future__ import annotations

import math
import random

import pytest

from jurist.stats.share import Share, wilson_interval


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (13, 20), (16, 20), (0, 50), (50, 50), (7, 419)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_interval_matches_scipys(k: int, n: int, confidence: float) -> None:
    from scipy.stats import binomtest

    theirs = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    ours = wilson_interval(k, n, confidence)
    assert ours is not None
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def hand_wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval, written out: the roots of (p - k/n)² = z² p (1 - p) / n."""
    a = 1 + z * z / n
    b = -(2 * k / n + z * z / n)
    c = (k / n) ** 2
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_wilson_interval_covers_near_its_level_by_simulation() -> None:
    rng = random.Random(7)
    for p, n in ((0.65, 20), (0.5, 100), (0.9, 60)):
        draws = 4000
        covered = 0
        for _ in range(draws):
            k = sum(rng.random() < p for _ in range(n))
            low, high = wilson_interval(k, n) or (0.0, 0.0)
            covered += low <= p <= high
        assert 0.92 <= covered / draws <= 0.98, (p, n, covered / draws)


def test_wilson_interval_edges() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@pytest.mark.parametrize(("k", "n"), [(37, 90), (0, 12), (12, 12), (1, 3)])
def test_a_share_is_its_count_with_the_closed_form_interval(k: int, n: int) -> None:
    share = Share(k, n)
    assert share.estimate == k / n
    assert (share.low, share.high) == pytest.approx(hand_wilson(k, n), abs=1e-9)
    assert share.as_dict() == {
        "estimate": k / n,
        "low": share.low,
        "high": share.high,
        "successes": k,
        "trials": n,
    }
    assert Share.of([True] * k + [False] * (n - k)) == share
    assert Share(k, n, 0.9).interval == wilson_interval(k, n, 0.9)


def test_a_share_without_trials_has_no_estimate_and_a_bad_count_is_refused() -> None:
    assert Share(0, 0).as_dict() == {"estimate": None, "low": None, "high": None, "successes": 0, "trials": 0}
    for successes, trials in ((3, 2), (-1, 2), (1, 0)):
        with pytest.raises(ValueError):
            Share(successes, trials)


def test_a_share_reads_its_own_dict_and_the_older_shapes() -> None:
    share = Share(79, 100)
    assert Share.read(share.as_dict()) == share
    probe_head = {"right": 79, "n": 100, "value": 0.79, "ci95": [0.7, 0.86]}
    baseline = {"rule": "always 'a'", "accuracy": 0.79, "interval": [0.7, 0.86], "right": 79, "rows": 100}
    assert Share.read(probe_head) == Share.read(baseline) == share
