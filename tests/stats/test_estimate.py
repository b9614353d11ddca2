"""PPI++ against its authors' package (ppi-python), a hand computation, and a coverage simulation."""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys

import numpy as np
import pytest

from jurist.errors import InputError
from jurist.stats.estimate import Interval, difference, power_tuning, ppi_mean, split_rows


def biased_population(
    rng: np.random.Generator, rows: int, share: float = 0.7
) -> tuple[np.ndarray, np.ndarray]:
    """Labels (1 with probability ``share``) and a judge's P(yes) that leans to yes and is noisy."""
    labels = rng.binomial(1, share, rows).astype(float)
    logits = 1.5 + 2.0 * (labels - 0.5) + rng.normal(0.0, 1.0, rows)
    return labels, 1 / (1 + np.exp(-logits))


PPI_PY = """
import json, sys
import numpy as np
import ppi_py
data = json.load(sys.stdin)
y, f, g = (np.array(data[k]) for k in ("y", "f", "g"))
out = []
for confidence, lam in data["cases"]:
    point = ppi_py.ppi_mean_pointestimate(y, f, g, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, g, alpha=1 - confidence, lam=lam)
    out.append([float(np.ravel(v)[0]) for v in (point, low, high)])
print(json.dumps(out))
"""


def test_the_estimate_and_interval_equal_ppi_pythons() -> None:
    # ppi-python runs in a process of its own: it imports numba, whose llvmlite breaks a vLLM engine that
    # later loads in the same process (as one does in this test session)
    if importlib.util.find_spec("ppi_py") is None:
        pytest.skip("ppi-python is not installed (the dev extra has it)")
    rng = np.random.default_rng(7)
    labels, scores = biased_population(rng, 3_000)
    y, f, g = labels[:150], scores[:150], scores[150:]
    cases = [(0.95, None), (0.9, None), (0.95, 1.0), (0.8, 0.3)]
    payload = {"y": y.tolist(), "f": f.tolist(), "g": g.tolist(), "cases": cases}
    done = subprocess.run(
        [sys.executable, "-c", PPI_PY], input=json.dumps(payload), capture_output=True, text=True, check=True
    )
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for (confidence, lam), (point, low, high) in zip(cases, theirs, strict=True):
        ours = ppi_mean(y, f, g, confidence=confidence, lam=lam)
        assert ours.ppi.estimate == pytest.approx(point, rel=1e-10)
        assert ours.ppi.low == pytest.approx(low, rel=1e-10)
        assert ours.ppi.high == pytest.approx(high, rel=1e-10)
    assert 0 < ppi_mean(y, f, g).lam <= 1


def test_a_hand_computation_of_lambda_estimate_and_interval() -> None:
    y = [1.0, 0.0, 1.0, 1.0]
    f = [0.9, 0.2, 0.6, 0.8]
    g = [0.7, 0.4, 0.9, 0.1, 0.5]
    n, big_n = len(y), len(g)
    my, mf = statistics.fmean(y), statistics.fmean(f)
    covariance = sum((a - my) * (b - mf) for a, b in zip(y, f, strict=True)) / n
    lam = min(1.0, max(0.0, covariance / ((1 + n / big_n) * statistics.variance(f + g))))
    theta = lam * statistics.fmean(g) + statistics.fmean(a - lam * b for a, b in zip(y, f, strict=True))
    se = (
        statistics.pvariance([lam * x for x in g]) / big_n
        + statistics.pvariance([a - lam * b for a, b in zip(y, f, strict=True)]) / n
    ) ** 0.5
    z = statistics.NormalDist().inv_cdf(0.975)
    got = ppi_mean(y, f, g)
    assert got.lam == pytest.approx(lam)
    assert got.ppi.estimate == pytest.approx(theta)
    assert (got.ppi.low, got.ppi.high) == pytest.approx((theta - z * se, theta + z * se))
    assert got.labels_only.estimate == pytest.approx(0.75)
    assert got.labels_only.se == pytest.approx(statistics.stdev(y) / n**0.5)
    assert got.judge_only.estimate == pytest.approx(statistics.fmean(f + g))
    assert got.effective_labels == pytest.approx(n * (got.labels_only.se / got.ppi.se) ** 2)


def test_a_judge_that_tells_nothing_gets_lambda_zero_and_the_labels_mean() -> None:
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    f = np.full(5, 0.9)
    g = np.full(20, 0.9)
    assert power_tuning(y, f, g) == 0.0
    got = ppi_mean(y, f, g)
    assert got.ppi.estimate == pytest.approx(0.6)


def test_unlabelled_and_unscored_rows_are_split_off() -> None:
    y, f, g = split_rows([1.0, None, 0.0, None, 1.0], [0.8, 0.3, None, 0.6, 0.9])
    assert y.tolist() == [1.0, 1.0] and f.tolist() == [0.8, 0.9] and g.tolist() == [0.3, 0.6]


def test_too_few_labels_and_a_bad_confidence_are_input_errors() -> None:
    with pytest.raises(InputError, match="at least 2 labelled rows"):
        ppi_mean([1.0], [0.5], [0.5, 0.6])
    with pytest.raises(InputError, match="between 0 and 1"):
        ppi_mean([1.0, 0.0], [0.5, 0.4], [0.5], confidence=95)


def test_a_difference_adds_the_variances() -> None:
    a = ppi_mean([1.0, 0.0, 1.0, 1.0], [0.9, 0.2, 0.6, 0.8], [0.7, 0.4, 0.9])
    b = ppi_mean([0.0, 0.0, 1.0], [0.3, 0.2, 0.6], [0.1, 0.4, 0.5, 0.2])
    diff = difference(a, b)
    assert diff["ppi"]["estimate"] == pytest.approx(a.ppi.estimate - b.ppi.estimate)
    expected = Interval.normal(a.ppi.estimate - b.ppi.estimate, (a.ppi.se**2 + b.ppi.se**2) ** 0.5, 0.95)
    assert (diff["ppi"]["low"], diff["ppi"]["high"]) == pytest.approx((expected.low, expected.high))


def test_the_interval_covers_the_true_mean_at_its_rate_and_is_narrower_than_labels_alone() -> None:
    """A seeded, smaller version of benchmarks/ppi_coverage.py: 400 draws of 2,000 rows, 100 labels."""
    rng = np.random.default_rng(2023)
    draws, covered, ratios = 400, 0, []
    for _ in range(draws):
        labels, scores = biased_population(rng, 2_000)
        estimate = ppi_mean(labels[:100], scores[:100], scores[100:])
        covered += estimate.ppi.low <= 0.7 <= estimate.ppi.high
        ratios.append(estimate.ppi.width / estimate.labels_only.width)
    # 95 % coverage, within 3 binomial standard deviations of 400 draws
    tolerance = 3 * (0.95 * 0.05 / draws) ** 0.5
    assert abs(covered / draws - 0.95) <= tolerance
    assert float(np.median(ratios)) < 0.9
    # the judge alone is biased: its mean misses the truth
    labels, scores = biased_population(rng, 20_000)
    assert scores.mean() - 0.7 > 0.05
