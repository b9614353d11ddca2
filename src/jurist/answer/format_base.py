"""What a response format is: one object per format owns everything that format means.

Each :class:`AnswerFormat` (JSON, XML, RAW) knows, for an ordered tuple of
:class:`~jurist.answer.fields.OutputField`:

* ``regex``: a compact regular expression for exactly one well-formed answer, with fixed separators (no
  optional whitespace) and length-capped strings; what guided decoding enforces (None for RAW, which has
  nothing to delimit). Because every string is capped, every answer that follows it ends within
  ``max_answer_bytes`` bytes, hence within as many tokens;
* ``instructions``: the text that tells the model the exact shape to write;
* ``render_answer``: a well-formed answer for given values (few-shot examples, LOGPROBS parsing);
* ``extract``: the raw value of every field from an answer (typed later by
  :func:`~jurist.answer.values.convert_value`);
* ``label_context`` / ``value_offset``: where a label field's value sits in an answer, for reading label
  probabilities (the LOGPROBS prefix, and the token of a generated answer where a value begins).

The formats themselves are in :mod:`jurist.answer.formats` (JSON, XML, RAW, and the table of every format)
and in ``answer/<name>_format.py`` (one module per further format); this module is what they all import,
so that the table can import them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from jurist.answer.fields import OutputField
from jurist.config.types import JudgmentType, ResponseFormat

Fields = Sequence[OutputField]


@dataclass(frozen=True)
class LabelContext:
    """How a label sits in an answer: the fixed text before it, after it, and each label's text."""

    prefix: str
    suffix: str
    texts: Mapping[str, str]

    @property
    def needs_suffix(self) -> bool:
        """True when some label's text is a prefix of another's (the suffix then tells them apart)."""
        values = list(self.texts.values())
        return any(a != b and b.startswith(a) for a in values for b in values)


class AnswerFormat(ABC):
    """What one response format means. Stateless: one shared instance per format."""

    kind: ClassVar[ResponseFormat]
    delimits_fields: ClassVar[bool] = True
    """Whether an answer can hold one value per field (JSON, XML); RAW holds one judgment and its reason."""
    schema_is_answer: ClassVar[bool] = False
    """Whether the answer is the JSON object the fields' JSON schema describes (JSON only)."""

    # ---------------------------------------------------------------------------------- grammar
    @abstractmethod
    def regex(self, fields: Fields) -> str | None:
        """The full-match regex of one answer; None when the format cannot be constrained."""

    @abstractmethod
    def max_answer_bytes(self, fields: Fields) -> int:
        """The longest answer the format admits for these fields, in UTF-8 bytes."""

    @property
    def constrained(self) -> bool:
        """Whether guided decoding can enforce the format (it has a regex)."""
        return True

    # ----------------------------------------------------------------------------- instructions
    @abstractmethod
    def instructions(self, fields: Fields) -> str:
        """Tells the model the exact shape of its answer."""

    @abstractmethod
    def render_answer(self, fields: Fields, values: Mapping[str, Any]) -> str:
        """A well-formed answer holding ``values`` (each in the field's type or as its label)."""

    def shown_label(self, f: OutputField, label: str) -> str:
        """How a label is shown to the model in the instructions."""
        return label

    def describe(self, f: OutputField, named: bool = True) -> str:
        """What a field's value must be, in words (``named``: start with the field's description)."""
        if f.kind == "explanation":
            return f"{f.description}, in at most {f.max_chars} characters"
        prefix = f"{f.description}; " if named else ""
        if f.labels is not None:
            return f"{prefix}one of {', '.join(self.shown_label(f, label) for label in f.labels)}"
        if f.judgment_type is JudgmentType.INT:
            return f"{prefix}an integer"
        if f.judgment_type is JudgmentType.FLOAT:
            return f"{prefix}a number"
        return f"{prefix}text, at most {f.max_chars} characters"

    # ---------------------------------------------------------------------------------- reading
    @abstractmethod
    def extract(self, text: str, fields: Fields) -> dict[str, Any]:
        """The raw value of every field in an answer; :class:`FieldError` when one is absent."""

    @abstractmethod
    def label_context(self, fields: Fields, f: OutputField) -> LabelContext:
        """The answer's text before and after label field ``f`` when it is the first value to write."""

    def value_offset(self, fields: Fields, f: OutputField, raw: str) -> int | None:
        """Where field ``f``'s value begins in a well-formed answer (None when it cannot be found)."""
        return None
