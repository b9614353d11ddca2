"""A pairwise stage's confidence follows its decision rule: deciding by probability, a row whose two orders
disagree keeps the winner's order-averaged probability; needing both orders, it counts 0."""

from __future__ import annotations

import pytest

from jurist.cascade.confidence import confidence_of, confidence_source
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput

PAIR = {
    "name": "p",
    "judge_params": {"prompt_template": "{question} 1: {response_a} 2: {response_b}", "scoring": "LOGPROBS"},
    "pairwise_judge_params": {},
}


def output(winner: str, consistent: bool, p_a: float) -> JudgeOutput:
    values = {"winner": winner, "position_consistent": consistent}
    return JudgeOutput("ok", values, {}, None, p_a, extras={"p_a": p_a})


def test_by_probability_an_inconsistent_row_keeps_its_confidence() -> None:
    judge = Judge.from_config(PAIR)
    assert judge.kind.decision == "probability"  # type: ignore[attr-defined]
    assert confidence_of(judge, output("a", False, 0.7)) == pytest.approx(0.7)
    assert confidence_of(judge, output("b", False, 0.2)) == pytest.approx(0.8)
    assert confidence_of(judge, output("tie", False, 0.5)) == 0.0
    assert "inconsistent" not in confidence_source(judge).description


def test_needing_both_orders_an_inconsistent_row_counts_0() -> None:
    both = {**PAIR, "pairwise_judge_params": {"decision": "both_orders"}}
    judge = Judge.from_config(both)
    assert confidence_of(judge, output("a", True, 0.7)) == pytest.approx(0.7)
    assert confidence_of(judge, output("tie", False, 0.7)) == 0.0
    assert "inconsistent orders: 0" in confidence_source(judge).description
