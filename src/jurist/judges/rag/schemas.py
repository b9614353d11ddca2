"""The answer of each RAG step: a JSON shape with bounded lengths, as a regex, a JSON schema and a reader.

Three shapes, each written compactly (fixed separators, no optional whitespace, capped strings) so that
guided decoding enforces it and every answer that follows it ends within :meth:`StepSchema.max_bytes`:

* :class:`Statements`: ``{"statements": ["...", ...]}``, at most ``max_items`` non-empty statements of at
  most ``max_chars`` characters (an empty list when there is nothing to state);
* :class:`Verdicts`: ``{"verdicts": [{"index": 1, "reason": "...", "verdict": "Yes"}, ...]}``, one entry per
  numbered item. The regex fixes the entries to the indices 1..n in order; the JSON schema (OpenAI-style
  servers) can only bound them, and an unconstrained model can write anything, so the reader enforces the
  rule itself: exactly one entry per 1-based index, none missing, repeated or out of range;
* :class:`Rating`: ``{"reason": "...", "score": 4}``, an integer from 1 to ``scale``.

Readers accept what an unconstrained model writes too (keys in any order, extra keys, JSON booleans or
Yes/No, numbers as text); anything else raises :class:`InvalidAnswer`, whose message says what is wrong.
The reason comes before the verdict in every constrained answer. JSON is the only format: these shapes
hold lists, which jurist's XML format does not.
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurist.answer.jsontext import first_json_object, json_string_max_bytes, json_string_regex
from jurist.records import Constraint, ConstraintKind

YES_NO = ("Yes", "No")


class InvalidAnswer(ValueError):
    """A step's answer cannot be read as its shape, or breaks a rule of it (the message says which)."""


def _key(name: str) -> str:
    return f'"{name}": '


def extract_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (the whole text, else the first ``{`` that starts one)."""
    found = first_json_object(text)
    if not isinstance(found, dict):
        raise InvalidAnswer("no JSON object in the answer")
    return found


def _integer(value: Any, what: str) -> int:
    """An integer written as a number or as text ('3', 3, 3.0); :class:`InvalidAnswer` otherwise."""
    if isinstance(value, bool):
        raise InvalidAnswer(f"{what} {value!r} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise InvalidAnswer(f"{what} {value!r} is not an integer")


def _yes_no(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().strip(".").lower()
        if text in ("yes", "true"):
            return True
        if text in ("no", "false"):
            return False
    raise InvalidAnswer(f"{what} {value!r} is not Yes or No")


def _reason(obj: dict[str, Any]) -> str | None:
    value = obj.get("reason")
    return value.strip() if isinstance(value, str) else None


class StepSchema(ABC):
    """The shape of one step's answer."""

    @abstractmethod
    def regex(self) -> str:
        """The full-match regex of one well-formed answer."""

    @abstractmethod
    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the answer object."""

    @abstractmethod
    def max_bytes(self) -> int:
        """The longest answer the regex admits, in UTF-8 bytes."""

    @abstractmethod
    def instructions(self) -> str:
        """Tells the model the exact shape to write."""

    @abstractmethod
    def read(self, obj: dict[str, Any]) -> Any:
        """The answer's value (:class:`InvalidAnswer` when it has none)."""

    def max_tokens(self) -> int:
        """Every token carries at least one byte (+1 for the end-of-sequence token)."""
        return self.max_bytes() + 1

    def constraint(self, kinds: Sequence[ConstraintKind]) -> Constraint | None:
        """The constraint of the first of ``kinds`` the shape can be held to (None: no kind fits)."""
        for kind in kinds:
            if kind == "regex":
                return Constraint(regex=self.regex())
            if kind == "json_schema":
                return Constraint(json_schema=self.json_schema())
        return None

    def fingerprint(self) -> str:
        payload = {"regex": self.regex(), "schema": self.json_schema()}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Statements(StepSchema):
    """A list of at most ``max_items`` statements of 1 to ``max_chars`` characters each."""

    max_items: int
    max_chars: int

    def regex(self) -> str:
        item = json_string_regex(1, self.max_chars)
        items = f"(?:{item}(?:, {item}){{0,{self.max_items - 1}}})?"
        return r"\{" + _key("statements") + r"\[" + items + r"\]\}"

    def json_schema(self) -> dict[str, Any]:
        item = {"type": "string", "minLength": 1, "maxLength": self.max_chars}
        return {
            "type": "object",
            "properties": {"statements": {"type": "array", "items": item, "maxItems": self.max_items}},
            "required": ["statements"],
            "additionalProperties": False,
        }

    def max_bytes(self) -> int:
        frame = len('{"statements": []}')
        return frame + self.max_items * json_string_max_bytes(self.max_chars) + 2 * (self.max_items - 1)

    def instructions(self) -> str:
        return (
            'Respond with only a JSON object: {"statements": ["<statement>", "<statement>"]}, with at most '
            f"{self.max_items} statements of at most {self.max_chars} characters each, or "
            '{"statements": []} when there is none.'
        )

    def read(self, obj: dict[str, Any]) -> tuple[str, ...]:
        """The non-blank statements, stripped (blank ones say nothing and are left out)."""
        items = obj.get("statements")
        if not isinstance(items, list):
            raise InvalidAnswer("the answer has no list of statements")
        if not all(isinstance(item, str) for item in items):
            raise InvalidAnswer("a statement is not a string")
        return tuple(item.strip() for item in items if item.strip())


@dataclass(frozen=True)
class Verdicts(StepSchema):
    """A Yes/No verdict for each of ``count`` numbered items, one entry per 1-based index."""

    count: int
    reason_chars: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("a verdict list needs at least one item")

    def _entry(self, index: str) -> str:
        reason = f", {_key('reason')}{json_string_regex(0, self.reason_chars)}" if self.reason_chars else ""
        verdict = "(?:" + "|".join(f'"{label}"' for label in YES_NO) + ")"
        return r"\{" + _key("index") + index + reason + ", " + _key("verdict") + verdict + r"\}"

    def regex(self) -> str:
        entries = ", ".join(self._entry(str(i)) for i in range(1, self.count + 1))
        return r"\{" + _key("verdicts") + r"\[" + entries + r"\]\}"

    def json_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {"index": {"type": "integer", "minimum": 1, "maximum": self.count}}
        if self.reason_chars:
            properties["reason"] = {"type": "string", "maxLength": self.reason_chars}
        properties["verdict"] = {"type": "string", "enum": list(YES_NO)}
        entry = {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }
        verdicts = {"type": "array", "items": entry, "minItems": self.count, "maxItems": self.count}
        return {
            "type": "object",
            "properties": {"verdicts": verdicts},
            "required": ["verdicts"],
            "additionalProperties": False,
        }

    def max_bytes(self) -> int:
        reason = len(', "reason": ') + json_string_max_bytes(self.reason_chars) if self.reason_chars else 0
        digits = len(str(self.count))
        entry = len('{"index": , "verdict": "Yes"}') + digits + reason
        return len('{"verdicts": []}') + self.count * entry + 2 * (self.count - 1)

    def instructions(self) -> str:
        reason = f'"reason": "<why, at most {self.reason_chars} characters>", ' if self.reason_chars else ""
        entry = f'{{"index": <number>, {reason}"verdict": "Yes" or "No"}}'
        return (
            f"Respond with only a JSON object holding exactly one entry for each number from 1 to "
            f'{self.count}, in order: {{"verdicts": [{entry}, ...]}}'
        )

    def read(self, obj: dict[str, Any]) -> tuple[bool, ...]:
        """The verdicts in index order; :class:`InvalidAnswer` ("invalid verdict: ...") unless there is
        exactly one entry per index 1..count."""
        entries = obj.get("verdicts")
        if not isinstance(entries, list):
            raise InvalidAnswer("the answer has no list of verdicts")
        found: dict[int, bool] = {}
        for entry in entries:
            if not isinstance(entry, dict) or "index" not in entry or "verdict" not in entry:
                raise InvalidAnswer("invalid verdict: an entry lacks its index or its verdict")
            index = _integer(entry["index"], "invalid verdict: index")
            if not 1 <= index <= self.count:
                raise InvalidAnswer(f"invalid verdict: index {index} is out of range 1-{self.count}")
            if index in found:
                raise InvalidAnswer(f"invalid verdict: index {index} appears more than once")
            found[index] = _yes_no(entry["verdict"], f"invalid verdict: verdict for index {index}")
        missing = [i for i in range(1, self.count + 1) if i not in found]
        if missing:
            raise InvalidAnswer(f"invalid verdict: no entry for index {', '.join(map(str, missing))}")
        return tuple(found[i] for i in range(1, self.count + 1))


@dataclass(frozen=True)
class Rating(StepSchema):
    """An integer rating from 1 to ``scale``, after its reason."""

    scale: int
    reason_chars: int

    def __post_init__(self) -> None:
        if self.scale < 2:
            raise ValueError(f"a rating scale needs at least 2 points, got {self.scale}")

    def regex(self) -> str:
        numbers = sorted((str(n) for n in range(1, self.scale + 1)), key=len, reverse=True)
        reason = _key("reason") + json_string_regex(0, self.reason_chars) + ", " if self.reason_chars else ""
        return r"\{" + reason + _key("score") + "(?:" + "|".join(numbers) + r")\}"

    def json_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        if self.reason_chars:
            properties["reason"] = {"type": "string", "maxLength": self.reason_chars}
        properties["score"] = {"type": "integer", "minimum": 1, "maximum": self.scale}
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    def max_bytes(self) -> int:
        reason = len('"reason": , ') + json_string_max_bytes(self.reason_chars) if self.reason_chars else 0
        return len('{"score": }') + len(str(self.scale)) + reason

    def instructions(self) -> str:
        reason = f'"reason": "<why, at most {self.reason_chars} characters>", ' if self.reason_chars else ""
        return f'Respond with only a JSON object: {{{reason}"score": <an integer from 1 to {self.scale}>}}'

    def read(self, obj: dict[str, Any]) -> tuple[int, str | None]:
        """The rating and its reason; :class:`InvalidAnswer` for a missing or out-of-range score."""
        if "score" not in obj:
            raise InvalidAnswer("the answer has no score")
        rating = _integer(obj["score"], "invalid verdict: score")
        if not 1 <= rating <= self.scale:
            raise InvalidAnswer(f"invalid verdict: score {rating} is outside 1-{self.scale}")
        return rating, _reason(obj)
