"""The audit's statistics against hand computations, on real result files from scripted runs."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from evidence_data import run_pairwise, run_pointwise
from jurist.analysis.audit import _kappa, audit_judge, default_responses, slope
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.stats.agreement import cohen_kappa
from jurist.stats.share import Share


def hand_slope(x: list[float], y: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """OLS slope and its t interval from the textbook sums."""
    n, mx, my = len(x), statistics.fmean(x), statistics.fmean(y)
    sxx = sum((a - mx) ** 2 for a in x)
    b = sum((a - mx) * (c - my) for a, c in zip(x, y, strict=True)) / sxx
    intercept = my - b * mx
    residual = sum((c - intercept - b * a) ** 2 for a, c in zip(x, y, strict=True))
    se = math.sqrt(residual / (n - 2) / sxx)
    from scipy import stats

    t = stats.t.ppf(0.5 + confidence / 2, n - 2)
    return b, b - t * se, b + t * se


def hand_wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_wilson_and_slope_match_the_textbook_formulas() -> None:
    got = Share(37, 90, 0.95).as_dict()
    assert (got["low"], got["high"]) == pytest.approx(hand_wilson(37, 90), abs=1e-9)
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 50).tolist()
    y = [0.3 * a + rng.normal() for a in x]
    fit = slope(x, y, 0.95)
    assert fit is not None
    assert (fit["slope"], fit["low"], fit["high"]) == pytest.approx(hand_slope(x, y))
    assert slope([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], 0.95) is None


def test_the_vectorized_kappa_equals_the_pure_python_one() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    b[:120] = a[:120]
    assert float(_kappa(a.astype(float), b.astype(float))) == pytest.approx(
        cohen_kappa(a.tolist(), b.tolist())
    )


def test_the_pointwise_audit_against_hand_counts(tmp_path: Path) -> None:
    output, labels_file = run_pointwise(tmp_path, count=80, labelled=50)
    results = ResultTable.open(output)
    labels = LabelSource(labels_file).for_results(results).labels
    options = default_responses(results, results.judge("quality"))
    assert (options.response, options.tokens) == ("response", "response_tokens")
    options = replace(options, where=("quality.score >= 0.6",))
    audit = audit_judge(results, "quality", labels, options)
    table = pq.read_table(output).to_pylist()
    truth = [None if v is None else v == "yes" for v in labels]
    # length: slope of the score on the response's characters / 100
    lengths = [len(r["response"]) / 100 for r in table]
    scores = [r["quality.score"] for r in table]
    assert (
        audit["length"]["score"]["slope"],
        audit["length"]["score"]["low"],
        audit["length"]["score"]["high"],
    ) == (pytest.approx(hand_slope(lengths, scores)))
    assert audit["length"]["score"]["slope"] > 0  # the scripted judge favours longer responses
    tokens = [r["response_tokens"] / 100 for r in table]
    assert audit["length"]["tokens"]["unit"] == "100 tokens"
    assert audit["length"]["tokens"]["score"]["slope"] == pytest.approx(hand_slope(tokens, scores)[0])
    pairs = [(x, s - float(t)) for x, s, t in zip(lengths, scores, truth, strict=True) if t is not None]
    assert audit["length"]["error"]["slope"] == pytest.approx(
        hand_slope([p[0] for p in pairs], [p[1] for p in pairs])[0]
    )
    # lean: the judge's share of True against the labels'
    verdicts = [r["quality.judgment"] for r in table]
    assert audit["lean"]["True"]["judge"] == pytest.approx(verdicts.count(True) / len(verdicts))
    labelled = [t for t in truth if t is not None]
    assert audit["lean"]["True"]["labels"] == pytest.approx(labelled.count(True) / len(labelled))
    # confidence: Brier and ECE by hand
    rows = [
        (r["quality.judgment_confidence"], r["quality.judgment"] == t)
        for r, t in zip(table, truth, strict=True)
        if t is not None
    ]
    brier = statistics.fmean((c - float(ok)) ** 2 for c, ok in rows)
    assert audit["confidence"]["brier"] == pytest.approx(brier)
    bins: dict[int, list[tuple[float, bool]]] = {}
    for c, ok in rows:
        bins.setdefault(min(int(c * 10), 9), []).append((c, ok))
    ece = sum(
        len(m) / len(rows) * abs(statistics.fmean(ok for _, ok in m) - statistics.fmean(c for c, _ in m))
        for m in bins.values()
    )
    assert audit["confidence"]["ece"] == pytest.approx(ece)
    assert sum(b["rows"] for b in audit["confidence"]["reliability"]) == len(rows)
    # agreement: the accuracy and its bootstrap interval around it
    accuracy = statistics.fmean(float(v == t) for v, t in zip(verdicts, truth, strict=True) if t is not None)
    agreement = audit["agreement"]
    assert agreement["accuracy"]["estimate"] == pytest.approx(accuracy)
    assert agreement["accuracy"]["low"] < accuracy < agreement["accuracy"]["high"]
    normal_half = 1.96 * math.sqrt(accuracy * (1 - accuracy) / len(rows))
    assert agreement["accuracy"]["high"] - agreement["accuracy"]["low"] == pytest.approx(
        2 * normal_half, rel=0.25
    )
    decided = [(v, t) for v, t in zip(verdicts, truth, strict=True) if t is not None]
    assert agreement["cohen_kappa"]["estimate"] == pytest.approx(
        cohen_kappa([v for v, _ in decided], [t for _, t in decided])
    )
    # keep rule: precision and recall by hand (every row is ok, so the gates keep all)
    kept = [s >= 0.6 for s in scores]
    both = [(k, t) for k, t in zip(kept, truth, strict=True) if t is not None]
    true_keeps = sum(k and t for k, t in both)
    keep = audit["keep_rule"]
    assert keep["kept_rows"] == sum(kept)
    assert keep["precision"]["estimate"] == pytest.approx(true_keeps / sum(k for k, _ in both))
    assert keep["recall"]["estimate"] == pytest.approx(true_keeps / sum(t for _, t in both))


def test_the_pairwise_audit_position_and_length_against_hand_counts(tmp_path: Path) -> None:
    output, _ = run_pairwise(tmp_path, count=60)
    results = ResultTable.open(output)
    options = default_responses(results, results.judge("pref"))
    assert options.pair_responses == ("response_a", "response_b")
    audit = audit_judge(results, "pref", None, options)
    table = pq.read_table(output).to_pylist()
    order_verdicts = [r["pref.ab_judgment"] for r in table] + [r["pref.ba_judgment"] for r in table]
    first = order_verdicts.count("A")
    position = audit["position"]["first_shown_wins"]
    assert position["estimate"] == pytest.approx(first / len(order_verdicts))
    assert (position["low"], position["high"]) == pytest.approx(hand_wilson(first, len(order_verdicts)))
    assert position["estimate"] > 0.6  # the scripted judge leans to the first-shown answer
    consistent = [r["pref.position_consistent"] for r in table]
    assert audit["position"]["order_consistency"]["estimate"] == pytest.approx(
        sum(consistent) / len(consistent)
    )
    differences = [(len(r["response_a"]) - len(r["response_b"])) / 100 for r in table]
    assert audit["length"]["score"]["slope"] == pytest.approx(
        hand_slope(differences, [r["pref.score"] for r in table])[0]
    )
    assert "agreement" not in audit
