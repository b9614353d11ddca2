"""Reward judges through the scripted backend: the conversation scored, rewards and label probabilities,
statuses, config rules, filtering by reward."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jurist import ConfigError, Engine, ScriptedBackend, load_judge_config
from jurist.analysis.filtering import FilterRules, filter_table
from jurist.records import RewardRequest, RewardScores

REWARD = {
    "name": "rm",
    "judge_params": {"prompt_template": "{request}", "system_instruction": "Be helpful."},
    "reward_judge_params": {},
}
CLASSIFIER = {
    "name": "safety",
    "judge_params": {"prompt_template": "{request}"},
    "reward_judge_params": {"labels": ["unsafe", "safe"], "response_template": "Answer: {response}"},
}
ROWS = [{"request": f"question {i}", "response": f"answer {i}"} for i in range(4)]


def by_length(request: RewardRequest) -> list[float]:
    return [len(request.messages[-1].content) / 10]


def test_the_conversation_is_user_then_assistant_and_the_reward_is_the_score() -> None:
    backend = ScriptedBackend([], rewards=by_length)
    table = Engine(REWARD, backend).run(ROWS)
    sent = backend.reward_requests[0].messages
    assert [(m.role, m.content) for m in sent] == [
        ("system", "Be helpful."),
        ("user", "question 0"),
        ("assistant", "answer 0"),
    ]
    assert table["rm.reward"].to_pylist() == pytest.approx([0.8] * 4)
    assert table["rm.score"].to_pylist() == table["rm.reward"].to_pylist()
    assert table["rm.status"].to_pylist() == ["ok"] * 4
    assert "rm.raw" in table.column_names and "rm.judgment" not in table.column_names


def test_a_classifier_gives_probabilities_that_sum_to_one() -> None:
    backend = ScriptedBackend([], rewards=lambda r: [0.0, math.log(3.0)])  # P(safe) = 3/4
    table = Engine(CLASSIFIER, backend).run(ROWS[:2])
    assert table["safety.p.unsafe"].to_pylist() == pytest.approx([0.25, 0.25])
    assert table["safety.p.safe"].to_pylist() == pytest.approx([0.75, 0.75])
    assert table["safety.label"].to_pylist() == ["safe", "safe"]
    assert table["safety.score"].to_pylist() == pytest.approx([0.75, 0.75])  # the positive label: the last
    assert backend.reward_requests[0].messages[-1].content == "Answer: answer 0"


def test_a_model_with_other_outputs_than_labels_is_a_row_status() -> None:
    table = Engine(CLASSIFIER, ScriptedBackend([], rewards=lambda r: [0.1, 0.2, 0.3])).run(ROWS[:1])
    assert table["safety.status"].to_pylist() == ["backend_error"]
    assert "3 outputs" in table["safety.error"][0].as_py() and "names 2" in table["safety.error"][0].as_py()


def test_over_long_missing_and_errored_rows() -> None:
    def script(request: RewardRequest) -> Any:
        if "long" in request.messages[-2].content:
            return RewardScores(None, "too_long", 9999, error="the conversation has 9999 tokens")
        return [1.0]

    rows = [
        {"request": "long one", "response": "x"},
        {"request": "q"},
        {"request": "q", "response": "r", "error": "boom"},
    ]
    table = Engine(REWARD, ScriptedBackend([], rewards=script)).run(rows)
    assert table["rm.status"].to_pylist() == ["too_long", "missing_input", "target_error"]
    assert table["rm.reward"].to_pylist() == [None, None, None]


def test_a_backend_without_a_classifier_is_a_row_status() -> None:
    table = Engine(REWARD, ScriptedBackend(["{}"], cycle=True)).run(ROWS[:1])
    assert table["rm.status"].to_pylist() == ["backend_error"]
    assert "no reward script" in table["rm.error"][0].as_py() or "reward" in table["rm.error"][0].as_py()


def test_reward_config_rules() -> None:
    with pytest.raises(ConfigError, match="scoring does not apply to a reward judge"):
        load_judge_config({**REWARD, "judge_params": {"prompt_template": "{q}", "scoring": "LOGPROBS"}})
    with pytest.raises(ConfigError, match="not one of the labels"):
        load_judge_config(
            {**CLASSIFIER, "reward_judge_params": {"labels": ["a", "b"], "positive_label": "c"}}
        )
    with pytest.raises(ConfigError, match="either rubric_judge_params or reward_judge_params, not both"):
        load_judge_config({**REWARD, "rubric_judge_params": {"criteria": [{"id": "x", "description": "x"}]}})


def test_rewards_filter_like_any_score() -> None:
    table = Engine(REWARD, ScriptedBackend([], rewards=lambda r: [float(r.messages[-1].content[-1])])).run(
        ROWS
    )
    kept, report = filter_table(table, FilterRules(top_k=2, by="rm.reward"))
    assert kept["response"].to_pylist() == ["answer 2", "answer 3"]  # the two highest, in input order
    assert report.kept == 2 and report.dropped == {"not in the top 2 by rm.reward": 2}


def test_an_engine_without_reward_scores_is_refused_before_it_loads() -> None:
    """A reward judge's scoring key is not read (it stays GENERATE), so the engine table is asked about
    reward scores themselves: an HTTP engine is refused, naming the engines that score, with no model
    loaded; so is `jurist validate`'s check."""
    from jurist.engine.core import check_capabilities
    from jurist.judges.judge import Judge

    config = {**REWARD, "inference_config": {"engine": "OPENAI", "model": {"model_name": "rm"}}}
    expected = (
        "reward_judge_params: a sequence classifier's scores: it needs engine VLLM or NATIVE, not OPENAI"
    )
    with pytest.raises(ConfigError, match=expected):
        Engine(config)
    with pytest.raises(ConfigError, match="judge 'rm'"):
        check_capabilities([Judge(load_judge_config(config))])
