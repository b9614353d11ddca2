"""Both ways between pipecat's LLM services and jurist's backends.

* :class:`ServiceBackend`: a pipecat LLM service (anything with pipecat's ``async run_inference(context,
  max_tokens=..., system_instruction=...) -> str | None``) as a jurist backend, so a pipecat user's
  ``EvalJudge(service)`` keeps working on jurist's :class:`~jurist.conversation.judge.EvalJudge`. The service
  enforces no constraint jurist can hand it (pipecat 1.7's ``run_inference`` takes no schema), so the judge's
  answer is read as free text, as pipecat reads it.
* :class:`JuristLLMService`: a jurist backend as a pipecat LLM service, so pipecat's own ``EvalJudge`` (1.7:
  ``EvalJudge(service)``; 1.14: ``EvalJudge(LLMClassifier(llm=service), explainer=service)``) runs on a local
  model. A ``response_schema`` (pipecat 1.14) becomes jurist's JSON-schema constraint when the backend
  enforces one.

pipecat itself is imported only inside :meth:`ServiceBackend.generate` (its ``LLMContext``), never at import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.backends.base import Backend
from jurist.backends.schema_regex import schema_constraint
from jurist.records import Completion, GenerationRequest, Message

ROLES = frozenset({"system", "user", "assistant"})


def is_service(value: Any) -> bool:
    """Whether ``value`` looks like a pipecat LLM service (it has a callable ``run_inference``)."""
    return callable(getattr(value, "run_inference", None)) and not isinstance(value, Backend)


def service_model(service: Any) -> str:
    """The model a pipecat service runs, as far as it says (``settings.model``, ``model_name``), else its
    class name."""
    settings = getattr(service, "settings", None)
    for value in (getattr(settings, "model", None), getattr(service, "model_name", None)):
        if isinstance(value, str) and value:
            return value
    return type(service).__name__


class ServiceBackend:
    """A pipecat LLM service as a jurist backend: one ``run_inference`` per request.

    ``loop``: the event loop the service belongs to (its HTTP session lives there); when set, requests made
    from another thread run on it, else each runs in a fresh loop. The conversation ``EvalJudge`` sets it to
    the loop that awaits ``evaluate``.
    """

    def __init__(self, service: Any) -> None:
        if not is_service(service):
            name = type(service).__name__
            raise TypeError(f"a {name} has no run_inference(); it is not a pipecat LLM service")
        self.service = service
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def model_id(self) -> str:
        return f"pipecat:{service_model(self.service)}"

    @property
    def constraint_kinds(self) -> tuple[()]:
        return ()

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        return [self._one(request) for request in requests]

    def _one(self, request: GenerationRequest) -> Completion:
        from pipecat.processors.aggregators.llm_context import LLMContext

        system = "\n\n".join(m.content for m in request.messages if m.role == "system") or None
        context = LLMContext(messages=[m.as_dict() for m in request.messages if m.role != "system"])  # type: ignore[misc]
        call = self.service.run_inference(
            context=context, max_tokens=request.max_tokens, system_instruction=system
        )
        try:
            text = self._wait(call)
        except Exception as exc:  # the service's own failure (HTTP, auth, model): this request's error
            return Completion("", "error", error=f"{type(exc).__name__}: {exc}")
        if not text:
            return Completion("", "error", error="the service returned an empty response")
        return Completion(str(text), "stop")

    def _wait(self, call: Awaitable[Any]) -> Any:
        loop = self.loop
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                return asyncio.run_coroutine_threadsafe(_awaited(call), loop).result()
        return asyncio.run(_awaited(call))

    def describe(self) -> dict[str, str]:
        return {"engine": "pipecat", "service": type(self.service).__name__}

    def close(self) -> None:
        """The service belongs to its caller: nothing to close here."""


async def _awaited(call: Awaitable[Any]) -> Any:
    return await call


@dataclass(frozen=True)
class _Settings:
    model: str


class JuristLLMService:
    """A jurist backend as a pipecat LLM service: ``await run_inference(context, max_tokens=...,
    system_instruction=..., response_schema=...)`` sends one request and returns the model's text (None for
    a failed request, as pipecat's services do). The blocking model call runs in a worker thread."""

    def __init__(self, backend: Backend, *, max_tokens: int = 200) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.settings = _Settings(backend.model_id)

    async def run_inference(
        self,
        context: Any,
        max_tokens: int | None = None,
        system_instruction: str | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> str | None:
        messages = _messages(context, system_instruction)
        constraint = None
        if response_schema is not None and "json_schema" in self.backend.constraint_kinds:
            constraint, _ = schema_constraint(dict(response_schema), self.backend.constraint_kinds)
        request = GenerationRequest(
            messages=tuple(messages), max_tokens=max_tokens or self.max_tokens, constraint=constraint
        )
        completion = (await asyncio.to_thread(self.backend.generate, [request]))[0]
        if completion.finish_reason in ("error", "too_long"):
            return None
        return completion.text

    def __repr__(self) -> str:
        return f"JuristLLMService({self.backend.model_id!r})"


def _messages(context: Any, system_instruction: str | None) -> list[Message]:
    """The chat messages of a pipecat ``LLMContext`` (its ``get_messages()``; text parts of a content list
    are joined), with ``system_instruction`` first in place of any system message it holds."""
    raw = context.get_messages() if hasattr(context, "get_messages") else list(context)
    out: list[Message] = []
    if system_instruction:
        out.append(Message("system", system_instruction))
    for item in raw:
        role = str(item.get("role", "user"))
        if role == "system" and system_instruction:
            continue
        content = item.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        out.append(Message(role if role in ROLES else "user", "" if content is None else str(content)))  # type: ignore[arg-type]
    return out
