"""Repeated samples of a pairwise judge: each order generated N times, its vote shares as probabilities,
the winner by the order-averaged share (or by both orders' majorities), and the columns."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend
from jurist.records import Completion, GenerationRequest

PAIRWISE_SAMPLED: dict[str, Any] = {
    "name": "p",
    "judge_params": {
        "prompt_template": "[{question}] 1: <{response_a}> 2: <{response_b}>",
        "samples": 4,
        "include_explanation": True,
    },
    "pairwise_judge_params": {},
    "inference_config": {"generation": {"temperature": 0.7}},
}

# per row, per order (ab: A shown first), the four samples' labels in sample order (x: unparseable)
VOTES = {
    "q0": {"ab": ["A", "A", "A", "B"], "ba": ["A", "A", "B", "x"]},  # each order's majority: shown first
    "q1": {"ab": ["B", "B", "B", "B"], "ba": ["A", "A", "A", "A"]},  # B every time: consistent
    "q2": {"ab": ["x", "x", "x", "x"], "ba": ["A", "B", "A", "B"]},  # order ab unusable: inconclusive
    "q3": {"ab": ["A", "B", "A", "B"], "ba": ["A", "B", "B", "A"]},  # p_a = p_b: a tie
}


class ByOrderAndSample:
    """Answers a row's requests from :data:`VOTES`: the order from which response is shown first."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], int] = defaultdict(int)

    def __call__(self, request: GenerationRequest) -> Completion:
        text = request.messages[-1].content
        question = text[1:3]
        order = "ab" if "1: <x-" in text else "ba"
        k = self.seen[question, order]
        self.seen[question, order] += 1
        label = VOTES[question][order][k]
        answer = "nope" if label == "x" else json.dumps({"explanation": f"{order}{k}", "judgment": label})
        return Completion(answer, "stop", prompt_tokens=10, completion_tokens=5)


def shares(labels: list[str], n: int = 4) -> dict[str, float]:
    return {label: labels.count(label) / n for label in ("A", "B")}


def rows() -> list[dict[str, str]]:
    return [{"question": q, "response_a": f"x-{q}", "response_b": f"y-{q}"} for q in VOTES]


def test_each_order_votes_and_the_shares_decide() -> None:
    table = Engine(PAIRWISE_SAMPLED, ScriptedBackend(ByOrderAndSample())).run(rows())
    out = {r["question"]: r for r in table.to_pylist()}
    for question, votes in VOTES.items():
        row = out[question]
        if question == "q2":
            assert row["p.status"] == "parse_error" and row["p.winner"] == "inconclusive"
            assert "order ab: none of 4 samples was usable" in row["p.error"]
            continue
        ab, ba = shares(votes["ab"]), shares(votes["ba"])
        p_a = (ab["A"] + ba["B"]) / 2  # A is shown first in ab (label A), second in ba (label B)
        p_b = (ab["B"] + ba["A"]) / 2
        assert row["p.p_a"] == pytest.approx(p_a) and row["p.score"] == pytest.approx(p_a)
        assert row["p.ab_p_first"] == pytest.approx(ab["A"]) and row["p.ba_p_first"] == pytest.approx(ba["A"])
        expected = "tie" if p_a == p_b else "a" if p_a > p_b else "b"
        assert row["p.winner"] == expected
        # the winner's averaged share (no sample can say tie here: the judge allows none)
        assert row["p.sample_agreement"] == pytest.approx({"a": p_a, "b": p_b, "tie": 0.0}[expected])
        usable = sum(v != "x" for v in votes["ab"] + votes["ba"])
        assert row["p.samples_ok"] == usable
        assert row["p.completion_tokens"] == 8 * 5  # both orders' four samples
    # q0: each order's majority is its first-shown response (A, then B): not consistent, but by the shares
    # p_a = (3/4 + 1/4) / 2 = 0.5 beats p_b = (1/4 + 2/4) / 2 = 0.375: A wins by probability
    assert out["q0"]["p.position_consistent"] is False and out["q0"]["p.winner"] == "a"
    assert out["q0"]["p.ab_judgment"] == "A" and out["q0"]["p.ab_explanation"] == "ab0"
    assert out["q1"]["p.position_consistent"] is True and out["q1"]["p.winner"] == "b"


def test_both_orders_rule_on_the_majorities() -> None:
    config = {**PAIRWISE_SAMPLED, "pairwise_judge_params": {"decision": "both_orders"}}
    table = Engine(config, ScriptedBackend(ByOrderAndSample())).run(rows())
    out = {r["question"]: r["p.winner"] for r in table.to_pylist()}
    assert out == {"q0": "tie", "q1": "b", "q2": "inconclusive", "q3": "tie"}


def test_each_sample_of_each_order_is_a_request_with_its_own_seed() -> None:
    backend = ScriptedBackend(ByOrderAndSample())
    Engine(PAIRWISE_SAMPLED, backend).run(rows()[:1])
    seeds = [r.seed for r in backend.requests]
    assert len(seeds) == 8 and len(set(seeds)) == 8 and None not in seeds
