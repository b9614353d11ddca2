"""scikit-plots' seed page: ``LLMJudge(llm)`` takes "an LLM from make_llm, or fn(prompt, system) -> str, which
is wrapped by make_llm"; ``jurist.make_llm`` wraps a model name, a config, a backend or such a function."""

from __future__ import annotations

import math

import pytest

from jurist import LLM, BackendError, Completion, InferenceConfig, LLMJudge, ScriptedBackend, make_llm


def rate(prompt: str, system: str) -> str:
    return '{"score": 4, "reason": "direct"}'


def test_the_seed_example_through_make_llm() -> None:
    llm = make_llm(rate, model_id="my-rater")
    judge = LLMJudge(llm)
    result = judge.answer_relevance("Capital of France?", "Paris.")
    assert result.score == 0.75
    assert judge.identity()["model"] == "my-rater" == llm.identity()["model"]
    judge.close()
    assert LLMJudge(rate).answer_relevance("Capital of France?", "Paris.").score == 0.75  # wrapped for you


def test_an_llm_is_called_as_fn_prompt_system() -> None:
    seen: list[tuple[str, str]] = []

    def echo(prompt: str, system: str) -> str:
        seen.append((prompt, system))
        return f"{system}|{prompt}"

    llm = make_llm(echo)
    assert llm("Hello?", "Be brief.") == "Be brief.|Hello?"
    assert llm("Hi") == "|Hi"
    assert seen == [("Hello?", "Be brief."), ("Hi", "")]
    assert llm.model_id.startswith("callable:")


def test_a_backend_is_used_as_it_is_and_left_open() -> None:
    backend = ScriptedBackend(['{"score": 5, "reason": "r"}', Completion("cut", "length")])
    llm = make_llm(backend)
    assert make_llm(llm) is llm and llm.backend is backend and not llm.owned
    judge = LLMJudge(llm, on_error="record")
    assert judge.answer_relevance("q", "a").score == 1.0
    failed = judge.answer_relevance("q", "a")
    assert math.isnan(failed.score) and failed.error
    judge.close()
    assert not backend.closed


def test_a_model_name_or_config_loads_nothing_until_called() -> None:
    named = make_llm("my-org/judge-7b")
    assert named.owned and named.config is not None and named.config.model.model_name == "my-org/judge-7b"
    config = InferenceConfig.model_validate({"engine": "OPENAI", "model": {"model_name": "gpt-x"}})
    assert make_llm(config).config is config
    assert make_llm({"engine": "OPENAI", "model": {"model_name": "gpt-x"}}).config == config
    judge = LLMJudge(named)
    assert judge.judge_for("answer_relevance").config.inference_config.model.model_name == "my-org/judge-7b"


def test_a_failed_call_raises_and_a_non_model_is_refused() -> None:
    llm = make_llm(ScriptedBackend([Completion("", "error", error="boom")]))
    with pytest.raises(BackendError, match="boom"):
        llm("q")
    with pytest.raises(TypeError, match="make_llm takes"):
        make_llm(42)
    assert isinstance(make_llm(rate), LLM)
