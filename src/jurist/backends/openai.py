"""A backend for OpenAI-compatible chat servers (engines ``REMOTE_VLLM`` and ``OPENAI``).

Requests go to ``{api_url}/chat/completions`` concurrently (``remote_params.num_workers`` at a time) with
the standard library's HTTP client. The constraint is sent the way each server understands it:

* ``REMOTE_VLLM`` (``vllm serve``): the same compact regex the local engine enforces, in vLLM's own
  request fields (:func:`jurist.backends.vllm.server_fields`);
* ``OPENAI``: ``response_format: {"type": "json_schema", ...}`` with the judge's JSON schema (OpenAI has
  no regex constraint; XML answers go unconstrained and are parsed as usual).

A server that rejects a prompt as longer than the model's context gives the row ``too_long``; any other
failure, after retries for 429 and 5xx answers, gives that row ``error``. Nothing raises for one row.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jurist.backends.base import Completion, ConstraintKind, GenerationRequest
from jurist.backends.vllm import CONSTRAINT_KINDS, server_fields
from jurist.config.inference import InferenceConfig
from jurist.config.types import InferenceEngine
from jurist.errors import BackendError

_CONTEXT_WORDS = ("maximum context length", "context length", "too long", "max_model_len")
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_DEFAULT_URLS = {InferenceEngine.OPENAI: "https://api.openai.com/v1"}


class OpenAIBackend:
    """Chat completions over HTTP against an OpenAI-compatible server."""

    def __init__(self, config: InferenceConfig, *, retries: int = 3) -> None:
        remote = config.remote_params
        url = remote.api_url or _DEFAULT_URLS.get(config.engine)
        if not url:
            raise BackendError(
                f"engine {config.engine.value} needs inference_config.remote_params.api_url "
                "(for example http://localhost:8000/v1)"
            )
        if not config.model.model_name:
            raise BackendError(f"engine {config.engine.value} needs inference_config.model.model_name")
        self._url = url.rstrip("/") + "/chat/completions"
        self._model = config.model.model_name
        self._engine = config.engine
        self._workers = remote.num_workers
        self._timeout = remote.timeout_s
        self._retries = retries
        self._base = url.rstrip("/")
        self._key: str | None = None
        if remote.api_key_env:
            self._key = os.environ.get(remote.api_key_env)
            if not self._key:
                raise BackendError(
                    f"environment variable {remote.api_key_env} (remote_params.api_key_env) is unset"
                )

    @property
    def model_id(self) -> str:
        return self._model

    def probe(self) -> None:
        """Check that the server answers at all (any HTTP answer will do), so that a dead server is one clear
        error instead of a failed request per row."""
        request = urllib.request.Request(f"{self._base}/models", headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=min(10.0, self._timeout)):
                pass
        except urllib.error.HTTPError:
            return  # it answered
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise BackendError(f"cannot reach the server at {self._base}: {reason}") from exc

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def describe(self) -> dict[str, Any]:
        return {"engine": self._engine.value.lower(), "url": self._url}

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]:
        """``vllm serve`` takes every kind (a regex first); OpenAI only JSON schemas."""
        return CONSTRAINT_KINDS if self._engine is InferenceEngine.REMOTE_VLLM else ("json_schema",)

    def body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body sent for one request."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [m.as_dict() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        if request.frequency_penalty:
            body["frequency_penalty"] = request.frequency_penalty
        if request.presence_penalty:
            body["presence_penalty"] = request.presence_penalty
        if self._engine is InferenceEngine.REMOTE_VLLM:
            body.update(server_fields(request))
        elif request.constraint is not None and request.constraint.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "judgment",
                    "strict": True,
                    "schema": dict(request.constraint.json_schema),
                },
            }
        return body

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(self._workers, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: GenerationRequest) -> Completion:
        payload = json.dumps(self.body(request)).encode()
        headers = self._headers()
        delay = 1.0
        for attempt in range(self._retries + 1):
            try:
                http_request = urllib.request.Request(self._url, data=payload, headers=headers, method="POST")
                with urllib.request.urlopen(http_request, timeout=self._timeout) as response:
                    return _completion(json.loads(response.read()))
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:500]
                if exc.code == 400 and any(w in detail.lower() for w in _CONTEXT_WORDS):
                    return Completion("", "too_long", error=f"server: {detail}")
                if exc.code in _RETRY_STATUS and attempt < self._retries:
                    time.sleep(delay)
                    delay *= 2
                    continue
                return Completion("", "error", error=f"HTTP {exc.code}: {detail}")
            except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
                if attempt < self._retries:
                    time.sleep(delay)
                    delay *= 2
                    continue
                return Completion("", "error", error=f"{type(exc).__name__}: {exc}")
        return Completion("", "error", error="retries exhausted")

    def close(self) -> None:
        """Nothing to free: connections are not kept open."""


def _completion(data: dict[str, Any]) -> Completion:
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason") or "stop"
    except (KeyError, IndexError, TypeError, AttributeError):
        return Completion("", "error", error=f"unexpected server answer: {json.dumps(data)[:300]}")
    usage = data.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return Completion(
        text,
        "length" if finish == "length" else "stop",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=details.get("cached_tokens"),
    )
