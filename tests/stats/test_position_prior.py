"""The position prior of a both-orders pairwise judge: exact on rows built with a known prior, its interval
held against scipy's t interval and a simulation of its coverage, and recorded in a real run's metadata
(a scripted pairwise judge in LOGPROBS), where `jurist info` and `jurist audit` show it."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from jurist import Engine, ScriptedBackend
from jurist.analysis.text import format_prior
from jurist.io.parts import read_metadata
from jurist.records import LabelRequest
from jurist.stats.position import position_prior, row_prior


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize("bias", [-1.0, 0.0, 0.7, 3.0])
def test_a_rows_prior_cancels_its_content(bias: float) -> None:
    for content in (-4.0, -0.5, 0.0, 2.5):
        ab, ba = sigmoid(content + bias), sigmoid(-content + bias)
        assert row_prior(ab, ba) == pytest.approx(bias, abs=1e-9)
    assert row_prior(None, 0.5) is None and row_prior(0.5, float("nan")) is None
    assert math.isfinite(row_prior(1.0, 1.0) or math.inf)  # a vote share of 1 is clipped, not infinite


def draws(rng: random.Random, n: int, bias: float, noise: float) -> tuple[list[float], list[float]]:
    ab, ba = [], []
    for _ in range(n):
        content = rng.gauss(0, 2)
        ab.append(sigmoid(content + bias + rng.gauss(0, noise)))
        ba.append(sigmoid(-content + bias + rng.gauss(0, noise)))
    return ab, ba


@pytest.mark.parametrize("n", [8, 200])
def test_the_interval_is_scipys_t_interval_of_the_rows_priors(n: int) -> None:
    from scipy import stats

    ab, ba = draws(random.Random(n), n, 1.3, 0.8)
    logits = (np.log(np.array(ab) / (1 - np.array(ab))) + np.log(np.array(ba) / (1 - np.array(ba)))) / 2
    prior = position_prior(ab, ba)
    assert prior is not None and prior["rows"] == n
    assert prior["mean_log_odds"] == pytest.approx(float(logits.mean()), abs=1e-9)
    sem = float(logits.std(ddof=1) / math.sqrt(n))
    low, high = stats.t.interval(0.95, n - 1, loc=float(logits.mean()), scale=sem)
    assert (prior["low"], prior["high"]) == pytest.approx((low, high), abs=1e-9)
    assert prior["first_shown_probability"] == pytest.approx(sigmoid(prior["mean_log_odds"]))


def test_the_interval_covers_the_true_prior_near_its_level() -> None:
    rng = random.Random(11)
    for n, bias in ((12, 2.0), (80, 0.5)):
        covered = 0
        runs = 1000
        for _ in range(runs):
            prior = position_prior(*draws(rng, n, bias, 1.0))
            assert prior is not None
            covered += prior["low"] <= bias <= prior["high"]
        assert 0.93 <= covered / runs <= 0.97, (n, covered / runs)


def test_no_rows_no_prior_and_lengths_must_match() -> None:
    assert position_prior([None], [0.5]) is None
    with pytest.raises(ValueError):
        position_prior([0.5], [])


PAIRWISE = {
    "name": "pref",
    "judge_params": {
        "prompt_template": "Q {question}\n1: {response_a}\n2: {response_b}",
        "scoring": "LOGPROBS",
    },
    "pairwise_judge_params": {},
}
BIAS = 1.5


def biased(request: LabelRequest) -> dict[str, float]:
    """Label scores of a judge whose log-odds for the first-shown answer are content + BIAS."""
    text = request.messages[-1].content
    i = int(text.split()[1][1:])
    content = (i % 5 - 2) * 0.8  # what the content says for a
    shown_first_is_a = "1: a" in text
    logit = (content if shown_first_is_a else -content) + BIAS
    return {"A": math.log(sigmoid(logit)), "B": math.log(1 - sigmoid(logit))}


def test_a_run_records_its_prior_and_info_and_audit_show_it(tmp_path: Path) -> None:
    rows = [{"question": f"q{i}", "response_a": f"a{i}", "response_b": f"b{i}"} for i in range(40)]
    out = tmp_path / "pref.parquet"
    Engine(PAIRWISE, ScriptedBackend([], labels=biased), chunk_size=16).run_file(rows, out)
    metadata = read_metadata(out) or {}
    prior = metadata["position_prior"]["pref"]
    assert prior["rows"] == 40
    assert prior["mean_log_odds"] == pytest.approx(BIAS, abs=1e-6)  # every row's prior is exactly BIAS
    from jurist.cli import app

    shown = CliRunner().invoke(app, ["info", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "    " + format_prior(prior) in shown.output.splitlines()
    assert "position prior +1.50 log-odds for the first-shown answer" in shown.output
    audited = CliRunner().invoke(app, ["audit", str(out)])
    assert audited.exit_code == 0, audited.output
    assert "position prior +1.50 log-odds" in audited.output
