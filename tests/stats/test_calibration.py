"""The one ECE (``jurist calibrate``, ``audit`` and ``probe fit`` report it) against independent
computations: a hand-computed example that pins the binning rule, numpy's histogram and scikit-learn's
``calibration_curve`` (the maps themselves: tests/answer/test_logprobs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from jurist.stats.calibration import calibration_bins, expected_calibration_error, reliability


def test_the_binning_rule_by_hand() -> None:
    """Bin k holds [k/10, (k+1)/10) and 1.0 the last bin: 0.5 and 0.55 share bin 5 (|0.5 - 0.525| on two
    rows), 0.7 is alone in bin 7 (|1 - 0.7|), 1.0 in bin 9 (0): (0.05 + 0.3) / 4. The right-closed rule
    ((k/10, (k+1)/10]) would give (0.5 + 0.45 + 0.3) / 4 = 0.3125."""
    probs, outcomes = [0.5, 0.55, 0.7, 1.0], [False, True, True, True]
    assert calibration_bins(probs).tolist() == [5, 5, 7, 9]
    assert expected_calibration_error(probs, outcomes) == pytest.approx(0.0875, abs=1e-12)
    assert calibration_bins([0.0, 0.25, 0.999, 1.0], bins=4).tolist() == [0, 1, 3, 3]
    assert expected_calibration_error([], []) is None
    with pytest.raises(ValueError):
        expected_calibration_error([0.5], [True, False])


def histogram_ece(probs: np.ndarray, outcomes: np.ndarray, bins: int) -> float:
    """ECE from numpy's histogram: its bins are [e_k, e_k+1), the last closed at 1."""
    counts, _ = np.histogram(probs, bins=bins, range=(0.0, 1.0))
    sums, _ = np.histogram(probs, bins=bins, range=(0.0, 1.0), weights=probs)
    hits, _ = np.histogram(probs, bins=bins, range=(0.0, 1.0), weights=outcomes.astype(float))
    full = counts > 0
    return float(np.sum(np.abs(hits[full] - sums[full])) / len(probs))


@pytest.mark.parametrize("bins", [10, 15])
def test_ece_equals_numpys_histogram_and_sklearns_calibration_curve(bins: int) -> None:
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(11)
    probs = rng.uniform(0.0, 1.0, 5000)
    outcomes = rng.uniform(size=probs.size) < probs**1.5  # miscalibrated: ECE well above 0
    ours = expected_calibration_error(probs, outcomes, bins)
    assert ours is not None and ours > 0.05
    assert ours == pytest.approx(histogram_ece(probs, outcomes, bins), abs=1e-12)
    # scikit-learn's curve gives each non-empty bin's share of positives and mean probability (no value
    # of a uniform draw lies on a bin edge, where its right-closed bins would differ)
    share, mean = calibration_curve(outcomes, probs, n_bins=bins, strategy="uniform")
    counts, _ = np.histogram(probs, bins=bins, range=(0.0, 1.0))
    theirs = float(np.sum(counts[counts > 0] * np.abs(share - mean)) / probs.size)
    assert ours == pytest.approx(theirs, abs=1e-12)
    table = reliability(probs, outcomes, bins)
    assert [row["rows"] for row in table] == counts[counts > 0].tolist()
    assert [row["accuracy"] for row in table] == pytest.approx(share.tolist())


def test_calibrated_forecasts_have_an_ece_near_zero() -> None:
    """Outcomes drawn from their own probability: the ECE shrinks with the rows (about sqrt(bins / n))."""
    rng = np.random.default_rng(12)
    probs = rng.uniform(size=200_000)
    assert expected_calibration_error(probs, rng.uniform(size=probs.size) < probs) < 0.01  # type: ignore[operator]
