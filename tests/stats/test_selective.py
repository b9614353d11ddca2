"""Threshold selection with a guarantee, against SciPy's exact binomial and Clopper-Pearson computations,
and the guarantee itself by a seeded simulation."""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import beta, binom, binomtest

from jurist.errors import InputError
from jurist.stats.selective import (
    MIN_KEPT_SHARE,
    binomial_cdf,
    calibrate_cascade,
    choose_threshold,
    clopper_pearson_upper,
    min_labels,
)


@pytest.mark.parametrize(("k", "n", "p"), [(0, 10, 0.1), (3, 50, 0.1), (17, 500, 0.05), (40, 400, 0.1)])
def test_binomial_cdf_matches_scipy(k: int, n: int, p: float) -> None:
    assert binomial_cdf(k, n, p) == pytest.approx(float(binom.cdf(k, n, p)), rel=1e-9)
    assert binomial_cdf(k, n, p) == pytest.approx(binomtest(k, n, p, alternative="less").pvalue, rel=1e-9)


@pytest.mark.parametrize(
    ("errors", "n", "delta"), [(0, 30, 0.1), (2, 40, 0.05), (25, 500, 0.1), (7, 60, 0.01)]
)
def test_clopper_pearson_upper_matches_the_beta_quantile(errors: int, n: int, delta: float) -> None:
    assert clopper_pearson_upper(errors, n, delta) == pytest.approx(
        beta.ppf(1 - delta, errors + 1, n - errors), abs=1e-9
    )


def test_min_labels_is_the_smallest_count_that_can_certify() -> None:
    n = min_labels(0.99, 0.1)
    assert 0.99**n <= 0.1 < 0.99 ** (n - 1)
    assert n == 230


def reference_threshold(conf: list[float], correct: list[bool], target: float, delta: float) -> float | None:
    """The same fixed-sequence rule, written independently: SciPy's binomtest at every candidate."""
    levels = sorted(set(conf), reverse=True)
    start = max(math.ceil(math.log(delta) / math.log(target)), math.ceil(MIN_KEPT_SHARE * len(conf)))
    chosen = None
    for level in levels:
        kept = [ok for c, ok in zip(conf, correct, strict=True) if c >= level]
        if len(kept) < start:
            continue
        errors = len(kept) - sum(kept)
        if binomtest(errors, len(kept), 1 - target, alternative="less").pvalue > delta:
            break
        chosen = level
    return chosen


@pytest.mark.parametrize("seed", range(6))
def test_choose_threshold_matches_an_independent_computation(seed: int) -> None:
    rng = random.Random(seed)
    conf = [round(0.5 + 0.5 * rng.random(), 3) for _ in range(300)]
    correct = [rng.random() < 0.25 + 0.75 * c for c in conf]
    choice = choose_threshold(conf, correct, 0.85, 0.1)
    assert choice.threshold == reference_threshold(conf, correct, 0.85, 0.1)
    if choice.threshold is not None:
        kept = [ok for c, ok in zip(conf, correct, strict=True) if c >= choice.threshold]
        assert (choice.kept, choice.errors) == (len(kept), len(kept) - sum(kept))
        assert choice.bound <= 1 - 0.85 + 1e-9
        assert choice.bound == pytest.approx(
            beta.ppf(0.9, choice.errors + 1, choice.kept - choice.errors), abs=1e-9
        )


def test_a_target_the_labels_cannot_certify_is_refused_with_the_labels_needed() -> None:
    stages = [([0.9] * 50, [True] * 50), ([0.9] * 50, [True] * 50)]
    with pytest.raises(InputError, match=r"at least 230 labelled rows"):
        calibrate_cascade(stages, 0.99, 0.1, abstain=False)


def test_a_stage_no_threshold_passes_keeps_nothing() -> None:
    rng = random.Random(3)
    conf = [rng.random() for _ in range(200)]
    choice = choose_threshold(conf, [rng.random() < 0.5 for _ in conf], 0.9, 0.1)
    assert choice.threshold is None and choice.kept == 0 and not choice.certified


def test_the_guarantee_holds_in_a_seeded_simulation() -> None:
    """200 draws of a 300-row calibration set (two stages with known accuracy curves, abstaining): the
    kept verdicts' agreement on fresh rows reaches the target in at least 1 - delta of the draws."""
    curves = (lambda c: 0.2 + 0.8 * c, lambda c: 0.5 + 0.5 * c)

    def rows(rng: random.Random, n: int) -> list[list[tuple[float, bool]]]:
        out = []
        for curve in curves:
            cs = [0.5 + 0.5 * rng.random() for _ in range(n)]
            out.append([(c, rng.random() < curve(c)) for c in cs])
        return out

    rng = random.Random(11)
    fresh = rows(random.Random(12), 20_000)
    held = 0
    draws = 200
    for _ in range(draws):
        labelled = rows(rng, 300)
        choices = calibrate_cascade(
            [([c for c, _ in s], [ok for _, ok in s]) for s in labelled], 0.9, 0.1, abstain=True
        )
        kept = right = 0
        for i in range(len(fresh[0])):
            for stage, choice in enumerate(choices):
                assert choice is not None
                c, ok = fresh[stage][i]
                if choice.threshold is not None and c >= choice.threshold:
                    kept, right = kept + 1, right + ok
                    break
        held += kept == 0 or right / kept >= 0.9
    assert held / draws >= 0.9
