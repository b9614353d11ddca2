"""A batch line's body -> the request jurist's backends take, or a refusal naming the field.

* Chat bodies become a :class:`~jurist.records.GenerationRequest`: messages (text content only; a
  ``developer`` message is a system message), ``max_completion_tokens`` / ``max_tokens`` (else the run's
  default), sampling settings, ``stop``, ``seed``, ``logprobs`` / ``top_logprobs``, and ``response_format``
  as a constraint: ``json_schema`` its schema, ``json_object`` any JSON object, each as a regex with no
  free whitespace where the regex holds the schema exactly (:mod:`jurist.backends.schema_regex`, compiled
  once per distinct schema), else the schema itself for the engine's grammar backend; how each line's
  schema was enforced comes back beside the request. vLLM's ``continue_final_message: true`` (with
  ``add_generation_prompt: false``) makes the last assistant message the start of the answer (the
  request's ``prefix``), as a thinking judge's batch lines ask (:mod:`jurist.openai_batch.bodies`).
* Embedding bodies become an :class:`EmbeddingRequest` (texts only).
* What jurist cannot honour is refused, never silently dropped: ``n`` > 1, streaming, tools, images, a
  constraint the engine cannot enforce, a model the run does not serve.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from jurist.backends.schema_regex import SchemaConstraints, SchemaRegex
from jurist.openai_batch.shapes import CHAT_URL, EMBEDDINGS_URL, ChatBody, ChatMessage, EmbeddingBody
from jurist.records import Constraint, ConstraintKind, GenerationRequest, Message

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
REFUSED_FIELDS = ("tools", "functions", "tool_choice", "function_call", "audio", "prediction")
ANY_JSON_OBJECT: Mapping[str, Any] = {"type": "object"}


class Refused(Exception):
    """A line jurist does not run: ``code`` (OpenAI's error codes where one fits) and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class EmbeddingRequest:
    """Texts to embed with the run's pooling model."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Served:
    """What a run serves: the chat model's name per requested model (``model_map``; ``model`` for any
    other or none), whether an embedding model is loaded, the constraint kinds the chat engine enforces,
    the token bound of a body that gives none, and the compiled response formats (one per schema)."""

    model: str | None
    model_map: Mapping[str, str]
    embeddings: bool
    constraint_kinds: tuple[ConstraintKind, ...]
    default_max_tokens: int = 4096
    schemas: SchemaConstraints = field(default_factory=SchemaConstraints, compare=False)

    def chat_model(self, requested: str | None) -> str:
        """The local model a body's ``model`` runs on (a refusal when the run does not serve it)."""
        if requested is not None and requested in self.model_map:
            return self.model_map[requested]
        if self.model is not None:
            return self.model
        if not self.model_map:
            return "default"
        known = ", ".join(sorted(self.model_map))
        raise Refused(
            "model_not_found",
            f"body.model {requested!r} is not in --model-map (mapped: {known}) and no --model was given",
        )


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"body.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5])


Request = tuple[GenerationRequest | EmbeddingRequest, SchemaRegex | None]


def to_request(url: str, body: Mapping[str, Any], served: Served) -> Request:
    """The request a line's ``url`` and ``body`` ask for, and how its ``response_format`` schema is
    enforced (None without one); :class:`Refused` when jurist does not run it."""
    if url == CHAT_URL:
        return chat_request(body, served)
    if url == EMBEDDINGS_URL:
        if not served.embeddings:
            raise Refused(
                "unsupported_url",
                f"{EMBEDDINGS_URL} needs a pooling model: run with --embedding-model",
            )
        try:
            parsed = EmbeddingBody.model_validate(body)
        except ValidationError as exc:
            raise Refused("invalid_request", _errors(exc)) from None
        texts = (parsed.input,) if isinstance(parsed.input, str) else tuple(parsed.input)
        return EmbeddingRequest(texts), None
    served_urls = CHAT_URL + (f" and {EMBEDDINGS_URL}" if served.embeddings else "")
    raise Refused("unsupported_url", f"url {url!r} is not served here (served: {served_urls})")


def chat_request(body: Mapping[str, Any], served: Served) -> tuple[GenerationRequest, SchemaRegex | None]:
    """A chat completion body as a :class:`GenerationRequest` and how its schema is enforced (see the
    module's docstring)."""
    try:
        parsed = ChatBody.model_validate(body)
    except ValidationError as exc:
        raise Refused("invalid_request", _errors(exc)) from None
    served.chat_model(parsed.model)
    for name in REFUSED_FIELDS:
        if body.get(name) is not None:
            raise Refused("unsupported_parameter", f"body.{name} is not supported by jurist batch")
    if parsed.n != 1:
        raise Refused(
            "unsupported_parameter", f"body.n: only 1 choice per request is served (got {parsed.n})"
        )
    if parsed.stream:
        raise Refused("unsupported_parameter", "body.stream: a batch answers whole, not streamed")
    if parsed.top_logprobs is not None and not parsed.logprobs:
        raise Refused("invalid_request", "body.top_logprobs needs body.logprobs: true")
    stop = (parsed.stop,) if isinstance(parsed.stop, str) else tuple(parsed.stop or ())
    constraint, schema = _constraint(parsed, served)
    messages = tuple(_message(m, i) for i, m in enumerate(parsed.messages))
    messages, prefix = _continued(parsed, messages)
    request = GenerationRequest(
        messages=messages,
        max_tokens=parsed.max_completion_tokens or parsed.max_tokens or served.default_max_tokens,
        temperature=parsed.temperature,
        top_p=parsed.top_p,
        seed=parsed.seed,
        frequency_penalty=parsed.frequency_penalty,
        presence_penalty=parsed.presence_penalty,
        stop=stop,
        constraint=constraint,
        logprobs=(parsed.top_logprobs or 0) if parsed.logprobs else None,
        prefix=prefix,
    )
    return request, schema


def _continued(body: ChatBody, messages: tuple[Message, ...]) -> tuple[tuple[Message, ...], str]:
    """The messages before the answer, and the answer's given start: with ``continue_final_message`` the
    last (assistant) message's text, else nothing."""
    if not body.continue_final_message:
        if not body.add_generation_prompt:
            raise Refused(
                "unsupported_parameter",
                "body.add_generation_prompt: false is served only with continue_final_message: true",
            )
        return messages, ""
    if body.add_generation_prompt:
        raise Refused(
            "invalid_request",
            "body.continue_final_message: true needs add_generation_prompt: false (it continues the last "
            "assistant message instead of opening a new turn)",
        )
    if len(messages) < 2 or messages[-1].role != "assistant":
        raise Refused(
            "invalid_request",
            "body.continue_final_message: true needs a last assistant message after the prompt to continue",
        )
    return messages[:-1], messages[-1].content


def _message(message: ChatMessage, index: int) -> Message:
    role = ROLES.get(message.role)
    if role is None:
        raise Refused(
            "unsupported_parameter",
            f"body.messages.{index}.role {message.role!r} is not served (served: {', '.join(ROLES)})",
        )
    content = message.content
    if isinstance(content, list):
        texts = []
        for part in content:
            if part.type != "text" or part.text is None:
                raise Refused(
                    "unsupported_parameter",
                    f"body.messages.{index}.content: a {part.type!r} part; jurist batch serves text only",
                )
            texts.append(part.text)
        content = "".join(texts)
    return Message(role, content or "")  # type: ignore[arg-type]


def _constraint(body: ChatBody, served: Served) -> tuple[Constraint | None, SchemaRegex | None]:
    form = body.response_format
    if form is None or form.type == "text":
        return None, None
    if form.type == "json_object":
        schema = ANY_JSON_OBJECT
    elif form.json_schema is None or form.json_schema.schema_ is None:
        raise Refused("invalid_request", "body.response_format.json_schema.schema is required")
    else:
        schema = form.json_schema.schema_
    constraint, compiled = served.schemas(schema, served.constraint_kinds)
    if constraint.json_schema is not None and "json_schema" not in served.constraint_kinds:
        raise Refused(
            "unsupported_parameter",
            f"body.response_format: this engine enforces no JSON schema, and no regex holds this one "
            f"({compiled.fallback})",
        )
    return constraint, compiled
