"""A backend for OpenAI-compatible chat servers (engines ``REMOTE_VLLM`` and ``OPENAI``).

Requests go to ``{api_url}/chat/completions`` concurrently (``remote_params.num_workers`` at a time) with
the standard library's HTTP client. The constraint is sent the way each server understands it:

* ``REMOTE_VLLM`` (``vllm serve``): the same compact regex the local engine enforces, in vLLM's own
  request fields (:func:`jurist.backends.vllm.params.server_fields`);
* ``OPENAI``: ``response_format: {"type": "json_schema", ...}`` with the judge's JSON schema (OpenAI has
  no regex constraint; XML answers go unconstrained and are parsed as usual).

A server that rejects a prompt as longer than the model's context gives the row ``too_long``; any other
failure, after the retries :mod:`jurist.backends.remote.http_retry` allows (for 408, 429 and 5xx answers,
reset connections and requests unanswered for ``remote_params.timeout_s``), gives that row ``error`` with the
last failure and why retrying stopped. Nothing raises for one row.

Engine ``OPENAI`` reads its key from ``OPENAI_API_KEY`` unless ``remote_params`` names another variable
(or gives the key), and its URL from ``OPENAI_BASE_URL`` when the config has none, as OpenAI's SDK does.
Oumi's hosted engines (``ANTHROPIC``, ``TOGETHER``...) arrive here as ``OPENAI`` with their provider's
URL and key variable (:data:`jurist.config.inference.OUMI_ENGINES`). ``remote_params`` also sets the
retries, their backoff and the most a request waits in all, a pause between a worker's requests
(``politeness_policy``) and a cap on requests per minute.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.backends.remote.http_retry import (
    RETRY_STATUS,
    Attempts,
    RetryPolicy,
    ServerHealth,
    retry_after_seconds,
)
from jurist.backends.vllm.backend import CONSTRAINT_KINDS
from jurist.backends.vllm.params import server_fields
from jurist.config.inference import InferenceConfig
from jurist.config.types import InferenceEngine
from jurist.errors import BackendError
from jurist.records import Completion, ConstraintKind, GenerationRequest

_CONTEXT_WORDS = ("maximum context length", "context length", "too long", "max_model_len")
_DEFAULT_URLS = {InferenceEngine.OPENAI: "https://api.openai.com/v1"}
_OUTPUT_WORDS = ("fewer output tokens", "max_tokens' or 'max_completion_tokens' is too large")


def _base_url(config: InferenceConfig) -> str | None:
    """The server's base URL: the config's (a full ``.../chat/completions`` URL, as Oumi writes it, is
    cut back to its base), else ``OPENAI_BASE_URL`` for engine OPENAI, else the engine's default."""
    url = config.remote_params.api_url
    if not url and config.engine is InferenceEngine.OPENAI:
        url = os.environ.get("OPENAI_BASE_URL") or None
    url = url or _DEFAULT_URLS.get(config.engine)
    if url is None:
        return None
    url = url.rstrip("/")
    return url[: -len("/chat/completions")] if url.endswith("/chat/completions") else url


def _key(config: InferenceConfig) -> str | None:
    """The API key: ``remote_params.api_key``, else the named variable (which must be set), else for a plain
    OPENAI engine ``OPENAI_API_KEY`` when set."""
    remote = config.remote_params
    if remote.api_key is not None:
        return remote.api_key.get_secret_value()
    if remote.api_key_env:
        key = os.environ.get(remote.api_key_env)
        if not key:
            raise BackendError(
                f"environment variable {remote.api_key_env} (remote_params.api_key_env) is unset"
            )
        return key
    if config.engine is InferenceEngine.OPENAI and config.provider in (None, "OPENAI"):
        return os.environ.get("OPENAI_API_KEY") or None
    return None


class _Pacer:
    """Spaces requests out: each worker waits ``politeness`` seconds between its own requests, and all of
    them together send at most ``per_minute`` requests in any 60 seconds."""

    def __init__(self, politeness: float, per_minute: int | None) -> None:
        self._politeness = politeness
        self._per_minute = per_minute
        self._lock = threading.Lock()
        self._sent: list[float] = []
        self._local = threading.local()

    def wait(self) -> None:
        last = getattr(self._local, "last", None)
        if self._politeness and last is not None:
            time.sleep(max(0.0, last + self._politeness - time.monotonic()))
        if self._per_minute:
            while True:
                with self._lock:
                    now = time.monotonic()
                    self._sent = [t for t in self._sent if t > now - 60.0]
                    if len(self._sent) < self._per_minute:
                        self._sent.append(now)
                        break
                    pause = self._sent[0] + 60.0 - now
                time.sleep(max(pause, 0.01))
        self._local.last = time.monotonic()


def chat_body(request: GenerationRequest, model: str) -> dict[str, Any]:
    """The chat-completions fields of a request that every OpenAI-compatible server reads: the model, the
    messages (a request's ``prefix`` as a last, unfinished assistant message, which ``vllm serve``
    continues: :func:`~jurist.backends.vllm.params.server_fields`), the token bound and the sampling
    settings."""
    messages = [m.as_dict() for m in request.messages]
    if request.prefix:
        messages.append({"role": "assistant", "content": request.prefix})
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
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
    return body


def remote_constraint_kinds(engine: InferenceEngine) -> tuple[ConstraintKind, ...]:
    """What a server enforces: ``vllm serve`` (REMOTE_VLLM) every kind, a regex first; OpenAI only JSON
    schemas."""
    return CONSTRAINT_KINDS if engine is InferenceEngine.REMOTE_VLLM else ("json_schema",)


class OpenAIBackend:
    """Chat completions over HTTP against an OpenAI-compatible server."""

    def __init__(self, config: InferenceConfig, *, retries: int | None = None) -> None:
        remote = config.remote_params
        url = _base_url(config)
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
        self._template_kwargs = config.model.chat_template_kwargs
        if self._template_kwargs and config.engine is InferenceEngine.OPENAI:
            raise BackendError(
                "engine OPENAI takes no model.chat_template_kwargs (the server's chat template is not "
                "reachable): they apply on VLLM, NATIVE and REMOTE_VLLM"
            )
        self._workers = remote.num_workers
        self._timeout = remote.timeout_s
        self._policy = RetryPolicy.from_params(remote, retries)
        self._health = ServerHealth()
        self._pacer = _Pacer(remote.politeness_policy, remote.requests_per_minute)
        self._user = remote.user_id
        self._base = url.rstrip("/")
        self._key: str | None = _key(config)
        if self._key is None and self._base == _DEFAULT_URLS[InferenceEngine.OPENAI]:
            raise BackendError("OpenAI's API needs a key: set OPENAI_API_KEY (or remote_params.api_key_env)")

    @property
    def model_id(self) -> str:
        return self._model

    def check_reachable(self) -> None:
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
        return remote_constraint_kinds(self._engine)

    def body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body sent for one request."""
        body = chat_body(request, self._model)
        if self._user:
            body["user"] = self._user
        if self._engine is InferenceEngine.REMOTE_VLLM:
            body.update(server_fields(request))
            if self._template_kwargs:
                body["chat_template_kwargs"] = dict(self._template_kwargs)
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
        self._health.resume()
        results: list[Completion | None] = [None] * len(requests)
        failures: list[BaseException] = []
        order = iter(range(len(requests)))
        taking = threading.Lock()

        def work() -> None:
            while not self._health.stopped:
                with taking:
                    index = next(order, None)
                if index is None:
                    return
                try:
                    results[index] = self._one(requests[index])
                except BaseException as exc:  # a bug: raised in the caller's thread below
                    failures.append(exc)
                    self._health.stop()
                    return

        # daemon threads: a run stopped by Ctrl-C or a signal need not wait for a request in flight to end
        workers = [
            threading.Thread(target=work, daemon=True) for _ in range(min(self._workers, len(requests)))
        ]
        for worker in workers:
            worker.start()
        try:
            for worker in workers:
                worker.join()
        except BaseException:  # Ctrl-C or a stop signal: send nothing more, end the waits for a retry
            self._health.stop()
            raise
        if failures:
            raise failures[0]
        return [r if r is not None else Completion("", "error", error="not sent") for r in results]

    def _one(self, request: GenerationRequest) -> Completion:
        payload = json.dumps(self.body(request)).encode()
        headers = self._headers()
        attempts = Attempts(self._policy, self._health)
        while True:
            self._pacer.wait()
            try:
                http_request = urllib.request.Request(self._url, data=payload, headers=headers, method="POST")
                with urllib.request.urlopen(http_request, timeout=self._timeout) as response:
                    completion = completion_of(json.loads(response.read()))
                self._health.answered()
                return completion
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:500]
                if exc.code == 400 and any(w in detail for w in _OUTPUT_WORDS):
                    hint = "lower inference_config.generation.max_new_tokens, or serve a longer context"
                    return Completion("", "error", error=f"server: {detail} ({hint})")
                if exc.code == 400 and any(w in detail.lower() for w in _CONTEXT_WORDS):
                    return Completion("", "too_long", error=f"server: {detail}")
                failure = f"HTTP {exc.code}: {detail}"
                if exc.code not in RETRY_STATUS:
                    return Completion("", "error", error=failure)
                retry_after = retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
                busy = exc.code == 429 or retry_after is not None
                gave_up = attempts.wait_before_retry(busy=busy, retry_after=retry_after)
            except TimeoutError as exc:
                failure = f"no answer within {self._timeout:g} s (remote_params.timeout_s): {exc}"
                gave_up = attempts.wait_before_retry(busy=False, retry_after=None)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", None)
                if isinstance(reason, TimeoutError):
                    failure = f"no answer within {self._timeout:g} s (remote_params.timeout_s): {reason}"
                else:
                    failure = f"{type(exc).__name__}: {exc}"
                gave_up = attempts.wait_before_retry(busy=False, retry_after=None)
            if gave_up is not None:
                return Completion("", "error", error=f"{failure} -- gave up {gave_up}")

    def close(self) -> None:
        """Nothing to free: connections are not kept open."""


def completion_of(data: Mapping[str, Any], unexpected: str = "unexpected server answer:") -> Completion:
    """A chat-completions response body as a :class:`Completion`: the first choice's text and finish reason,
    the usage counts and, when the body has them, the tokens' log-probabilities; a body of another shape is
    an ``error`` completion that starts with ``unexpected`` and shows the body."""
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason") or "stop"
    except (KeyError, IndexError, TypeError, AttributeError):
        return Completion("", "error", error=f"{unexpected} {json.dumps(data)[:300]}")
    usage = data.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    content = (choice.get("logprobs") or {}).get("content")
    token_logprobs = tokens = None
    if content:
        tokens = tuple(step["token"] for step in content)
        token_logprobs = tuple(
            {
                **{t["token"]: t["logprob"] for t in step.get("top_logprobs") or ()},
                step["token"]: step["logprob"],
            }
            for step in content
        )
    return Completion(
        text,
        "length" if finish == "length" else "stop",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=details.get("cached_tokens"),
        token_logprobs=token_logprobs,
        tokens=tokens,
    )
