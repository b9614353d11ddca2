"""``EvalJudge.from_config``: a scenario's ``judge.eval`` block -> what the judge runs on.

Keys (pipecat's, plus two of jurist's):

=============  =================================================================================
key            meaning
=============  =================================================================================
``service``    default ``ollama``; see :data:`SERVICES`
``model``      default ``gemma2:9b`` for the servers; the embedded default model for ``vllm`` and
               ``transformers`` (a Hugging Face id or a local folder otherwise)
``endpoint``   the server's OpenAI-compatible base URL (default: the service's own)
``factory``    ``"pkg.module.function"`` (or ``pkg.module:function``): called with the whole block,
               returns a jurist Backend or anything :class:`~jurist.conversation.judge.EvalJudge` accepts.
               It is imported only when the block names it, and then every other key is left to it.
``api_key_env``  the environment variable holding the API key (default: the service's own)
``max_tokens``   the cap on the judge's answer (default 200)
=============  =================================================================================

The OpenAI-compatible services go through jurist's HTTP backend (OpenAI's JSON-schema constraint, or
``vllm serve``'s regex for ``vllm-server``); ``vllm`` and ``transformers`` run the model in this process.
Nothing connects or loads here: the backend is made on the first request.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jurist.config.inference import InferenceConfig
from jurist.config.providers import PROVIDERS

DEFAULT_SERVICE = "ollama"
DEFAULT_MODEL = "gemma2:9b"
KEYS = ("service", "model", "endpoint", "factory", "api_key_env", "max_tokens")


@dataclass(frozen=True)
class Service:
    """How one service is reached: jurist's engine, the default URL and API-key variable (remote only)."""

    engine: str
    url: str | None = None
    api_key_env: str | None = None

    @property
    def remote(self) -> bool:
        return self.engine in ("OPENAI", "REMOTE_VLLM")


SERVICES: dict[str, Service] = {
    **{
        name: Service("OPENAI", PROVIDERS[name].url, PROVIDERS[name].api_key_env)
        for name in ("ollama", "openai", "together", "groq", "openrouter")
    },
    "vllm-server": Service("REMOTE_VLLM", "http://localhost:8000/v1"),
    "vllm": Service("VLLM"),
    "transformers": Service("NATIVE"),
}


def check_keys(block: Mapping[str, Any]) -> None:
    """Refuse keys this block does not know (a misspelt key would otherwise be ignored silently)."""
    unknown = sorted(str(k) for k in block if k not in KEYS)
    if unknown:
        raise ValueError(f"unknown judge config key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")


def service_config(block: Mapping[str, Any]) -> InferenceConfig:
    """The inference config a block (without ``factory``) asks for; ValueError naming the supported
    services for an unknown one."""
    name = str(block.get("service") or DEFAULT_SERVICE).strip().lower()
    service = SERVICES.get(name)
    if service is None:
        raise ValueError(f"unknown judge service {name!r}; supported: {', '.join(SERVICES)}")
    model = block.get("model")
    endpoint = block.get("endpoint")
    config: dict[str, Any] = {"engine": service.engine}
    if service.remote:
        config["model"] = {"model_name": str(model or DEFAULT_MODEL)}
        remote: dict[str, Any] = {"api_url": str(endpoint or service.url)}
        key_env = block.get("api_key_env", service.api_key_env)
        if key_env:
            remote["api_key_env"] = str(key_env)
        config["remote_params"] = remote
    else:
        if endpoint:
            raise ValueError(f"service {name!r} runs the model in this process; it takes no endpoint")
        if block.get("api_key_env"):
            raise ValueError(f"service {name!r} runs the model in this process; it takes no api_key_env")
        config["model"] = {"model_name": str(model) if model else None}
    return InferenceConfig.model_validate(config)


def import_factory(path: str) -> Callable[[Mapping[str, Any]], Any]:
    """The callable a dotted path (``pkg.module.function`` or ``pkg.module:function``) names."""
    module_name, sep, attribute = path.rpartition(":") if ":" in path else path.rpartition(".")
    if not sep or not module_name or not attribute:
        raise ValueError(f"factory {path!r} is not a dotted path such as 'my_pkg.make_judge_llm'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"factory {path!r}: cannot import {module_name!r}: {exc}") from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"factory {path!r}: {module_name!r} has no callable {attribute!r}")
    return factory  # type: ignore[no-any-return]
