"""Completion text -> typed field values. Never raises for a row: a failure is a reason string.

Before parsing, ``<think>...</think>`` blocks (reasoning models) and Markdown code fences are removed.
Then, by response format:

* JSON: the first JSON object in the text; every field must be present.
* XML: one ``<field>...</field>`` tag per field (entities unescaped).
* RAW: the judgment is the last label (or number) the text names; the explanation is the rest.

Values are converted to the field's type: BOOL from Yes/No/True/False (any case, or a JSON boolean),
INT and FLOAT from numbers or numeric strings, ENUM to the exact label (matched without regard to case
or surrounding whitespace), TEXT as a string. A value outside a closed label set is a parse failure, not
a verdict. If any field fails, no field is returned: the row is ``parse_error`` with the reason.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from jurist.config import JudgmentType, ResponseFormat
from jurist.schema import OutputField, OutputSpec

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class ParseResult:
    """Typed values by field name (empty on failure) and the failure's reason, if any."""

    values: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class FieldError(ValueError):
    """One field's value could not be read; the message names the field."""


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
        if spec.response_format is ResponseFormat.JSON:
            raw = _extract_json(text, spec)
        elif spec.response_format is ResponseFormat.XML:
            raw = _extract_xml(text, spec)
        else:
            raw = _extract_raw(text, spec)
        return ParseResult(values={f.name: convert_value(f, raw[f.name]) for f in spec.fields})
    except FieldError as exc:
        return ParseResult(error=str(exc))


def _extract_json(text: str, spec: OutputSpec) -> dict[str, Any]:
    obj: Any = None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        decoder = json.JSONDecoder()
        for match in re.finditer(r"\{", text):
            try:
                obj, _ = decoder.raw_decode(text, match.start())
                break
            except json.JSONDecodeError:
                continue
    if not isinstance(obj, dict):
        raise FieldError("no JSON object in the response")
    missing = [f.name for f in spec.fields if f.name not in obj]
    if missing:
        raise FieldError(f"JSON answer lacks field {', '.join(missing)}")
    return obj


def _extract_xml(text: str, spec: OutputSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in spec.fields:
        match = re.search(rf"<{re.escape(f.name)}>(.*?)</{re.escape(f.name)}>", text, re.DOTALL)
        if match is None:
            raise FieldError(f"XML answer lacks <{f.name}>")
        out[f.name] = html.unescape(match.group(1)).strip()
    return out


def _extract_raw(text: str, spec: OutputSpec) -> dict[str, Any]:
    judgment = spec.judgment_fields[0]
    explanation_fields = [f for f in spec.fields if not f.is_judgment]
    value: str | None = None
    cut = len(text)
    if judgment.judgment_type is JudgmentType.TEXT:
        value, cut = text, 0
    elif judgment.labels is not None and judgment.judgment_type is not JudgmentType.INT:
        candidates = list(judgment.labels)
        if judgment.judgment_type is JudgmentType.BOOL:
            candidates += ["True", "False"]
        best = -1
        for label in sorted(candidates, key=len, reverse=True):
            for match in re.finditer(
                rf"(?<![A-Za-z0-9_]){re.escape(label)}(?![A-Za-z0-9_])", text, re.IGNORECASE
            ):
                if match.start() > best:
                    best, value, cut = match.start(), match.group(0), match.start()
    else:
        numbers = list(_NUMBER.finditer(text))
        if numbers:
            value, cut = numbers[-1].group(0), numbers[-1].start()
    if value is None:
        raise FieldError(f"no {judgment.judgment_type.value} judgment found in the response")
    out: dict[str, Any] = {judgment.name: value}
    for f in explanation_fields:
        out[f.name] = text[:cut].strip()
    return out


def convert_value(f: OutputField, value: Any) -> Any:
    """One raw value -> the field's type; :class:`FieldError` names the field when it cannot."""
    jt = f.judgment_type if f.is_judgment else JudgmentType.TEXT
    if value is None:
        raise FieldError(f"field {f.name} is null")
    if jt is JudgmentType.TEXT:
        if isinstance(value, dict | list):
            raise FieldError(f"field {f.name} is not text")
        return str(value).strip() if isinstance(value, str) else json.dumps(value)
    if jt is JudgmentType.BOOL:
        if isinstance(value, bool):
            return value
        text = str(value).strip().strip(".").lower()
        if text in ("yes", "true"):
            return True
        if text in ("no", "false"):
            return False
        raise FieldError(f"field {f.name}: {value!r} is not Yes/No/True/False")
    if jt is JudgmentType.ENUM:
        text = str(value).strip()
        labels = f.labels or ()
        if text in labels:
            return text
        folded = {label.strip().casefold(): label for label in labels}
        if text.casefold() in folded:
            return folded[text.casefold()]
        raise FieldError(f"field {f.name}: {value!r} is not one of {', '.join(labels)}")
    if jt is JudgmentType.INT:
        number = _to_number(f, value)
        if not float(number).is_integer():
            raise FieldError(f"field {f.name}: {value!r} is not an integer")
        result = int(number)
        if f.labels is not None and str(result) not in f.labels:
            raise FieldError(f"field {f.name}: {result} is not one of {', '.join(f.labels)}")
        return result
    number = float(_to_number(f, value))
    return number


def _to_number(f: OutputField, value: Any) -> float | int:
    if isinstance(value, bool):
        raise FieldError(f"field {f.name}: {value!r} is not a number")
    if isinstance(value, int | float):
        number: float | int = value
    else:
        text = str(value).strip()
        try:
            number = int(text) if re.fullmatch(r"-?\d+", text) else float(text)
        except ValueError:
            raise FieldError(f"field {f.name}: {value!r} is not a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise FieldError(f"field {f.name}: {value!r} is not a finite number")
    return number
