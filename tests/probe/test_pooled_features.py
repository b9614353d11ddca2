"""Pooled probe features (``jurist probe fit --pool``): the span of a response's tokens in its prompt
against the tokenizer's own character offsets, the pooled vector against NumPy, the engine-side routing of
pooled and last-token requests (a scripted engine's states: logic, not numerics), the head file's format 3,
a PROBE judge's requests carrying the row's field, and the refusals a user meets. The same route on the real
vLLM engine and on transformers is in test_probe_engine.py (slow tier)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from installed import have
from jurist.backends.local.states import hidden_states, pool, text_span
from jurist.config.loading import load_judge_config
from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource
from jurist.models.probe_head import FORMAT_POOLED, ProbeHead, ProbeModel, load_head
from jurist.probe.examples import examples, preference_examples
from jurist.probe.features import Feature
from jurist.probe.job import ProbeFit, fit_probe
from jurist.records import Message, StateRequest

GOOD = {
    "name": "good",
    "judge_params": {
        "prompt_template": "Request: {request}\nResponse: {response}\nIs the response good?",
        "judgment_type": "BOOL",
    },
}


def test_the_span_is_the_tokens_whose_characters_hold_the_text(tiny_model_dir: Path) -> None:
    """Against the tokenizer's character offsets: the tokens that overlap the text's characters."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    for response in ["good fast exact", "  kind and clear.\n", "über naïve — 42", "x"]:
        messages = [{"role": "user", "content": f"Request: say it\nResponse: {response}\nIs it good?"}]
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        span = text_span(prompt, response, encode)
        assert not isinstance(span, str)
        offsets = tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        begin = prompt.rfind(response.strip())
        end = begin + len(response.strip())
        overlapping = [i for i, (a, b) in enumerate(offsets) if a < end and b > begin]
        assert span == (overlapping[0], overlapping[-1] + 1), response
        assert encode(prompt) == tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert "not in the prompt" in str(text_span("Response: yes", "no", encode))
    assert "not in the prompt" in str(text_span("Response: yes", "   ", encode))


def test_pooling_is_the_last_state_the_span_mean_or_both() -> None:
    states = np.random.default_rng(0).normal(size=(9, 4)).astype(np.float32)
    np.testing.assert_array_equal(pool(states, (2, 5), "last"), states[8])
    np.testing.assert_allclose(
        pool(states, (2, 5), "mean"), (states[2] + states[3] + states[4]) / 3, rtol=1e-6
    )
    both = pool(states, (2, 5), "last_mean")
    assert both.shape == (8,) and both.dtype == np.float32
    np.testing.assert_array_equal(both[:4], states[8])
    np.testing.assert_allclose(both[4:], states[2:5].mean(axis=0), rtol=1e-6)


def engine_parts(cached: int = 0) -> tuple[Any, Any, list[str]]:
    """A scripted engine: prompts are their characters' code points; a token's state is (its code, its
    position); unless asked for the whole prompt, it leaves out the states of its first ``cached`` tokens, as
    vLLM does for a prefix it found in its cache. ``called`` records which of its passes ran."""
    called: list[str] = []

    def last(prompts: list[list[int]], layer: int) -> np.ndarray:
        called.append("last")
        return np.asarray([[p[-1], len(p) - 1] for p in prompts], dtype=np.float32)

    def tokens(prompts: list[list[int]], layer: int, whole: bool) -> list[np.ndarray]:
        called.append("whole" if whole else "tokens")
        skip = 0 if whole else cached
        return [np.asarray([[c, i] for i, c in enumerate(p)][skip:], dtype=np.float32) for p in prompts]

    return last, tokens, called


def chat(messages: Any, prefix: str) -> str:
    return "".join(m.content for m in messages) + prefix


def codes(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_pooled_requests_read_every_token_and_last_ones_the_last_pass() -> None:
    last, tokens, called = engine_parts()
    prompt = (Message("user", "Response: abc!"),)
    requests = [
        StateRequest(prompt, 1),
        StateRequest(prompt, 1, "", "mean", "abc"),
        StateRequest(prompt, 1, "", "last_mean", "abc"),
        StateRequest(prompt, 1, "", "mean", "xyz"),
    ]
    answers = hidden_states(requests, chat, codes, 100, last, token_states=tokens)
    assert sorted(called) == ["last", "tokens"]  # one pass each, the two pooled prompts together
    np.testing.assert_array_equal(answers[0].values, [ord("!"), 13])
    abc = [(ord("a") + ord("b") + ord("c")) / 3, (10 + 11 + 12) / 3]
    np.testing.assert_allclose(answers[1].values, abc)
    np.testing.assert_allclose(answers[2].values, [ord("!"), 13, *abc])
    assert answers[3].values is None and answers[3].finish_reason == "error"
    assert "not in the prompt" in str(answers[3].error)
    without = hidden_states(requests[1:2], chat, codes, 100, last)
    assert without[0].values is None and "last tokens' states only" in str(without[0].error)
    too_long = hidden_states(requests[1:2], chat, codes, 5, last, token_states=tokens)
    assert too_long[0].finish_reason == "too_long"


def test_a_cached_prefix_is_left_out_and_a_span_inside_it_is_read_again_whole() -> None:
    """The engine leaves out the states of a cached prefix of 10 tokens: a response after it is pooled from
    what it gave, one that begins inside it is read again whole; the values are the whole prompt's."""
    last, tokens, called = engine_parts(cached=10)
    requests = [
        StateRequest((Message("user", "Response: abc!"),), 1, "", "last_mean", "abc"),  # starts at token 10
        StateRequest((Message("user", "Resp: abcdef!"),), 1, "", "mean", "abcdef"),  # starts at token 6
    ]
    answers = hidden_states(requests, chat, codes, 100, last, token_states=tokens)
    assert called == ["tokens", "whole"]
    abc = [(ord("a") + ord("b") + ord("c")) / 3, 11.0]
    np.testing.assert_allclose(answers[0].values, [ord("!"), 13, *abc])
    np.testing.assert_allclose(answers[1].values, [sum(map(ord, "abcdef")) / 6, 8.5])
    with pytest.raises(ValueError, match="tokens 6 to 10 of the span are not among the states given"):
        pool(np.zeros((3, 2)), (6, 12), "mean", length=13)


def pooled_head(judge: Judge, size: int = 3, **changes: Any) -> ProbeHead:
    labels = judge.parts.label_texts
    values: dict[str, Any] = {
        "model": ProbeModel(name="m", weights="w", num_layers=4, hidden_size=size),
        "layer": 2,
        "pooling": "last_mean",
        "pooled_field": "response",
        "format": FORMAT_POOLED,
        "judge": judge.name,
        "prompt_fingerprint": judge.prompt_hash,
        "answer_fingerprint": judge.schema_hash,
        "labels": labels,
        "mean": (0.0,) * 2 * size,
        "scale": (1.0,) * 2 * size,
        "coef": tuple((0.1 * (k + 1),) * 2 * size for k in range(len(labels))),
        "intercept": (0.0,) * len(labels),
    }
    values.update(changes)
    return ProbeHead(**values)


def test_a_pooled_head_is_format_3_twice_as_wide_and_a_probe_judge_asks_for_its_field(
    tmp_path: Path,
) -> None:
    judge = Judge(load_judge_config(GOOD, {"judge_params.scoring": "LOGPROBS"}))
    path = pooled_head(judge).save(tmp_path / "pooled.json")
    assert json.loads(path.read_text())["format"] == "jurist-probe-head/3"
    assert load_head(path).feature_size == 6
    with pytest.raises(ValueError, match="on a last_mean-pooled feature is 'jurist-probe-head/3'"):
        pooled_head(judge, format="jurist-probe-head/1")
    with pytest.raises(ValueError, match=r"mean and scale need 6 values"):
        pooled_head(judge, mean=(0.0,) * 3)
    with pytest.raises(ValueError, match="pooled_field names the field"):
        pooled_head(judge, pooled_field=None)
    probe = Judge(load_judge_config(GOOD, {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)}))
    (request,) = probe.start({"request": "say hi", "response": "  hello there "}).requests
    assert isinstance(request, StateRequest)
    assert (request.layer, request.pooling, request.text) == (2, "last_mean", "  hello there ")
    assert "the last token and the mean over response's tokens" in probe.scoring.describe()


def test_a_pooled_reward_head_reads_each_response_of_its_pair_in_its_own_prompt(tmp_path: Path) -> None:
    config, _ = labelled(tmp_path, GOOD)
    judge = Judge(load_judge_config(str(config), {"judge_params.scoring": "LOGPROBS"}))
    rows = [
        {"request": "q1", "response": "first answer", "pair": "p", "y": "true"},
        {"request": "q2", "response": "lone", "pair": "solo", "y": "true"},
        {"request": "q1", "response": "second answer", "pair": "p", "y": "false"},
        {"request": "q3", "response": "worse", "pair": "r", "y": "no"},
        {"request": "q3", "response": "better", "pair": "r", "y": "yes"},
    ]
    found = preference_examples(judge, rows, [r["pair"] for r in rows], [r["y"] for r in rows])
    assert found.members == [(0, 2), (3, 4)] and found.truth.tolist() == [0, 1]
    assert found.skipped["not a pair"] == 1
    feature = Feature.of("last_mean", None, judge, rows)
    requests = feature.requests(found, 3)
    assert [r.text for r in requests] == ["first answer", "second answer", "worse", "better"]
    for request in requests:  # each prompt holds the text its feature averages
        assert request.text in request.messages[-1].content and request.pooling == "last_mean"
    later = feature.requests(found.subset([1]), 3)
    assert [r.text for r in later] == ["worse", "better"]
    # a pointwise judge's examples: every prompt from the example's own row
    plain = examples(judge, rows, ["Yes"] * len(rows))
    assert [r.text for r in feature.requests(plain, 3)] == [r["response"] for r in rows]


def labelled(tmp_path: Path, config: dict[str, Any]) -> tuple[Path, Path]:
    path = tmp_path / "good.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    rows = [{"id": str(i), "request": "q", "response": f"r{i}", "y": "Yes"} for i in range(6)]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, source


@pytest.mark.skipif(not have("sklearn"), reason="scikit-learn not installed")
def test_the_refusals_of_a_pooled_fit_name_what_is_wrong(tmp_path: Path) -> None:
    config, source = labelled(tmp_path, GOOD)
    job = ProbeFit(
        config=str(config),
        input=source,
        output=tmp_path / "head.json",
        labels=LabelSource(column="y"),
        pooling="mean",
        pooled_field="answer",
    )
    with pytest.raises(
        InputError, match=r"averages one of the judge's template fields \(request, response\)"
    ):
        fit_probe(job)
    pairwise = {
        "name": "pref",
        "judge_params": {"prompt_template": "{question}\nA: {response_a}\nB: {response_b}"},
        "pairwise_judge_params": {"allow_tie": False},
    }
    config, source = labelled(tmp_path, pairwise)
    rows = [{"id": str(i), "question": "q", "response_a": "a", "response_b": "b", "y": "a"} for i in range(6)]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    changed = {"config": str(config), "input": source, "pooled_field": "response_a"}
    with pytest.raises(InputError, match=r"it fits a pointwise judge, and 'pref' is a pairwise judge"):
        fit_probe(ProbeFit(**{**job.__dict__, **changed}))
    assert not (tmp_path / "head.json").exists()
