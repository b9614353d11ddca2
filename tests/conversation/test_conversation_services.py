"""EvalJudge.from_config: pipecat's service/model/endpoint/factory block, services over real HTTP (a local
OpenAI-compatible server), and a factory module imported only when the block names it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import answer

from fake_server import ChatServer, chat_server, completion
from jurist import BackendError, EvalJudge
from jurist.engine.lazy import LazyBackend
from jurist.models.default_model import DEFAULT_MODEL_LABEL

FACTORY_MODULE = """\
from jurist import ScriptedBackend

SEEN = []


def make_judge_llm(config):
    SEEN.append(dict(config))
    answer = '{"explanation": "from the factory", "judgment": "yes"}'
    return ScriptedBackend([answer], model_id="factory-model")


def make_config(config):
    return {"model": {"model_name": config["model"]}, "engine": "REMOTE_VLLM",
            "remote_params": {"api_url": "http://127.0.0.1:9/v1"}}


def not_a_backend(config):
    return 42
"""


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, completion(answer("yes", "served"))

    with chat_server(reply) as srv:
        yield srv


@pytest.fixture()
def factory_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"judge_factories_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(FACTORY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def judged(judge: EvalJudge) -> Any:
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    return asyncio.run(judge.evaluate("describes the bot's capabilities"))


def test_the_defaults_are_ollama_and_gemma2_and_nothing_connects() -> None:
    for block in (None, {}):
        judge = EvalJudge.from_config(block, cache=None)
        assert judge.identity["model"] == "gemma2:9b"
        assert judge.identity["engine"] == "OPENAI"
        assert judge.identity["url"] == "http://localhost:11434/v1"
        assert judge.max_tokens == 200
        assert isinstance(judge._backend, LazyBackend) and judge._backend.loaded is None


def test_ollama_is_reached_over_its_openai_compatible_api(server: ChatServer) -> None:
    judge = EvalJudge.from_config({"service": "ollama", "endpoint": server.url}, cache=None)
    verdict = judged(judge)
    assert (verdict.verdict, verdict.reason, verdict.passed) == ("yes", "served", True)
    body = server.bodies[-1]
    assert body["model"] == "gemma2:9b"
    assert body["max_tokens"] == 200
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["judgment"]["enum"] == ["yes", "no", "continue"]
    assert "What can you help me with?" in body["messages"][-1]["content"]


def test_a_vllm_server_gets_the_regex(server: ChatServer) -> None:
    judge = EvalJudge.from_config(
        {"service": "VLLM-Server", "endpoint": server.url, "model": "qwen", "max_tokens": 120}, cache=None
    )
    assert judged(judge).passed
    body = server.bodies[-1]
    assert (body["model"], body["max_tokens"]) == ("qwen", 120)
    assert '"continue"|"yes"|"no"' in str(body)


def test_a_hosted_service_reads_its_key_from_its_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    judge = EvalJudge.from_config({"service": "openai", "model": "gpt-4o-mini"}, cache=None)
    assert judge.identity["url"] == "https://api.openai.com/v1"
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        judged(judge)


def test_local_services_run_a_model_in_this_process_lazily() -> None:
    judge = EvalJudge.from_config({"service": "vllm"}, cache=None)
    assert judge.identity["engine"] == "VLLM" and judge.identity["model"] == DEFAULT_MODEL_LABEL
    named = EvalJudge.from_config({"service": "transformers", "model": "/models/judge"}, cache=None)
    assert named.identity["engine"] == "NATIVE" and named.identity["model"] == "/models/judge"
    assert isinstance(named._backend, LazyBackend) and named._backend.loaded is None
    with pytest.raises(ValueError, match="takes no endpoint"):
        EvalJudge.from_config({"service": "vllm", "endpoint": "http://localhost:8000/v1"})


def test_an_unknown_service_or_key_is_refused_naming_what_is_known() -> None:
    with pytest.raises(
        ValueError, match=r"unknown judge service 'bedrock'; supported: ollama, openai, together"
    ):
        EvalJudge.from_config({"service": "bedrock"})
    with pytest.raises(ValueError, match=r"unknown judge config key\(s\) modle; known: service, model"):
        EvalJudge.from_config({"modle": "gemma2:9b"})


def test_a_factory_is_called_with_the_block_and_its_backend_judges(factory_module: str) -> None:
    block = {"factory": f"{factory_module}.make_judge_llm", "model": "my-model"}
    judge = EvalJudge.from_config(block, cache=None)
    module = sys.modules[factory_module]
    assert [block] == module.SEEN
    assert judge.model_id == "factory-model"
    verdict = judged(judge)
    assert (verdict.verdict, verdict.reason) == ("yes", "from the factory")
    colon = EvalJudge.from_config({"factory": f"{factory_module}:make_config", "model": "m2"}, cache=None)
    assert colon.identity["model"] == "m2" and colon.identity["engine"] == "REMOTE_VLLM"


def test_the_factory_module_is_imported_only_when_the_block_names_it(factory_module: str) -> None:
    EvalJudge.from_config({"service": "ollama"}, cache=None)
    EvalJudge.from_config(None, cache=None)
    assert factory_module not in sys.modules
    EvalJudge.from_config({"factory": f"{factory_module}.make_judge_llm"}, cache=None)
    assert factory_module in sys.modules


def test_a_bad_factory_is_named(factory_module: str) -> None:
    with pytest.raises(ValueError, match="not a dotted path"):
        EvalJudge.from_config({"factory": "make_judge_llm"})
    with pytest.raises(ValueError, match="cannot import 'no_such_pkg_xyz'"):
        EvalJudge.from_config({"factory": "no_such_pkg_xyz.make"})
    with pytest.raises(ValueError, match="has no callable 'missing'"):
        EvalJudge.from_config({"factory": f"{factory_module}.missing"})
    with pytest.raises(TypeError, match="not_a_backend' returned something unusable"):
        EvalJudge.from_config({"factory": f"{factory_module}.not_a_backend"})
