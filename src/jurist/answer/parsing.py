"""Completion text -> typed field values. Never raises for a row: a failure is a reason string.

Before parsing, ``<think>...</think>`` blocks (reasoning models) are removed; the response format
(:mod:`jurist.answer.formats`) then finds each field's raw value, and
:func:`~jurist.answer.values.convert_value` types it. A value outside a closed label set is a parse failure,
not a verdict. If any field fails, no field is returned: the row is ``parse_error`` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from jurist.answer.spec import OutputSpec
from jurist.answer.values import FieldError, convert_value

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParseResult:
    """Typed values by field name (empty on failure) and the failure's reason, if any."""

    values: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def strip_reasoning(text: str) -> str:
    """Remove ``<think>`` blocks (and a reasoning prefix whose opening tag the chat template wrote)."""
    text = _THINK.sub("", text)
    closing = text.lower().rfind("</think>")
    if closing >= 0:  # the chat template opened the reasoning block; only its end is in the completion
        text = text[closing + len("</think>") :]
    lowered = text.lower()
    if "<think>" in lowered:  # unterminated reasoning block: nothing after it is an answer
        text = text[: lowered.index("<think>")]
    return text.strip()


def clean_completion(text: str) -> str:
    """Remove reasoning blocks, a Markdown code fence around the answer, and surrounding whitespace."""
    text = strip_reasoning(text)
    fence = _FENCE.search(text)
    return fence.group(1).strip() if fence else text


def parse_completion(text: str, spec: OutputSpec) -> ParseResult:
    """Parse one completion against a judge's output spec.

    The text without reasoning blocks is parsed first; only if that fails is the content of a Markdown
    code fence tried, so a fence inside an explanation never hides the answer around it.
    """
    answer = strip_reasoning(text)
    if not answer:
        return ParseResult(error="empty response")
    result = _parse(answer, spec)
    if not result.ok:
        fenced = clean_completion(answer)
        if not fenced:
            return ParseResult(error="empty response")
        if fenced != answer:
            second = _parse(fenced, spec)
            if second.ok:
                return second
    return result


def _parse(text: str, spec: OutputSpec) -> ParseResult:
    try:
        raw = spec.format.extract(text, spec.fields)
        return ParseResult(values={f.name: convert_value(f, raw[f.name]) for f in spec.fields})
    except FieldError as exc:
        return ParseResult(error=str(exc))
