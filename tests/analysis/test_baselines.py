"""A judge's accuracy beside the majority baseline, each with a Wilson interval.

The interval is checked against scipy's own Wilson interval (an independent implementation) and by
simulation of its coverage; the baseline and the words that compare them on hand-counted tables.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from jurist.analysis.agreement import majority_baseline, wilson_interval
from jurist.analysis.baselines import baselines, beats
from jurist.analysis.human import agreement_report, format_report


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (13, 20), (16, 20), (0, 50), (50, 50), (7, 419)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_interval_matches_scipys(k: int, n: int, confidence: float) -> None:
    from scipy.stats import binomtest

    theirs = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    ours = wilson_interval(k, n, confidence)
    assert ours is not None
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)


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


def test_majority_baseline_counts_the_commonest_label() -> None:
    assert majority_baseline([True] * 13 + [False] * 7 + [None] * 3) == (True, 13, 20)
    assert majority_baseline(["a", "b"]) == ("a", 1, 2)  # a tie goes to the first label in sorted order
    assert majority_baseline([None, None]) == (None, 0, 0)


def table(verdicts: list[bool | None]) -> pa.Table:
    return pa.table(
        {
            "t.judgment": verdicts,
            "t.status": ["ok" if v is not None else "parse_error" for v in verdicts],
        }
    )


def test_agree_reports_the_baseline_and_says_when_the_judge_does_not_beat_it() -> None:
    truth = [True] * 13 + [False] * 7
    # a judge that calls everything true: exactly the majority baseline, which it does not beat
    report = agreement_report(table([True] * 20), truth)["t"]
    majority = report["baselines"]["majority"]
    assert report["accuracy"] == majority["accuracy"] == 0.65
    assert majority["rule"] == "always True" and majority["beaten"] == "no"
    assert list(report["baselines"]) == ["majority"]  # no pairwise baselines for a pointwise judge
    text = format_report({"t": report})
    assert "baseline majority (always True): 65.0 % [43.3, 81.9] %: NOT beaten" in text
    assert "warning: the judge does not beat majority on these rows" in text
    # 18 right of 20: the baseline's 65 % lies below the judge's interval
    right18 = [True] * 13 + [False] * 5 + [True] * 2
    report = agreement_report(table(right18), truth)["t"]
    assert report["accuracy"] == 0.9
    low, _ = report["accuracy_interval"]
    assert low > 0.65 and report["baselines"]["majority"]["beaten"] == "yes"
    text = format_report({"t": report})
    assert "65.0 % [43.3, 81.9] %: beaten" in text and "warning" not in text
    # 17 right of 20: above the baseline, but the baseline is inside the judge's interval [64, 95] %
    right17 = [True] * 13 + [False] * 4 + [True] * 3
    assert agreement_report(table(right17), truth)["t"]["baselines"]["majority"]["beaten"] == "unclear"


def test_pairwise_baselines_count_by_hand() -> None:
    truth = ["a", "b", "b", "a", "b", None, "b"]
    lengths = [(10, 5), (3, 9), (7, 7), (2, 8), (20, 1), (1, 2), None]
    found = {b.name: b for b in baselines(truth, pairwise=True, lengths=lengths)}
    assert list(found) == ["majority", "first shown", "longer answer", "shorter answer"]
    assert all(b.rows == 6 for b in found.values())  # the unlabelled row is left out
    assert (found["majority"].rule, found["majority"].right) == ("always 'b'", 4)
    assert found["first shown"].right == 2
    # longer: a, b, -, b, a, - -> right on rows 0 and 1 (rows 2 and 6 are no verdict)
    assert found["longer answer"].right == 2
    # shorter: b, a, -, a, b, - -> right on rows 3 and 4
    assert found["shorter answer"].right == 2
    assert beats(5, 6, found["majority"]) == "unclear"
    assert beats(4, 6, found["majority"]) == "no"
    with pytest.raises(ValueError):
        baselines(truth, pairwise=True, lengths=lengths[:3])


def test_agree_on_a_pairwise_table_uses_the_answers_it_carries() -> None:
    # 10 pairs where the longer answer always wins; a judge that always says a
    rows = 10
    a_longer = [i % 2 == 0 for i in range(rows)]
    judged = pa.table(
        {
            "output_1": ["long answer text" if x else "short" for x in a_longer],
            "output_2": ["short" if x else "long answer text" for x in a_longer],
            "p.winner": ["a"] * rows,
            "p.status": ["ok"] * rows,
            "p.ab_judgment": ["A"] * rows,
            "p.ba_judgment": ["B"] * rows,
            "p.position_consistent": [False] * rows,
        }
    )
    labels = ["a" if x else "b" for x in a_longer]
    report = agreement_report(judged, labels)["p"]
    found = report["baselines"]
    assert found["longer answer"]["accuracy"] == 1.0 and found["longer answer"]["beaten"] == "no"
    assert found["shorter answer"]["accuracy"] == 0.0
    assert found["first shown"]["accuracy"] == report["accuracy"] == 0.5
    assert "warning: the judge does not beat majority, first shown, longer answer" in format_report(
        {"p": report}
    )


def test_the_audit_and_its_text_carry_the_baselines() -> None:
    from jurist.analysis.audit import audit_judge, default_responses
    from jurist.analysis.evidence_text import format_audit
    from jurist.analysis.human import as_results

    truth = [True] * 13 + [False] * 7
    results = as_results(table([True] * 20))
    report = audit_judge(results, "t", truth, default_responses(results, results.judge("t")))
    majority = report["agreement"]["baselines"]["majority"]
    assert (majority["right"], majority["rows"], majority["beaten"]) == (13, 20, "no")
    text = format_audit({"t": report})
    assert "baseline majority (always True): 65.0 % [43.3, 81.9] %: NOT beaten" in text


def test_accuracy_by_length_ratio_counts_by_hand() -> None:
    from jurist.analysis.baselines import accuracy_by_length_ratio

    correct = [True, False, True, True, False, True, True]
    lengths = [(10, 40), (30, 40), (35, 40), (40, 40), (60, 40), (100, 40), None]
    buckets = {b["bucket"]: b for b in accuracy_by_length_ratio(correct, lengths)}
    assert [b["rows"] for b in buckets.values()] == [1, 2, 1, 1, 1]  # 0.25 | 0.75 0.875 | 1.0 | 1.5 | 2.5
    assert buckets["a 0.5-0.9x b"]["accuracy"] == 0.5
    assert buckets["a 0.5-0.9x b"]["interval"] == wilson_interval(1, 2)
    assert buckets["a 1.1-2x b"]["accuracy"] == 0.0
    with pytest.raises(ValueError):
        accuracy_by_length_ratio(correct, lengths[:2])
