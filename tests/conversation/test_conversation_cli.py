"""``jurist judge dataset --criteria`` as a user runs it: a real subprocess against a local
OpenAI-compatible server (no model needed), conversations x criteria into one Parquet row per pair."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from helpers import answer

from fake_server import ChatServer, chat_server, completion

CONVERSATIONS = [
    {"id": "greeting", "messages": [{"role": "assistant", "content": "Hello! How can I help?"}]},
    {
        "id": "maths",
        "messages": [
            {"role": "user", "content": "What is two plus two?"},
            {"role": "assistant", "content": "Let me think."},
        ],
    },
    {"id": "broken", "messages": "not a conversation"},
]


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body["messages"][-1]["content"]
        if "Let me think." in prompt:
            return 200, completion(answer("continue", "Filler; the answer has not come yet."))
        return 200, completion(answer("yes" if "greets" in prompt else "no", "Judged."))

    with chat_server(reply) as srv:
        yield srv


def jurist(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=180
    )


def test_conversations_times_criteria_from_the_command_line(server: ChatServer, tmp_path: Path) -> None:
    data = tmp_path / "convs.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in CONVERSATIONS))
    criteria = tmp_path / "criteria.txt"
    criteria.write_text("greets the user\nanswers the question\n")
    out = tmp_path / "out.parquet"
    done = jurist(
        "judge", "dataset", "-c", "conversation/criterion", "-i", str(data), "--criteria", str(criteria),
        "-o", str(out), "--engine", "REMOTE_VLLM", "--model", "fake", "--quiet",
        "--inference_config.remote_params.api_url", server.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out)
    assert table["row_id"].to_pylist() == [
        "greeting:0", "greeting:1", "maths:0", "maths:1", "broken:0", "broken:1"
    ]  # fmt: skip
    assert table["criterion.judgment"].to_pylist() == ["yes", "no", "continue", "continue", None, None]
    assert table["criterion.status"].to_pylist() == ["ok"] * 4 + ["bad_input"] * 2
    assert table["criterion.error"].to_pylist()[4] == (
        "conversation 2 (id 'broken'): field 'messages' is text, not a list of messages"
    )
    assert len(server.bodies) == 4
    assert done.stdout.startswith(f"6 rows -> {out}")
    assert "criterion [fake]: ok 4, bad_input 2" in done.stdout


def test_a_dataset_without_conversations_stops_before_anything_is_judged(
    server: ChatServer, tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"request": "hi", "response": "hello"}) + "\n")
    criteria = tmp_path / "criteria.txt"
    criteria.write_text("greets the user\n")
    done = jurist(
        "judge", "dataset", "-c", "conversation/criterion", "-i", str(data), "--criteria", str(criteria),
        "-o", str(tmp_path / "out.parquet"), "--engine", "REMOTE_VLLM", "--model", "fake",
        "--inference_config.remote_params.api_url", server.url,
    )  # fmt: skip
    assert done.returncode == 2
    assert "has no 'messages' (or 'conversation') column" in done.stderr
    assert server.bodies == []
