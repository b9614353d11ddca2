"""Two judges compared: the statistics against statsmodels, scipy and explicit formulas, the accuracy
difference's coverage by simulation, and the comparison of result tables written by scripted judges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import cohens_kappa

from compare_data import PLAN, pair_rows, plan_rows, run_pair_side, run_side, write_rows
from jurist.analysis.compare import compare_tables
from jurist.errors import InputError
from jurist.io.results import ResultTable
from jurist.stats.paired import accuracy_difference, kappa_interval, mcnemar, paired_difference


# ------------------------------------------------------------------------------------------ statistics
@pytest.mark.parametrize("seed", range(4))
def test_kappa_and_its_standard_error_match_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.choice(["a", "b", "tie"], size=150, p=[0.5, 0.4, 0.1])
    b = np.where(rng.random(150) < 0.7, a, rng.choice(["a", "b", "tie"], size=150))
    categories = ["a", "b", "tie"]
    table = np.array([[np.sum((a == x) & (b == y)) for y in categories] for x in categories])
    expected = cohens_kappa(table)  # its interval: 95 %
    found = kappa_interval(list(a), list(b), 0.95)
    assert found is not None
    assert found.estimate == pytest.approx(expected.kappa, abs=1e-12)
    assert found.se == pytest.approx(expected.std_kappa, rel=1e-9)
    assert found.low == pytest.approx(expected.kappa_low, rel=1e-9)
    assert found.high == pytest.approx(expected.kappa_upp, rel=1e-9)


def test_kappa_is_undefined_when_both_raters_give_one_category() -> None:
    assert kappa_interval(["yes"] * 5, ["yes"] * 5) is None
    assert kappa_interval([], []) is None


@pytest.mark.parametrize(("only_a", "only_b"), [(12, 3), (0, 4), (5, 5), (20, 9), (40, 60), (0, 0)])
def test_mcnemar_matches_statsmodels(only_a: int, only_b: int) -> None:
    found = mcnemar(only_a, only_b)
    exact = only_a + only_b < 25
    expected = sm_mcnemar([[30, only_a], [only_b, 17]], exact=exact, correction=True)
    assert found["method"] == ("exact binomial" if exact else "chi-square, continuity corrected")
    assert found["p_value"] == pytest.approx(min(1.0, expected.pvalue), rel=1e-9)
    if not exact:
        assert found["statistic"] == pytest.approx(expected.statistic)


def test_paired_difference_matches_scipys_paired_t_test() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(3.0, 1.0, 40)
    y = x - 0.3 + rng.normal(0, 0.5, 40)
    found = paired_difference(list(x), list(y), 0.9)
    assert found is not None
    expected = stats.ttest_rel(x, y).confidence_interval(0.9)
    assert found["difference"]["estimate"] == pytest.approx(np.mean(x) - np.mean(y))
    assert found["difference"]["low"] == pytest.approx(expected.low)
    assert found["difference"]["high"] == pytest.approx(expected.high)
    assert paired_difference([1.0], [2.0]) is None


def _hand_ppi(differs: np.ndarray, d: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    """PPI++ inside the rows that differ, scaled by their share: the formula written out again."""
    inside = differs & ~np.isnan(d)
    y, fl, fu = d[inside], f[inside], f[differs & np.isnan(d)]
    n, big_n = len(y), len(fu)
    lam = np.cov(y, fl, ddof=0)[0, 1] / ((1 + n / big_n) * np.var(np.r_[fl, fu], ddof=1))
    lam = min(1.0, max(0.0, lam))
    theta = lam * fu.mean() + (y - lam * fl).mean()
    return differs.mean() * theta, lam


def test_the_accuracy_difference_is_ppi_inside_the_rows_that_differ() -> None:
    rng = np.random.default_rng(7)
    rows = 400
    right_a, right_b = rng.random(rows) < 0.8, rng.random(rows) < 0.7
    differs = right_a != right_b
    labelled = rng.random(rows) < 0.3
    d = np.where(labelled, right_a.astype(float) - right_b, np.nan)
    f = np.where(right_a, 0.3, -0.1) + rng.normal(0, 0.3, rows)
    found = accuracy_difference(differs, d, f)
    expected, lam = _hand_ppi(differs, d, f)
    assert found["ppi"]["estimate"] == pytest.approx(expected)
    assert found["lambda"] == pytest.approx(lam)
    # without a prediction: the labelled rows' mean of d where the verdicts differ, times their share
    plain = accuracy_difference(differs, d)
    inside = differs & labelled
    assert plain["lambda"] == 0
    assert plain["ppi"]["estimate"] == pytest.approx(differs.sum() / rows * d[inside].mean())
    assert plain["labels_only"]["estimate"] == pytest.approx(np.nanmean(d))
    assert found["labelled_differing_rows"] == inside.sum() and found["differing_rows"] == differs.sum()


def test_the_accuracy_difference_says_when_it_cannot_be_estimated() -> None:
    same = accuracy_difference([False] * 5, [0.0, np.nan, 0.0, np.nan, 0.0])
    assert same["ppi"]["estimate"] == 0 and same["ppi"]["se"] == 0
    few = accuracy_difference([True, False, False], [1.0, 0.0, np.nan])
    assert few["ppi"] is None and "1 labelled rows where the verdicts differ" in few["reason"]
    with pytest.raises(ValueError, match="not 0"):
        accuracy_difference([False, True], [1.0, 0.0])


def _simulated(rng: np.random.Generator, informative: bool, rows: int = 3000, labelled: int = 300) -> Any:
    truth = rng.random(rows) < 0.5
    right_a, right_b = rng.random(rows) < 0.80, rng.random(rows) < 0.74  # true difference 0.06
    verdict_a, verdict_b = np.where(right_a, truth, ~truth), np.where(right_b, truth, ~truth)

    def confidence(right: np.ndarray) -> np.ndarray:
        return np.where(right, rng.uniform(0.6, 1.0, rows), rng.uniform(0.5, 0.8, rows))

    predicted = confidence(right_a) - confidence(right_b) if informative else None
    chosen = np.zeros(rows, dtype=bool)
    chosen[rng.choice(rows, labelled, replace=False)] = True
    d = np.where(chosen, right_a.astype(float) - right_b, np.nan)
    return accuracy_difference(verdict_a != verdict_b, d, predicted, 0.95)


@pytest.mark.parametrize(
    ("informative", "rows", "labelled"), [(True, 3000, 300), (False, 3000, 300), (True, 400, 400)]
)
def test_the_accuracy_difference_interval_covers_the_true_difference(
    informative: bool, rows: int, labelled: int
) -> None:
    """1,000 tables drawn from judges right 80 % and 74 % of the time: 95 % intervals cover the true
    difference, 0.06, 93-97 % of the time (a binomial tolerance of about 3 standard deviations); a small
    table labelled throughout too, where how often the judges differ is itself uncertain."""
    rng = np.random.default_rng(11 + informative + rows)
    draws = [_simulated(rng, informative, rows, labelled) for _ in range(1000)]
    covered = np.mean([r["ppi"]["low"] <= 0.06 <= r["ppi"]["high"] for r in draws])
    assert 0.93 <= covered <= 0.97, covered
    assert np.mean([r["ppi"]["estimate"] for r in draws]) == pytest.approx(0.06, abs=0.004)  # unbiased
    if informative and labelled < rows:  # confidences that predict who is right buy labels
        assert np.mean([r["effective_labels"] for r in draws]) > 1.2 * labelled


# ------------------------------------------------------------------------------------------ two tables
@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    source = write_rows(folder / "rows.jsonl", plan_rows(PLAN))
    fewer = write_rows(folder / "fewer.jsonl", plan_rows(PLAN[:30]))
    numbers = [("3", "4")] * 5 + [("4", "3")] * 2 + [("5", "5")] * 10 + [("2", "2")] * 3
    numbered = write_rows(folder / "n.jsonl", plan_rows(numbers))
    pairs = [("a", "b")] * 4 + [("b", "a")] * 2 + [("a", "a")] * 6 + [("b", "b")] * 8
    return {
        "a": run_side(folder, source, "A"),
        "b": run_side(folder, source, "B"),
        "fewer": run_side(folder, fewer, "B", output="fewer.parquet"),
        "two": run_side(folder, source, "B", names=("x", "y"), output="two.parquet"),
        "int_a": run_side(folder, numbered, "A", judgment_type="INT", output="int_a.parquet"),
        "int_b": run_side(folder, numbered, "B", judgment_type="INT", output="int_b.parquet"),
        "pair_a": run_pair_side(folder, write_rows(folder / "p.jsonl", pair_rows(pairs)), "A"),
        "pair_b": run_pair_side(folder, folder / "p.jsonl", "B"),
    }


def _open(tables: dict[str, Path], *names: str) -> list[ResultTable]:
    return [ResultTable.open(tables[n]) for n in names]


def test_the_flips_are_the_planned_ones_and_failures_are_counted(tables: dict[str, Path]) -> None:
    a, b = _open(tables, "a", "b")
    report = compare_tables(a, b)
    assert report["rows"] == 40 and report["compared_rows"] == 38
    assert report["not_compared"] == {"A parse_error": 1, "B parse_error": 1}
    assert [(f["from"], f["to"], f["rows"]) for f in report["flips"]] == [(True, False, 12), (False, True, 3)]
    assert report["flips"][0]["row_ids"] == [f"r{i}" for i in range(12)]
    assert report["flips"][1]["row_ids"] == ["r12", "r13", "r14"]
    assert report["same_verdict_rows"] == 23
    # kappa of the 2x2 table of the compared rows, by statsmodels
    expected = cohens_kappa(np.array([[14, 12], [3, 9]]))
    assert report["agreement"]["cohen_kappa"]["estimate"] == pytest.approx(expected.kappa)
    assert report["agreement"]["percent"]["estimate"] == pytest.approx(23 / 38)
    verdicts = report["mcnemar"]
    assert (verdicts["value"], verdicts["only_a"], verdicts["only_b"]) == ("yes", 12, 3)
    assert verdicts["p_value"] == pytest.approx(sm_mcnemar([[14, 12], [3, 9]], exact=True).pvalue)
    assert "without labels" in report["conclusion"]


def test_the_accuracies_and_their_difference_match_a_direct_count(tables: dict[str, Path]) -> None:
    a, b = _open(tables, "a", "b")
    rng = np.random.default_rng(5)
    truth = [str(rng.choice(["yes", "no"])) for _ in PLAN]
    report = compare_tables(a, b, labels=truth)["labels"]
    compared = [i for i, (x, y) in enumerate(PLAN) if "fail" not in (x, y)]
    right_a = [PLAN[i][0] == truth[i] for i in compared]
    right_b = [PLAN[i][1] == truth[i] for i in compared]
    assert report["accuracy_a"]["estimate"] == pytest.approx(np.mean(right_a))
    assert report["accuracy_b"]["estimate"] == pytest.approx(np.mean(right_b))
    assert report["labelled_not_compared"] == 2
    # every row labelled: the difference is the difference of the two accuracies itself
    assert report["difference"]["ppi"]["estimate"] == pytest.approx(np.mean(right_a) - np.mean(right_b))
    assert report["mcnemar"]["only_a"] == sum(x and not y for x, y in zip(right_a, right_b, strict=True))
    # the majority label on the same labelled compared rows, counted here
    labels_seen = [truth[i] == "yes" for i in compared]  # yes/no labels read as booleans
    commonest = max(sorted(set(labels_seen)), key=labels_seen.count)
    majority = report["baselines"]["majority"]
    assert majority["rule"] == f"always {commonest!r}"
    assert majority["successes"] == labels_seen.count(commonest) and majority["trials"] == len(compared)
    assert "first shown" not in report["baselines"]  # not a pairwise judge
    # half the rows labelled (GENERATE: no confidences, so lambda 0): the stratified mean by hand
    half = [t if i % 2 == 0 else None for i, t in enumerate(truth)]
    partial = compare_tables(a, b, labels=half)["labels"]
    differ = [i for i in compared if PLAN[i][0] != PLAN[i][1]]
    seen = [i for i in differ if half[i] is not None]
    d = [float(PLAN[i][0] == truth[i]) - float(PLAN[i][1] == truth[i]) for i in seen]
    assert partial["prediction"] == "none"
    assert partial["difference"]["ppi"]["estimate"] == pytest.approx(len(differ) / len(compared) * np.mean(d))


def test_a_judge_that_is_better_is_named(tables: dict[str, Path]) -> None:
    a, b = _open(tables, "a", "b")
    # B right on every flip, both right elsewhere: B is better
    truth = [y if x != y and y != "fail" else x if x != "fail" else y for x, y in PLAN]
    report = compare_tables(a, b, labels=truth)
    assert report["conclusion"].startswith("B is better: accuracy +")
    assert "McNemar p = " in report["conclusion"]


def test_numeric_verdicts_flip_and_their_mean_difference_matches_scipy(tables: dict[str, Path]) -> None:
    a, b = _open(tables, "int_a", "int_b")
    report = compare_tables(a, b)
    assert report["verdicts"] == "number"
    assert [(f["from"], f["to"], f["rows"]) for f in report["flips"]] == [(3, 4, 5), (4, 3, 2)]
    x = [3] * 5 + [4] * 2 + [5] * 10 + [2] * 3
    y = [4] * 5 + [3] * 2 + [5] * 10 + [2] * 3
    expected = stats.ttest_rel(x, y).confidence_interval(0.95)
    difference = report["verdict_difference"]["difference"]
    assert difference["estimate"] == pytest.approx(np.mean(x) - np.mean(y))
    assert (difference["low"], difference["high"]) == (
        pytest.approx(expected.low),
        pytest.approx(expected.high),
    )


def test_pairwise_winners_flip(tables: dict[str, Path]) -> None:
    a, b = _open(tables, "pair_a", "pair_b")
    report = compare_tables(a, b)
    assert report["verdicts"] == "pairwise"
    assert [(f["from"], f["to"], f["rows"]) for f in report["flips"]] == [("a", "b", 4), ("b", "a", 2)]
    labels = ["1"] * 20  # LLMBar's 1: answer a is better
    found = compare_tables(a, b, labels=labels)["labels"]
    assert found["accuracy_a"]["successes"] == 4 + 6 and found["accuracy_b"]["successes"] == 2 + 6
    assert found["baselines"]["first shown"]["estimate"] == 1.0  # every label says a, shown first
    assert found["prediction"] == "confidences"


def test_bad_inputs_are_refused_with_a_clear_message(tables: dict[str, Path]) -> None:
    a, b, fewer, two, numbers = _open(tables, "a", "b", "fewer", "two", "int_a")
    with pytest.raises(
        InputError, match=r"\(40 rows\) and B \(30 rows\) are not over the same rows: 10 row ids"
    ):
        compare_tables(a, fewer)
    with pytest.raises(InputError, match="'r30', 'r31'"):
        compare_tables(a, fewer)
    with pytest.raises(InputError, match=r"^B: the results hold no judge 'nope' \(judges: quality\)"):
        compare_tables(a, b, judge_b="nope")
    with pytest.raises(InputError, match=r"several judges \(x, y\)"):
        compare_tables(a, two)
    assert compare_tables(a, two, judge_b="y")["b"]["judge"] == "y"
    with pytest.raises(InputError, match="label 'maybe' of row r3 is not a verdict of judge 'quality'"):
        compare_tables(a, b, labels=["yes"] * 3 + ["maybe"] + [None] * 36)
    with pytest.raises(InputError, match=r"gives bool verdicts .* gives number verdicts"):
        compare_tables(a, numbers)
