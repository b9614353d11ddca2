"""The OpenAI backend as Oumi's configs use it, against a local chat-completions server: the default key
and base URL variables, Oumi's full ``.../chat/completions`` URLs, hosted engines' key variables, and the
remote_params Oumi maps (retries, politeness, user id, an inline key)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fake_server import ChatServer, Handler, chat_server, completion
from jurist import Engine, load_judge_config
from jurist.backends.remote.openai import OpenAIBackend
from jurist.errors import BackendError

VERDICT = json.dumps({"explanation": "checked", "judgment": "Yes"})
JUDGE = {"name": "j", "judge_params": {"prompt_template": "{request}", "include_explanation": True}}


class Recorder(Handler):
    """The fake server's handler, also keeping each request's headers and arrival time."""

    def do_POST(self) -> None:
        self.server.seen.append((dict(self.headers), time.monotonic()))  # type: ignore[attr-defined]
        super().do_POST()


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    with chat_server(lambda body: (200, completion(VERDICT))) as srv:
        srv.RequestHandlerClass = Recorder
        srv.seen = []  # type: ignore[attr-defined]
        yield srv


def config(inference: dict[str, Any]) -> Any:
    return load_judge_config({**JUDGE, "inference_config": {"model": {"model_name": "gpt-4o"}, **inference}})


def headers(server: ChatServer) -> list[dict[str, str]]:
    return [h for h, _ in server.seen]  # type: ignore[attr-defined]


def test_openai_takes_its_key_and_url_from_openais_variables(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cfg = config({"engine": "OPENAI"})
    table = Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert table["j.status"].to_pylist() == ["ok"] and table["j.judgment"].to_pylist() == [True]
    assert headers(server)[0]["Authorization"] == "Bearer sk-test"
    assert server.bodies[0]["model"] == "gpt-4o" and "response_format" in server.bodies[0]


def test_the_configs_url_wins_over_openai_base_url(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = config({"engine": "OPENAI", "remote_params": {"api_url": server.url + "/chat/completions"}})
    table = Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert table["j.status"].to_pylist() == ["ok"]
    assert "Authorization" not in headers(server)[0]  # no key set: none sent to a server of your own


def test_openais_own_api_without_a_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIBackend(config({"engine": "OPENAI"}).inference_config)


def test_a_hosted_engine_sends_its_own_key_not_openais(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    cfg = config({"engine": "ANTHROPIC", "remote_params": {"api_url": server.url}})
    table = Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert table["j.status"].to_pylist() == ["ok"]
    assert headers(server)[0]["Authorization"] == "Bearer anthropic-key"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        OpenAIBackend(cfg.inference_config)


def test_a_server_of_your_own_gets_no_openai_key(server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    cfg = config({"engine": "REMOTE", "remote_params": {"api_url": server.url}})
    Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert "Authorization" not in headers(server)[0]


def test_an_inline_key_and_a_user_id_are_sent(server: ChatServer) -> None:
    cfg = config(
        {
            "engine": "REMOTE_VLLM",
            "remote_params": {"api_url": server.url, "api_key": "inline", "user_id": "u1"},
        }
    )
    Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert headers(server)[0]["Authorization"] == "Bearer inline"
    assert server.bodies[0]["user"] == "u1"


def test_max_retries_is_the_number_of_retries() -> None:
    calls: list[int] = []

    def busy(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        calls.append(1)
        return 503, {"error": "busy"}

    with chat_server(busy) as srv:
        remote = {"api_url": srv.url, "max_retries": 2, "retry_backoff_base": 0.01, "retry_backoff_max": 0.02}
        cfg = config({"engine": "REMOTE_VLLM", "remote_params": remote})
        table = Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert len(calls) == 3
    assert table["j.status"].to_pylist() == ["backend_error"] and "HTTP 503" in table["j.error"][0].as_py()


def test_politeness_spaces_one_workers_requests(server: ChatServer) -> None:
    remote = {"api_url": server.url, "politeness_policy": 0.2, "num_workers": 1}
    cfg = config({"engine": "REMOTE_VLLM", "remote_params": remote})
    Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": f"q{i}"} for i in range(3)])
    times = [t for _, t in server.seen]  # type: ignore[attr-defined]
    assert len(times) == 3
    assert all(later - earlier >= 0.19 for earlier, later in itertools.pairwise(times))  # a lower bound only


def test_too_many_output_tokens_is_not_a_long_prompt() -> None:
    message = {
        "error": {
            "message": "max_tokens=8192 cannot be greater than max_model_len=4096. Please request fewer "
            "output tokens. (parameter=max_tokens, value=8192)",
            "code": 400,
        }
    }
    with chat_server(lambda body: (400, message)) as srv:
        cfg = config({"engine": "OPENAI", "remote_params": {"api_url": srv.url}})
        table = Engine(cfg, OpenAIBackend(cfg.inference_config)).run([{"request": "q"}])
    assert table["j.status"].to_pylist() == ["backend_error"]
    assert "max_new_tokens" in table["j.error"][0].as_py()
