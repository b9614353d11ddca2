"""The estimate from labels a sampling plan chose with unequal probabilities: the weighted PPI++ formula
against an independent computation (statsmodels' weighted least squares with a robust standard error, and
a grid search for the variance-minimising lambda), its coverage by simulation of an active plan, and the
path from a `jurist label` file through `jurist estimate`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from evidence_data import run_pointwise
from jurist.analysis.estimate import estimate_judge
from jurist.cli import app
from jurist.errors import InputError
from jurist.io.results import ResultTable
from jurist.labels.file import Strategy
from jurist.labels.sampling import SamplingPlan, active_probabilities, design
from jurist.labels.source import LabelSource
from jurist.stats.estimate import corrected_mean, ppi_mean, ppi_weighted_mean

sm = pytest.importorskip("statsmodels.api")


def sample(rng: np.random.Generator, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(the judge's P(yes), the labels) of a biased judge whose errors sit where it is unsure."""
    z = rng.normal(0.0, 2.5, rows)
    p = 1 / (1 + np.exp(-z))
    return p, (rng.random(rows) < 1 / (1 + np.exp(-(z + 0.6)))).astype(float)


def robust_se(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """The weighted mean of ``values`` and its heteroskedasticity-robust (HC0) standard error, from
    statsmodels' weighted least squares on a constant: the Hajek mean and its linearised error."""
    fit = sm.WLS(values, np.ones((len(values), 1)), weights=weights).fit(cov_type="HC0")
    return float(fit.params[0]), float(fit.bse[0])


def test_the_weighted_estimate_matches_weighted_least_squares_and_its_lambda_minimises_the_error() -> None:
    rng = np.random.default_rng(7)
    p, labels = sample(rng, 3_000)
    pi = active_probabilities([float(max(v, 1 - v)) for v in p], 150, 0.2)
    drawn = rng.random(len(p)) < pi
    y, f, w = labels[drawn], p[drawn], 1 / pi[drawn]
    g = p[~drawn]
    everything = np.concatenate([f, g])

    def independent(lam: float) -> tuple[float, float]:
        mean, se = robust_se(y - lam * f, w)
        # HC0 scales the squared residuals by n / n: no small-sample factor, as the estimator
        return lam * everything.mean() + mean, float(
            np.sqrt(lam**2 * np.var(everything) / len(everything) + se**2)
        )

    estimate = ppi_weighted_mean(y, f, pi[drawn], g)
    theta, se = independent(estimate.lam)
    assert estimate.ppi.estimate == pytest.approx(theta, rel=1e-9)
    assert estimate.ppi.se == pytest.approx(se, rel=1e-9)
    assert 0 < estimate.lam <= 1
    grid = np.linspace(0, 1, 2001)
    best = grid[np.argmin([independent(lam)[1] for lam in grid])]
    assert estimate.lam == pytest.approx(best, abs=1e-3)
    fixed = ppi_weighted_mean(y, f, pi[drawn], g, lam=0.0)
    assert (fixed.ppi.estimate, fixed.ppi.se) == pytest.approx(robust_se(y, w), rel=1e-9)
    assert (fixed.labels_only.estimate, fixed.labels_only.se) == pytest.approx(robust_se(y, w), rel=1e-9)


def test_equal_probabilities_give_plain_ppi_and_unequal_ones_the_weighted_estimate() -> None:
    rng = np.random.default_rng(3)
    p, labels = sample(rng, 500)
    targets: list[float | None] = [float(v) if i < 60 else None for i, v in enumerate(labels)]
    scores = [float(v) for v in p]
    plain = ppi_mean(labels[:60], p[:60], p[60:])
    same = corrected_mean(targets, scores, [0.12] * 500, 0.95)
    assert not same.weighted and same.ppi == plain.ppi
    assert corrected_mean(targets, scores, [None] * 500, 0.95).ppi == plain.ppi
    chances: list[float | None] = [0.5 if i % 2 else 0.1 for i in range(500)]
    weighted = corrected_mean(targets, scores, chances, 0.95)
    labelled = np.array(chances[:60], dtype=float)
    assert weighted.weighted
    assert weighted.ppi == ppi_weighted_mean(labels[:60], p[:60], labelled, p[60:]).ppi
    with pytest.raises(InputError, match=r"\(0, 1\]"):
        ppi_weighted_mean(labels[:3], p[:3], [0.5, 0.0, 0.2], p[3:])


def test_an_active_plan_s_interval_covers_the_true_mean_and_is_narrower_than_uniform() -> None:
    """400 simulated datasets of 4,000 rows, 150 labels each: the plan's own draw and the estimate
    `jurist estimate` gives (benchmarks/label_sampling.py runs the full version)."""
    draws, rows, budget = 400, 4_000, 150
    covered = {"uniform": 0, "active": 0}
    widths: dict[str, list[float]] = {"uniform": [], "active": []}
    rng = np.random.default_rng(11)
    for _ in range(draws):
        p, labels = sample(rng, rows)
        truth = labels.mean()
        for strategy in covered:
            confidence = [float(max(v, 1 - v)) for v in p] if strategy == "active" else None
            pi, drawn = design(Strategy(strategy), rows, budget, rng, confidences=confidence)
            targets: list[float | None] = [None] * rows
            for i in drawn:
                targets[int(i)] = float(labels[i])
            estimate = corrected_mean(targets, [float(v) for v in p], [float(v) for v in pi], 0.95)
            covered[strategy] += estimate.ppi.low <= truth <= estimate.ppi.high
            widths[strategy].append(estimate.ppi.width)
    tolerance = 3 * (0.95 * 0.05 / draws) ** 0.5
    for strategy, count in covered.items():
        assert abs(count / draws - 0.95) <= tolerance, (strategy, count / draws)
    assert np.median(widths["active"]) < 0.95 * np.median(widths["uniform"])


@pytest.fixture(scope="module")
def active_labels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A scripted judge's results (80 rows with P(yes)) and a labels file of an active plan's draws as
    `jurist label` writes it, with one review correction of a drawn row and one label of a row never
    drawn."""
    folder = tmp_path_factory.mktemp("active")
    results, positional = run_pointwise(folder, count=80)
    truth = [json.loads(line)["label"] for line in positional.read_text().splitlines()]
    table = ResultTable.open(results)
    plan = SamplingPlan.build(table, "quality", Strategy.ACTIVE, 30, seed=4)
    draws = plan.draws()
    by_id = dict(zip([str(v) for v in table.values("row_id")], truth, strict=True))
    lines = [plan.label_line(d, by_id[d.row_id], "ann") for d in draws]
    text = [line.to_json() for line in lines]
    first = draws[0]
    flipped = "no" if by_id[first.row_id] == "yes" else "yes"
    text.append(json.dumps({"row_id": first.row_id, "label": flipped, "probability": first.probability}))
    undrawn = next(r for r in by_id if r not in {d.row_id for d in draws})
    text.append(json.dumps({"row_id": undrawn, "label": "yes", "labeller": "bob"}))
    path = folder / "plan_labels.jsonl"
    path.write_text("\n".join(text) + "\n")
    return results, path


def test_a_label_file_s_probabilities_join_by_row_id_the_latest_line_counting(
    active_labels: tuple[Path, Path],
) -> None:
    results, path = active_labels
    table = ResultTable.open(results)
    labels, chances = LabelSource(path).for_results(table)
    assert chances is not None
    plan = SamplingPlan.build(table, "quality", Strategy.ACTIVE, 30, seed=4)
    drawn = {d.row_id: d.probability for d in plan.draws()}
    for row, chance in zip([str(v) for v in table.values("row_id")], chances, strict=True):
        assert chance == drawn.get(row)
    ids = [str(v) for v in table.values("row_id")]
    truth = dict(
        zip(
            ids,
            [json.loads(x)["label"] for x in results.with_name("labels.jsonl").read_text().splitlines()],
            strict=True,
        )
    )
    first = plan.draws()[0].row_id
    assert labels[ids.index(first)] not in (None, truth[first])
    report = estimate_judge(table, "quality", labels, probabilities=chances)
    assert report["labels_outside_plan"] == 1
    assert report["overall"]["design"] == "inverse-probability weighted"
    assert report["overall"]["labelled_rows"] == len(drawn)


def test_jurist_estimate_weights_a_label_file_s_active_draws(active_labels: tuple[Path, Path]) -> None:
    results, path = active_labels
    out = CliRunner().invoke(app, ["estimate", str(results), "--labels", str(path), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)["quality"]
    assert report["overall"]["design"] == "inverse-probability weighted"
    assert report["labels_outside_plan"] == 1
    text = CliRunner().invoke(app, ["estimate", str(results), "--labels", str(path)])
    assert "labels weighted by 1 / their selection probability" in text.output
    assert "left out 1 labels of rows the sampling plan did not draw" in text.output
    bad = path.with_name("bad.jsonl")
    drawn = json.loads(path.read_text().splitlines()[1])
    bad.write_text(path.read_text() + json.dumps({**drawn, "probability": 3}) + "\n")
    refused = CliRunner().invoke(app, ["estimate", str(results), "--labels", str(bad)])
    assert refused.exit_code == 2
    assert "selection probability must be a number in (0, 1]" in refused.output
