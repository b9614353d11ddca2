"""The OpenAI-compatible backend against a local HTTP server that speaks the chat-completions protocol.

The server is scripted (it answers from the request's content); what is tested is the real HTTP path:
the body jurist sends (constraint per engine), retries, context errors and row statuses.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from jurist import Engine, load_judge_config
from jurist.backends.remote.openai import OpenAIBackend
from jurist.errors import BackendError

JUDGE = {
    "name": "j",
    "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True},
}


class ChatServer(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]
    failures_left: int


class Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        question = body["messages"][-1]["content"]
        if "overload" in question and self.server.failures_left > 0:
            self.server.failures_left -= 1
            self._send(503, {"error": "busy"})
        elif len(question) > 500:
            self._send(400, {"error": {"message": "This model's maximum context length is 128 tokens"}})
        elif "cut" in question:
            self._send(200, _answer('{"explanation": "trunc', "length"))
        else:
            verdict = "Yes" if "good" in question else "No"
            self._send(200, _answer(json.dumps({"explanation": "checked", "judgment": verdict}), "stop"))

    def _send(self, code: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def _answer(text: str, finish: str) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 8}},
    }


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    srv = ChatServer(("127.0.0.1", 0), Handler)
    srv.bodies = []
    srv.failures_left = 1
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def config(server: ChatServer, engine: str, **judge: Any) -> Any:
    data = {
        **JUDGE,
        "judge_params": {**JUDGE["judge_params"], **judge},
        "inference_config": {
            "engine": engine,
            "model": {"model_name": "judge-model"},
            "remote_params": {"api_url": f"http://127.0.0.1:{server.server_address[1]}/v1", "num_workers": 4},
        },
    }
    return load_judge_config(data)


def test_remote_vllm_rows_statuses_and_regex_constraint(server: ChatServer) -> None:
    cfg = config(server, "REMOTE_VLLM")
    backend = OpenAIBackend(cfg.inference_config, retries=2)
    rows = [{"question": q} for q in ["good one", "bad one", "cut me", "x" * 600, "overload good"]]
    table = Engine(cfg, backend).run(rows)
    assert table["j.status"].to_pylist() == ["ok", "ok", "truncated", "too_long", "ok"]
    assert table["j.judgment"].to_pylist() == [True, False, None, None, True]
    assert table["j.prompt_tokens"][0].as_py() == 12
    body = server.bodies[0]
    assert body["model"] == "judge-model" and body["temperature"] == 0.0
    assert body["structured_outputs"] == {"regex": Engine(cfg, backend).judges[0].spec.regex()}
    assert "response_format" not in body
    assert len(server.bodies) == 6  # one retry after the 503


def test_openai_engine_sends_json_schema(server: ChatServer) -> None:
    cfg = config(server, "OPENAI")
    backend = OpenAIBackend(cfg.inference_config)
    table = Engine(cfg, backend).run([{"question": "good"}])
    assert table["j.status"].to_pylist() == ["ok"]
    schema = server.bodies[0]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["explanation", "judgment"]
    assert "structured_outputs" not in server.bodies[0]


def test_unreachable_server_is_a_row_error() -> None:
    cfg = load_judge_config(
        {
            **JUDGE,
            "inference_config": {
                "engine": "REMOTE_VLLM",
                "model": {"model_name": "m"},
                "remote_params": {"api_url": "http://127.0.0.1:9/v1", "timeout_s": 2},
            },
        }
    )
    table = Engine(cfg, OpenAIBackend(cfg.inference_config, retries=0)).run([{"question": "q"}])
    assert table["j.status"].to_pylist() == ["backend_error"]
    assert "URLError" in table["j.error"][0].as_py()


def test_missing_url_or_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_judge_config(
        {**JUDGE, "inference_config": {"engine": "REMOTE_VLLM", "model": {"model_name": "m"}}}
    )
    with pytest.raises(BackendError, match="api_url"):
        OpenAIBackend(cfg.inference_config)
    monkeypatch.delenv("JURIST_TEST_KEY", raising=False)
    cfg = load_judge_config(
        {
            **JUDGE,
            "inference_config": {
                "engine": "OPENAI",
                "model": {"model_name": "m"},
                "remote_params": {"api_key_env": "JURIST_TEST_KEY"},
            },
        }
    )
    with pytest.raises(BackendError, match="JURIST_TEST_KEY"):
        OpenAIBackend(cfg.inference_config)
