"""The response formats JSON, XML and RAW, and the table of every format.

Each format is an :class:`~jurist.answer.format_base.AnswerFormat` (what each of its methods means is
written there). This is the one place where response formats are told apart; :func:`answer_format` maps a
:class:`~jurist.config.types.ResponseFormat` to its object, from ``_FORMATS``: the three formats here and
those with a module of their own (``answer/<name>_format.py``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from jurist.answer.fields import OutputField
from jurist.answer.format_base import AnswerFormat, Fields, LabelContext
from jurist.answer.jsontext import UTF8_MAX, first_json_object, json_string_max_bytes, json_string_regex
from jurist.answer.values import (
    FLOAT_MAX_BYTES,
    FLOAT_RE,
    INT_MAX_BYTES,
    INT_RE,
    FieldError,
    float_text,
    is_number,
    label_text,
    placeholder_value,
)
from jurist.config.types import JudgmentType, ResponseFormat

_XML_CHAR = r"[^<\x00-\x08\x0b\x0c\x0e-\x1f]"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _re_literal(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")


def _alternation(options: Sequence[str]) -> str:
    # longest first, so that no backend's leftmost-alternative matching cuts a label short
    ordered = sorted(options, key=len, reverse=True)
    return "(?:" + "|".join(_re_literal(o) for o in ordered) + ")"


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Delimited(AnswerFormat):
    """JSON and XML: one delimited value per field, in order."""

    header: ClassVar[str]
    example_separator: ClassVar[str]

    def key(self, f: OutputField) -> str:
        raise NotImplementedError

    def _label_answers(self, f: OutputField) -> list[str]:
        """Each of the field's labels as the answer writes it."""
        raise NotImplementedError

    def _text_regex(self, f: OutputField) -> str:
        """A free-text value, bounded by the field's ``max_chars``."""
        raise NotImplementedError

    def _text_max_bytes(self, f: OutputField) -> int:
        raise NotImplementedError

    def _value_regex(self, f: OutputField) -> str:
        if f.labels is not None:
            return _alternation(self._label_answers(f))
        if f.judgment_type is JudgmentType.INT:
            return INT_RE
        if f.judgment_type is JudgmentType.FLOAT:
            return FLOAT_RE
        return self._text_regex(f)

    def _value_max_bytes(self, f: OutputField) -> int:
        if f.labels is not None:
            return max(len(text.encode()) for text in self._label_answers(f))
        if f.judgment_type is JudgmentType.INT:
            return INT_MAX_BYTES
        if f.judgment_type is JudgmentType.FLOAT:
            return FLOAT_MAX_BYTES
        return self._text_max_bytes(f)

    def instructions(self, fields: Fields) -> str:
        lines = [self.header]
        lines += [f"- {self.key(f)}: {self.describe(f)}" for f in fields]
        example = self.render_answer(fields, {f.name: placeholder_value(f) for f in fields})
        lines.append(f"Example:{self.example_separator}{example}")
        return "\n".join(lines)


class JsonFormat(_Delimited):
    """A JSON object with exactly the fields, in order: ``{"explanation": "...", "judgment": "Yes"}``."""

    kind = ResponseFormat.JSON
    schema_is_answer = True
    header = "Respond with only a JSON object with exactly these keys, in this order:"
    example_separator = " "

    def key(self, f: OutputField) -> str:
        return f'"{f.name}"'

    def shown_label(self, f: OutputField, label: str) -> str:
        return label if f.judgment_type is JudgmentType.INT else f'"{label}"'

    @staticmethod
    def _quoted(f: OutputField) -> bool:
        """Whether the field's labels are JSON strings (every label type but INT)."""
        return f.judgment_type is not JudgmentType.INT

    def _label_answers(self, f: OutputField) -> list[str]:
        quoted = self._quoted(f)
        return [json.dumps(label, ensure_ascii=False) if quoted else label for label in f.labels or ()]

    def _text_regex(self, f: OutputField) -> str:
        return json_string_regex(0, f.max_chars)

    def _text_max_bytes(self, f: OutputField) -> int:
        return json_string_max_bytes(f.max_chars)

    def regex(self, fields: Fields) -> str:
        parts = [f"{_re_literal(json.dumps(f.name))}: {self._value_regex(f)}" for f in fields]
        return r"\{" + ", ".join(parts) + r"\}"

    def max_answer_bytes(self, fields: Fields) -> int:
        total = sum(len(json.dumps(f.name)) + 2 + self._value_max_bytes(f) for f in fields)
        return total + 2 + 2 * (len(fields) - 1)

    def render_answer(self, fields: Fields, values: Mapping[str, Any]) -> str:
        return (
            "{"
            + ", ".join(f"{json.dumps(f.name)}: {self._value_text(f, values.get(f.name))}" for f in fields)
            + "}"
        )

    @staticmethod
    def _value_text(f: OutputField, value: Any) -> str:
        text = label_text(f, value)
        if is_number(f):
            try:
                number = float(text)
            except ValueError:
                return json.dumps(text, ensure_ascii=False)
            if f.judgment_type is JudgmentType.INT and number.is_integer():
                return str(int(number))
            return float_text(number)
        return json.dumps(text, ensure_ascii=False)

    def extract(self, text: str, fields: Fields) -> dict[str, Any]:
        obj = first_json_object(text)
        if not isinstance(obj, dict):
            raise FieldError("no JSON object in the response")
        missing = [f.name for f in fields if f.name not in obj]
        if missing:
            raise FieldError(f"JSON answer lacks field {', '.join(missing)}")
        return obj

    def label_context(self, fields: Fields, f: OutputField) -> LabelContext:
        assert f.labels is not None
        quoted = self._quoted(f)
        prefix = "{" + json.dumps(f.name) + ": " + ('"' if quoted else "")
        suffix = '"' if quoted else ("}" if f is fields[-1] else ",")
        texts = {
            label: json.dumps(label, ensure_ascii=False)[1:-1] if quoted else label for label in f.labels
        }
        return LabelContext(prefix, suffix, texts)

    def value_offset(self, fields: Fields, f: OutputField, raw: str) -> int | None:
        # the key with its quotes cannot occur inside another field's string: quotes there are escaped
        key = json.dumps(f.name) + ": "
        at = raw.find(key)
        if at < 0:
            return None
        return at + len(key) + (1 if self._quoted(f) else 0)


class XmlFormat(_Delimited):
    """One tag per field, in order, one per line (``<judgment>Yes</judgment>``)."""

    kind = ResponseFormat.XML
    header = "Respond with only these XML tags, in this order, one per line:"
    example_separator = "\n"

    def key(self, f: OutputField) -> str:
        return f"<{f.name}>"

    def _label_answers(self, f: OutputField) -> list[str]:
        return [xml_escape(label) for label in f.labels or ()]

    def _text_regex(self, f: OutputField) -> str:
        return f"{_XML_CHAR}{{0,{f.max_chars}}}"

    def _text_max_bytes(self, f: OutputField) -> int:
        return f.max_chars * UTF8_MAX

    def regex(self, fields: Fields) -> str:
        return r"\n".join(f"<{f.name}>{self._value_regex(f)}</{f.name}>" for f in fields)

    def max_answer_bytes(self, fields: Fields) -> int:
        total = sum(2 * len(f.name) + 5 + self._value_max_bytes(f) for f in fields)
        return total + len(fields) - 1

    def render_answer(self, fields: Fields, values: Mapping[str, Any]) -> str:
        return "\n".join(
            f"<{f.name}>{xml_escape(label_text(f, values.get(f.name)))}</{f.name}>" for f in fields
        )

    def extract(self, text: str, fields: Fields) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields:
            match = re.search(rf"<{re.escape(f.name)}>(.*?)</{re.escape(f.name)}>", text, re.DOTALL)
            if match is None:
                raise FieldError(f"XML answer lacks <{f.name}>")
            out[f.name] = html.unescape(match.group(1)).strip()
        return out

    def label_context(self, fields: Fields, f: OutputField) -> LabelContext:
        assert f.labels is not None
        return LabelContext(f"<{f.name}>", f"</{f.name}>", {label: xml_escape(label) for label in f.labels})

    def value_offset(self, fields: Fields, f: OutputField, raw: str) -> int | None:
        # no text holds "<": the first occurrence of the tag is the field's own
        tag = f"<{f.name}>"
        at = raw.find(tag)
        return None if at < 0 else at + len(tag)


class RawFormat(AnswerFormat):
    """Free text: the judgment is the last label (or number) the answer names; the explanation is the rest.

    Holds one judgment (and its explanation), so it cannot serve a rubric; it has no grammar, so guided
    decoding does not apply.
    """

    kind = ResponseFormat.RAW
    delimits_fields = False

    @property
    def constrained(self) -> bool:
        return False

    def regex(self, fields: Fields) -> None:
        return None

    def max_answer_bytes(self, fields: Fields) -> int:
        total = 0
        for f in fields:
            if f.labels is not None:
                total += max(len(label.encode()) for label in f.labels)
            elif f.judgment_type is JudgmentType.INT and f.is_judgment:
                total += INT_MAX_BYTES
            elif f.judgment_type is JudgmentType.FLOAT and f.is_judgment:
                total += FLOAT_MAX_BYTES
            else:
                total += f.max_chars * UTF8_MAX
        return total + 16 * len(fields)

    def instructions(self, fields: Fields) -> str:
        judgment = _judgment(fields)
        wanted = self.describe(judgment, named=judgment.criterion != "judgment")
        if any(not f.is_judgment for f in fields):
            return (
                "First explain your judgment briefly. Then, on the last line, write only your "
                f"judgment: {wanted}"
            )
        return f"Respond with only your judgment: {wanted}"

    def render_answer(self, fields: Fields, values: Mapping[str, Any]) -> str:
        judgment = _judgment(fields)
        text = label_text(judgment, values.get(judgment.name))
        explanations = [values.get(f.name) for f in fields if not f.is_judgment]
        if explanations and explanations[0]:
            return f"{explanations[0]}\n{text}"
        return text

    def extract(self, text: str, fields: Fields) -> dict[str, Any]:
        judgment = _judgment(fields)
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
                pattern = rf"(?<![A-Za-z0-9_]){re.escape(label)}(?![A-Za-z0-9_])"
                for match in re.finditer(pattern, text, re.IGNORECASE):
                    if match.start() > best:
                        best, value, cut = match.start(), match.group(0), match.start()
        else:
            numbers = list(_NUMBER.finditer(text))
            if numbers:
                value, cut = numbers[-1].group(0), numbers[-1].start()
        if value is None:
            raise FieldError(f"no {judgment.judgment_type.value} judgment found in the response")
        out: dict[str, Any] = {judgment.name: value}
        for f in fields:
            if not f.is_judgment:
                out[f.name] = text[:cut].strip()
        return out

    def label_context(self, fields: Fields, f: OutputField) -> LabelContext:
        assert f.labels is not None
        return LabelContext("", "", {label: label for label in f.labels})


def _judgment(fields: Fields) -> OutputField:
    return next(f for f in fields if f.is_judgment)


_FORMATS: Mapping[ResponseFormat, AnswerFormat] = MappingProxyType(
    {fmt.kind: fmt for fmt in (JsonFormat(), XmlFormat(), RawFormat())}
)


def answer_format(kind: ResponseFormat) -> AnswerFormat:
    """The object that owns a response format."""
    return _FORMATS[kind]
