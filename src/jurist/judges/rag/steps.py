"""One request of a RAG step, and reading its answer.

An :class:`Ask` is what a metric wants next: a named task and the shape of its answer. :func:`build_request`
turns it into a generation request (the step's messages, its constraint, its token bound, the judge's
sampling); :func:`read_step` turns the answer into a :class:`StepReading`: the value, or a status and a
reason. An answer that broke off (``truncated``), that the engine failed on (``backend_error``), whose
prompt was too long (``too_long``) or that cannot be read (``parse_error``: not JSON, not the step's shape,
or an invalid verdict) leaves the row without a score, with that status.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurist.answer.reading import ReadStatus
from jurist.judges.parts import UNGUIDED_MAX_TOKENS, JudgeParts
from jurist.judges.rag.prompts import user_message
from jurist.judges.rag.schemas import InvalidAnswer, StepSchema, extract_object
from jurist.records import Answer, Completion, ConstraintKind, GenerationRequest, Message


@dataclass(frozen=True)
class Ask:
    """One request of a step: its name (in raw answers and errors), its task, its answer's shape."""

    name: str
    task: str
    schema: StepSchema


@dataclass(frozen=True)
class StepReading:
    """One step answer, read: ``value`` when ``status`` is ``ok``, else ``error`` says why."""

    status: ReadStatus
    value: Any = None
    error: str | None = None
    raw: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def build_request(
    parts: JudgeParts, system: str, case: str, ask: Ask, kinds: Sequence[ConstraintKind]
) -> GenerationRequest:
    """The request of one ask: system and user messages, the shape's constraint (of the first of ``kinds``
    it can be held to, unless the judge turns guided decoding off) and its token bound (``max_new_tokens``
    when configured)."""
    messages = (
        Message("system", system),
        Message("user", user_message(case, ask.task, ask.schema.instructions())),
    )
    guided = parts.config.judge_params.use_guided_decoding
    constraint = ask.schema.constraint(kinds) if guided else None
    configured = parts.config.inference_config.generation.max_new_tokens
    bound = ask.schema.max_tokens()
    if configured is not None:
        max_tokens = configured
    elif constraint is not None:
        max_tokens = bound
    else:
        max_tokens = max(bound, UNGUIDED_MAX_TOKENS)
    sampled = parts.generation_request(messages, ())
    return dataclasses.replace(sampled, constraint=constraint, max_tokens=max_tokens, logprobs=None)


def read_step(answer: Answer, schema: StepSchema, max_tokens: int) -> StepReading:
    """The value of one step's answer, or why it has none."""
    if not isinstance(answer, Completion):
        return StepReading(
            "backend_error", error="the engine answered a generation request with label scores"
        )
    tokens: dict[str, Any] = {
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
    }
    if answer.finish_reason == "too_long":
        return StepReading("too_long", error=answer.error or "prompt exceeds the model's context", **tokens)
    if answer.finish_reason == "error":
        return StepReading("backend_error", error=answer.error or "engine error", raw=answer.text, **tokens)
    if answer.finish_reason == "length":
        error = f"the answer hit max_tokens ({max_tokens}) before it ended"
        return StepReading("truncated", error=error, raw=answer.text, **tokens)
    try:
        value = schema.read(extract_object(answer.text))
    except InvalidAnswer as exc:
        return StepReading("parse_error", error=str(exc), raw=answer.text, **tokens)
    return StepReading("ok", value, raw=answer.text, **tokens)
