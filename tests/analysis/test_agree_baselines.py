"""The baselines in ``jurist agree`` and ``jurist audit``: beside the judge's accuracy, each with its Wilson
interval and whether the judge beats it, in the JSON and in the text, on hand-counted tables (the
statistics themselves: tests/stats/test_baselines.py and test_share.py)."""

from __future__ import annotations

import pyarrow as pa

from jurist.analysis.human import agreement_report, format_report
from jurist.stats.share import Share


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
    assert report["accuracy"] == Share(13, 20).as_dict()
    assert majority["estimate"] == report["accuracy"]["estimate"] == 0.65
    assert majority["rule"] == "always True" and majority["beaten"] == "no"
    assert list(report["baselines"]) == ["majority"]  # no pairwise baselines for a pointwise judge
    text = format_report({"t": report})
    assert "baseline majority (always True): 65.0 % [43.3, 81.9] %: NOT beaten" in text
    assert "warning: the judge does not beat majority on these rows" in text
    assert "t: accuracy 65.0 % (20 labelled, 20 decided)" in text
    assert "accuracy 95 % interval [43.3, 81.9] %" in text
    # 18 right of 20: the baseline's 65 % lies below the judge's interval
    right18 = [True] * 13 + [False] * 5 + [True] * 2
    report = agreement_report(table(right18), truth)["t"]
    assert report["accuracy"]["estimate"] == 0.9
    low = report["accuracy"]["low"]
    assert low > 0.65 and report["baselines"]["majority"]["beaten"] == "yes"
    text = format_report({"t": report})
    assert "65.0 % [43.3, 81.9] %: beaten" in text and "warning" not in text
    # 17 right of 20: above the baseline, but the baseline is inside the judge's interval [64, 95] %
    right17 = [True] * 13 + [False] * 4 + [True] * 3
    assert agreement_report(table(right17), truth)["t"]["baselines"]["majority"]["beaten"] == "unclear"


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
    assert found["longer answer"]["estimate"] == 1.0 and found["longer answer"]["beaten"] == "no"
    assert found["shorter answer"]["estimate"] == 0.0
    assert found["first shown"]["estimate"] == report["accuracy"]["estimate"] == 0.5
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
    assert (majority["successes"], majority["trials"], majority["beaten"]) == (13, 20, "no")
    text = format_audit({"t": report})
    assert "baseline majority (always True): 65.0 % [43.3, 81.9] %: NOT beaten" in text
