"""Sampling plans on real result files of scripted runs: the probabilities they record are the chances they
draw each row with (checked by drawing many plans), and the labels file round-trips."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from evidence_data import run_pairwise, run_pointwise
from jurist.errors import InputError
from jurist.io.results import ResultTable
from jurist.labels.file import LabelLine, Strategy, latest_labels, read_label_lines
from jurist.labels.sampling import DEFAULT_FLOOR, Draw, SamplingPlan, active_probabilities

PLANS = 1500


@pytest.fixture(scope="module")
def point(tmp_path_factory: pytest.TempPathFactory) -> ResultTable:
    results, _ = run_pointwise(tmp_path_factory.mktemp("point"), count=60)
    return ResultTable.open(results)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> ResultTable:
    results, _ = run_pairwise(tmp_path_factory.mktemp("pair"), count=40)
    return ResultTable.open(results)


def inclusion_frequencies(results: ResultTable, strategy: Strategy, budget: int) -> np.ndarray:
    """How often each row was drawn over ``PLANS`` seeds."""
    ids = [str(v) for v in results.values("row_id")]
    counts = Counter(
        d.row_id
        for seed in range(PLANS)
        for d in SamplingPlan.build(results, "quality", strategy, budget, seed=seed).draws()
    )
    return np.array([counts[i] for i in ids]) / PLANS


def assert_frequencies_match(frequencies: np.ndarray, probabilities: np.ndarray) -> None:
    """Each row's drawn share within 4.5 binomial standard errors of its probability (60 rows: a false
    alarm about once in 2,500 runs), and the rows' squared z-scores summing like a chi-square."""
    se = np.sqrt(probabilities * (1 - probabilities) / PLANS)
    z = (frequencies - probabilities) / np.where(se > 0, se, 1)
    assert np.abs(z).max() < 4.5, (frequencies, probabilities)
    assert np.sum(z**2) < len(z) + 5 * np.sqrt(2 * len(z))


def test_uniform_draws_budget_rows_in_a_seeded_random_order(point: ResultTable) -> None:
    plan = SamplingPlan.build(point, "quality", Strategy.UNIFORM, 15, seed=3)
    draws = plan.draws()
    assert len(draws) == 15 and len({d.row_id for d in draws}) == 15
    assert [d.position for d in draws] == list(range(15))
    assert all(d.probability == 15 / 60 for d in draws)
    assert SamplingPlan.build(point, "quality", "uniform", 15, seed=3).draws() == draws  # type: ignore[arg-type]
    assert SamplingPlan.build(point, "quality", Strategy.UNIFORM, 15, seed=4).draws() != draws
    ids = [d.row_id for d in draws]
    assert ids != sorted(ids, key=int)  # a random order, not the file's
    assert plan.probability("59") == 15 / 60


def test_uniform_inclusion_frequencies_are_the_recorded_probability(point: ResultTable) -> None:
    frequencies = inclusion_frequencies(point, Strategy.UNIFORM, 12)
    assert_frequencies_match(frequencies, np.full(60, 12 / 60))


def test_active_probabilities_follow_the_uncertainty_with_a_floor() -> None:
    conf = [0.5, 0.6, 0.75, 0.9, 0.99, 1.0, None, 0.8]
    pi = active_probabilities(conf, 3, 0.25)
    # the formula written out: a quarter of the budget even, the rest by sqrt(1 - c)
    s = np.sqrt([0.5, 0.4, 0.25, 0.1, 0.01, 0.0, 1.0, 0.2])
    expected = 3 * (0.25 / 8 + 0.75 * s / s.sum())
    assert np.allclose(pi, expected)
    assert pi.sum() == pytest.approx(3)
    assert pi.min() == pytest.approx(0.25 * 3 / 8)  # the fully confident row keeps the floor


def test_active_probabilities_are_capped_at_one_and_still_sum_to_the_budget() -> None:
    conf = [0.5] * 3 + [0.999] * 20
    pi = active_probabilities(conf, 8, 0.1)
    assert np.all(pi[:3] == 1.0)
    assert pi.sum() == pytest.approx(8)
    assert np.allclose(pi[3:], 5 / 20)  # the rest share what is left equally, as their shares are equal
    assert np.all(active_probabilities(conf, 23, 0.1) == 1.0)
    assert np.allclose(active_probabilities(conf, 5, 1.0), 5 / 23)  # floor 1: uniform


def test_active_plan_draws_each_row_with_its_recorded_probability(point: ResultTable) -> None:
    plan = SamplingPlan.build(point, "quality", Strategy.ACTIVE, 12, seed=0)
    conf = point.values("quality.judgment_confidence")
    probabilities = np.array(plan.probabilities)
    assert np.allclose(probabilities, active_probabilities(conf, 12, DEFAULT_FLOOR))
    assert probabilities.sum() == pytest.approx(12)
    least, most = int(np.argmax(conf)), int(np.argmin(conf))
    assert probabilities[most] > probabilities[least]
    assert_frequencies_match(inclusion_frequencies(point, Strategy.ACTIVE, 12), probabilities)
    for d in plan.draws():
        assert d.probability == probabilities[int(d.row_id)]


def test_active_pairwise_uncertainty_is_largest_near_an_even_p_a(pair: ResultTable) -> None:
    plan = SamplingPlan.build(pair, "pref", Strategy.ACTIVE, 10)
    p_a = np.array(pair.values("pref.p_a"))
    pi = np.array(plan.probabilities)
    order = np.argsort(np.abs(2 * p_a - 1))
    assert np.all(np.diff(pi[order]) <= 1e-12)  # more decided, less likely drawn
    assert np.allclose(pi, active_probabilities([max(p, 1 - p) for p in p_a], 10, DEFAULT_FLOOR))


def test_stratified_keeps_every_group_in_proportion_and_every_row_equally_likely(
    point: ResultTable,
) -> None:
    verdicts = [str(v) for v in point.values("quality.judgment")]
    sizes = Counter(verdicts)
    for seed in range(50):
        draws = SamplingPlan.build(point, "quality", Strategy.STRATIFIED, 12, seed=seed).draws()
        got = Counter(verdicts[int(d.row_id)] for d in draws)
        for group, size in sizes.items():
            assert got[group] in (int(np.floor(12 * size / 60)), int(np.ceil(12 * size / 60)))
        assert all(d.probability == 12 / 60 for d in draws)
    frequencies = inclusion_frequencies(point, Strategy.STRATIFIED, 12)
    assert_frequencies_match(frequencies, np.full(60, 12 / 60))


def test_stratified_prefixes_hold_each_group_in_proportion(point: ResultTable) -> None:
    plan = SamplingPlan.build(point, "quality", Strategy.STRATIFIED, 30, seed=1, strata="group")
    assert plan.strata == "group"
    groups = [g for g in point.values("group")]
    for stop in (6, 10, 20):
        got = Counter(groups[int(d.row_id)] for d in plan.draws()[:stop])
        assert abs(got["x"] - got["y"]) <= 1  # the two groups are the same size


def test_active_is_refused_for_a_judge_without_confidence() -> None:
    table = pa.table(
        {
            "row_id": ["0", "1", "2"],
            "plain.judgment": [True, False, True],
            "plain.score": [1.0, 0.0, 1.0],
            "plain.status": ["ok"] * 3,
        }
    )
    results = ResultTable(table)
    with pytest.raises(InputError, match=r"no confidence.*uniform or stratified"):
        SamplingPlan.build(results, "plain", Strategy.ACTIVE, 2)
    assert len(SamplingPlan.build(results, "plain", Strategy.UNIFORM, 2).draws()) == 2
    assert len(SamplingPlan.build(results, "plain", Strategy.STRATIFIED, 3).draws()) == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 0}, "at least 1"),
        ({"budget": 5, "floor": 0.0}, "floor"),
        ({"budget": 5, "strata": "group"}, "stratified"),
    ],
)
def test_bad_plan_arguments_say_which(point: ResultTable, kwargs: dict, message: str) -> None:
    budget = kwargs.pop("budget")
    with pytest.raises(InputError, match=message):
        SamplingPlan.build(point, "quality", Strategy.ACTIVE, budget, **kwargs)


def test_a_budget_over_the_rows_offers_every_row(point: ResultTable) -> None:
    for strategy in Strategy:
        plan = SamplingPlan.build(point, "quality", strategy, 500)
        assert sorted(int(d.row_id) for d in plan.draws()) == list(range(60))
        assert all(d.probability == 1.0 for d in plan.draws())


def test_label_lines_round_trip_and_the_latest_line_wins(point: ResultTable, tmp_path: Path) -> None:
    plan = SamplingPlan.build(point, "quality", Strategy.ACTIVE, 10, seed=7)
    first, second = plan.draws()[:2]
    lines = [
        plan.label_line(first, "yes", "ana", time="2026-01-01T10:00:00+00:00"),
        plan.label_line(second, "no", "ana"),
        plan.label_line(first, "no", "ben", time="2026-01-01T11:00:00+00:00"),  # a review's correction
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(line.to_json() + "\n" for line in lines) + "\n")
    raw = json.loads(path.read_text().splitlines()[0])
    assert raw["strategy"] == "active" and raw["seed"] == 7 and raw["position"] == 0
    assert raw["probability"] == first.probability
    read = read_label_lines(path)
    assert read == lines
    latest = latest_labels(read)
    assert latest[first.row_id].label == "no" and latest[first.row_id].labeller == "ben"
    assert latest[second.row_id].label == "no"
    assert isinstance(first, Draw)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"row_id": "1", "label": "yes", "probability": 0}', "line 2: probability"),
        ('{"label": "yes"}', "line 2: row_id"),
        ('{"row_id": "1", "label": "yes", "strategy": "greedy"}', "line 2: strategy"),
        ("not json", "line 2 is not JSON"),
    ],
)
def test_a_bad_label_line_names_the_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(LabelLine(row_id="0", label="no").to_json() + "\n" + line + "\n")
    with pytest.raises(InputError, match=message) as error:
        read_label_lines(path)
    assert str(path) in str(error.value)
