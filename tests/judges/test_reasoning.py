"""Judges that think first (``judge_params.reasoning``), on the scripted backend: what each round sends,
a model that ends its reasoning early, one that never writes the end marker, a reasoning the budget cuts,
a reasoning that fails, LOGPROBS after the reasoning, a pairwise judge's two orders, and the refusals."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.records import Completion, GenerationRequest, LabelRequest


def judge(**extra: Any) -> dict[str, Any]:
    params = {"prompt_template": "Is it true? {text}", "reasoning": {"budget_tokens": 32}, **extra}
    return {"name": "j", "judge_params": params}


def thinking_script(thought: Completion | str, answer: str = '{"judgment": "Yes"}') -> Any:
    """A model that writes ``thought`` when asked to reason (no constraint, the think marker opened) and
    ``answer`` after it."""

    def script(request: GenerationRequest) -> Completion | str:
        if request.constraint is None and request.prefix == "<think>":
            return thought
        return answer

    return script


def test_the_two_rounds_send_the_reasoning_then_the_answer_after_it() -> None:
    backend = ScriptedBackend(thinking_script("First, the claim.</think> anything after"))
    table = Engine(judge(), backend).run([{"text": "the sky is blue"}])
    first, second = backend.requests
    assert first.max_tokens == 32 and first.stop == ("</think>",) and first.constraint is None
    assert first.prefix == "<think>"
    assert second.messages == first.messages and second.constraint is not None
    assert second.prefix == "<think>First, the claim.</think>\n"
    row = table.to_pylist()[0]
    assert row["j.status"] == "ok" and row["j.judgment"] is True
    assert row["j.reasoning"] == "First, the claim."
    assert row["j.reasoning_cut"] == 0
    assert row["j.reasoning_tokens"] == len("First, the claim.</think> anything after")


def test_a_model_that_never_writes_the_end_marker_still_gets_a_verdict() -> None:
    backend = ScriptedBackend(thinking_script(Completion("I am done", "stop", 5, 3)))
    row = Engine(judge(), backend).run([{"text": "x"}]).to_pylist()[0]
    assert backend.requests[1].prefix == "<think>I am done</think>\n"
    assert (row["j.status"], row["j.judgment"], row["j.reasoning_cut"]) == ("ok", True, 0)
    assert row["j.completion_tokens"] == 3 + len('{"judgment": "Yes"}')
    assert row["j.prompt_tokens"] == 5


def test_a_reasoning_the_budget_cut_is_ended_counted_and_still_answered() -> None:
    backend = ScriptedBackend(thinking_script(Completion("on and on", "length", 5, 32), '{"judgment": "No"}'))
    rows = Engine(judge(), backend).run([{"text": "x"}, {"text": "y"}]).to_pylist()
    assert [r["j.reasoning_cut"] for r in rows] == [1, 1]
    assert [r["j.judgment"] for r in rows] == [False, False]
    assert [r["j.reasoning_tokens"] for r in rows] == [32, 32]
    assert backend.requests[-1].prefix == "<think>on and on</think>\n"


def test_a_failed_reasoning_fails_its_row_and_asks_for_no_answer_without_it() -> None:
    backend = ScriptedBackend(thinking_script(Completion("", "too_long", 900, error="prompt too long")))
    row = Engine(judge(), backend).run([{"text": "x"}]).to_pylist()[0]
    assert row["j.status"] == "too_long" and "the reasoning failed" in row["j.error"]
    assert len(backend.requests) == 1


def test_keep_length_writes_no_text() -> None:
    backend = ScriptedBackend(thinking_script("secret"))
    config = judge(reasoning={"budget_tokens": 8, "keep": "length"})
    table = Engine(config, backend).run([{"text": "x"}])
    assert "j.reasoning" not in table.column_names
    assert table["j.reasoning_tokens"].to_pylist() == [6]


def test_logprobs_reads_the_labels_after_the_reasoning() -> None:
    seen: list[LabelRequest] = []

    def labels(request: LabelRequest) -> dict[str, float]:
        seen.append(request)
        return {label: math.log(0.8 if "Yes" in label else 0.2) for label in request.labels}

    backend = ScriptedBackend(thinking_script("hmm"), labels=labels)
    row = Engine(judge(scoring="LOGPROBS"), backend).run([{"text": "x"}]).to_pylist()[0]
    assert row["j.status"] == "ok" and row["j.score"] == pytest.approx(0.8)
    assert seen[0].answer_prefix.startswith("<think>hmm</think>\n")
    assert backend.requests[0].prefix == "<think>" and backend.requests[0].temperature == 0.0


def test_a_pairwise_judge_s_orders_think_independently() -> None:
    config = {
        "name": "p",
        "judge_params": {
            "prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}",
            "reasoning": {"budget_tokens": 16, "start": "<reason>", "end": "</reason>"},
        },
        "pairwise_judge_params": {},
    }

    def script(request: GenerationRequest) -> Completion | str:
        first = request.messages[-1].content.split("FIRST: ", 1)[1][:2]
        if request.constraint is None:
            assert request.prefix == "<reason>" and request.stop == ("</reason>",)
            return Completion(f"{first} looks better", "length" if first == "rb" else "stop", 4, 16)
        assert request.prefix == f"<reason>{first} looks better</reason>\n"
        return '{"judgment": "A"}'

    backend = ScriptedBackend(script)
    row = (
        Engine(config, backend)
        .run([{"question": "q", "response_a": "ra", "response_b": "rb"}])
        .to_pylist()[0]
    )
    assert row["p.reasoning"] == ["ra looks better", "rb looks better"]
    assert row["p.reasoning_cut"] == 1 and row["p.reasoning_tokens"] == 32
    assert row["p.status"] == "ok"


def test_validate_shows_both_phases_and_bad_configs_are_refused() -> None:
    described = "\n".join(Judge.from_config(judge()).kind.describe())
    assert "phase 1, reasoning" in described and "up to 32 tokens" in described
    with pytest.raises(ConfigError, match="not to a reward judge"):
        Judge.from_config(
            {
                "judge_params": {"prompt_template": "{x}", "reasoning": {"budget_tokens": 4}},
                "reward_judge_params": {},
            }
        )
    with pytest.raises(ConfigError, match="not OPENAI"):
        Judge.from_config({**judge(), "inference_config": {"engine": "OPENAI", "model": {"model_name": "m"}}})
    with pytest.raises(ConfigError, match="budget_tokens"):
        Judge.from_config(judge(reasoning={"budget_tokens": 0}))
    with pytest.raises(ConfigError, match="end"):
        Judge.from_config(judge(reasoning={"budget_tokens": 4, "end": " "}))


def test_each_sample_thinks_with_its_own_seed_and_a_rubric_thinks_once() -> None:
    sampled = {
        **judge(samples=3),
        "inference_config": {"generation": {"temperature": 0.7}},
    }
    backend = ScriptedBackend(thinking_script("maybe"))
    row = Engine(sampled, backend).run([{"text": "x"}]).to_pylist()[0]
    thinking = [r for r in backend.requests if r.constraint is None]
    assert len(thinking) == 3 and len({r.seed for r in thinking}) == 3
    assert row["j.reasoning"] == ["maybe"] * 3 and row["j.sample_agreement"] == 1.0
    rubric = {
        "name": "r",
        "judge_params": {"prompt_template": "{text}", "reasoning": {"budget_tokens": 8}},
        "rubric_judge_params": {
            "criteria": [
                {"id": "clear", "description": "Is it clear?", "judgment_type": "BOOL"},
                {"id": "true", "description": "Is it true?", "judgment_type": "BOOL"},
            ]
        },
    }
    answer = '{"clear_explanation": "x", "clear": "Yes", "true_explanation": "y", "true": "No"}'
    backend = ScriptedBackend(thinking_script("both", answer))
    row = Engine(rubric, backend).run([{"text": "x"}]).to_pylist()[0]
    assert len(backend.requests) == 2 and row["r.reasoning"] == "both"
    assert (row["r.clear"], row["r.true"]) == (True, False)


def test_a_run_stopped_between_chunks_resumes_with_both_phases(tmp_path: Any) -> None:
    """A thinking run that fails after two of its chunks resumes: the rerun sends both rounds for the
    remaining rows only, and the result equals an uninterrupted run's."""
    import json

    import pyarrow.parquet as pq

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"text": f"claim {i}"}) + "\n" for i in range(50)))
    config = judge()

    def script(fail_after: int | None) -> Any:
        seen = {"count": 0}

        def answer(request: GenerationRequest) -> Completion | str:
            if request.constraint is None:
                seen["count"] += 1
                if fail_after is not None and seen["count"] > fail_after:
                    raise KeyboardInterrupt  # the run stops here, as on Ctrl-C
                claim = request.messages[-1].content
                return Completion(f"about {claim}", "length" if claim.endswith("7") else "stop", 5, 9)
            return '{"judgment": "Yes"}' if "1" in request.prefix else '{"judgment": "No"}'

        return answer

    whole = tmp_path / "whole.parquet"
    Engine(config, ScriptedBackend(script(None)), chunk_size=10).run_file(rows, whole)
    out = tmp_path / "resumed.parquet"
    with pytest.raises(KeyboardInterrupt):
        Engine(config, ScriptedBackend(script(20)), chunk_size=10).run_file(rows, out)
    assert not out.exists()
    again = ScriptedBackend(script(None))
    summary = Engine(config, again, chunk_size=10).run_file(rows, out)
    assert summary.resumed_from == 20
    thinking = [r for r in again.requests if r.constraint is None]
    assert len(thinking) == 30 and len(again.requests) == 60
    columns = ["row_id", "j.judgment", "j.reasoning", "j.reasoning_cut", "j.reasoning_tokens", "j.status"]
    assert pq.read_table(out, columns=columns).equals(pq.read_table(whole, columns=columns))
    assert sum(pq.read_table(out)["j.reasoning_cut"].to_pylist()) == 5
