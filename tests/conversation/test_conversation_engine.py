"""Conversation judging on the real vLLM engine (CPU build) and the tiny random model: the dataset form
(every pair a constrained verdict or a documented status) and EvalJudge (a verdict, then a cache hit)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import EvalJudge, InferenceConfig, judge_conversations
from jurist.conversation.verdict import VERDICTS

pytestmark = [pytest.mark.engine, pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")]

CRITERIA = ["greets the user", "gives the correct answer", "confirms a booking time"]
CONVERSATIONS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "user", "content": "What is two plus two?"},
            {"role": "assistant", "content": "That's"},
            {"role": "assistant", "content": "for."},
        ]
    },
    {"messages": [{"role": "assistant", "content": "Hello! I can book tables for you."}]},
    {
        "messages": [
            {"role": "system", "content": "You book restaurant tables."},
            {"role": "user", "content": "A table for two tonight, please."},
            {"role": "assistant", "content": "Sure, let me check what's available."},
        ]
    },
    {"messages": [{"role": "user", "content": "Hello?"}]},  # no reply: missing_input
    {"messages": [{"role": "user"}, {"content": "no role"}]},  # malformed: bad_input
]


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> Iterator[Any]:
    from jurist.backends.vllm.backend import VLLMBackend

    made = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": str(tiny_model_dir), "model_max_length": 4096},
            }
        )
    )
    yield made
    made.close()


def test_every_conversation_and_criterion_gets_a_constrained_verdict(backend: Any) -> None:
    table = judge_conversations(CONVERSATIONS, CRITERIA, backend)
    assert table.num_rows == len(CONVERSATIONS) * len(CRITERIA)
    statuses = table["criterion.status"].to_pylist()
    assert statuses == ["ok"] * 9 + ["missing_input"] * 3 + ["bad_input"] * 3, statuses
    judged = table.slice(0, 9)
    assert set(judged["criterion.judgment"].to_pylist()) <= set(VERDICTS)
    assert all(isinstance(reason, str) for reason in judged["criterion.explanation"].to_pylist())
    pattern = re.compile(
        r'\{"explanation": "(?:[^"\\\x00-\x1f]|\\["\\/nt]){0,200}", "judgment": "(yes|no|continue)"\}'
    )
    assert all(pattern.fullmatch(raw) for raw in judged["criterion.raw"].to_pylist())


def test_eval_judge_gives_a_verdict_then_serves_it_from_the_cache(backend: Any, tmp_path: Path) -> None:
    judge = EvalJudge(backend, max_tokens=None, cache=tmp_path / "verdicts.sqlite3")
    judge.add_user_message("What is two plus two?")
    judge.add_assistant_message("That's")
    judge.add_assistant_message("for.")
    first = asyncio.run(judge.evaluate("gives the correct answer"))
    assert first.ok and first.verdict in VERDICTS
    assert first.passed == (first.verdict == "yes")
    again = asyncio.run(judge.evaluate("gives the correct answer"))
    assert again == first
    assert judge.model_calls == 1
    assert (judge.cache_stats.hits, judge.cache_stats.misses) == (1, 1)
