"""Output specs: what a judge must answer, as ordered fields in one response format.

:func:`build_output_spec` makes a judge's :class:`OutputSpec` from its config and the fields its kind
declares (:meth:`jurist.judges.base.JudgeKind.output_fields`, with the helpers here); the spec then gives

* ``json_schema()``: the JSON schema of the answer object (documentation, OpenAI-style servers);
* ``regex()`` / ``max_tokens()`` / ``instructions()`` / ``render_answer()``: from its response format
  (:mod:`jurist.answer.formats`);
* ``constraint(kinds)``: the neutral :class:`~jurist.records.Constraint` to send, of the first
  kind in ``kinds`` (what the backend accepts, in its order of preference) that the format can express;
* ``fingerprint()``: a short hash of everything that shapes the answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.answer.fields import OutputField, labels_for
from jurist.answer.format_base import AnswerFormat, LabelContext
from jurist.answer.formats import answer_format
from jurist.config.models import JudgeConfig
from jurist.config.types import JudgmentType, ResponseFormat, ScoringMode
from jurist.records import Constraint, ConstraintKind


@dataclass(frozen=True)
class OutputSpec:
    """The ordered fields of one judge's answer in one response format."""

    fields: tuple[OutputField, ...]
    response_format: ResponseFormat
    guided: bool = True

    @property
    def format(self) -> AnswerFormat:
        """The object that owns the response format (its grammar, instructions and parsing)."""
        return answer_format(self.response_format)

    @property
    def judgment_fields(self) -> tuple[OutputField, ...]:
        return tuple(f for f in self.fields if f.is_judgment)

    def field(self, name: str) -> OutputField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the answer object: properties in order, all required, nothing else."""
        return {
            "type": "object",
            "properties": {f.name: _field_json_schema(f) for f in self.fields},
            "required": [f.name for f in self.fields],
            "additionalProperties": False,
        }

    def regex(self) -> str | None:
        """The compact regex of one answer; None when the format has none (RAW)."""
        return self.format.regex(self.fields)

    def max_answer_bytes(self) -> int:
        """The longest answer the format admits, in UTF-8 bytes."""
        return self.format.max_answer_bytes(self.fields)

    def max_tokens(self) -> int:
        """Upper bound on the answer's tokens: every token carries at least one byte (+1 for the
        end-of-sequence token)."""
        return self.max_answer_bytes() + 1

    def instructions(self) -> str:
        return self.format.instructions(self.fields)

    def render_answer(self, values: Mapping[str, Any]) -> str:
        return self.format.render_answer(self.fields, values)

    def label_context(self, f: OutputField) -> LabelContext:
        return self.format.label_context(self.fields, f)

    def value_offset(self, f: OutputField, raw: str) -> int | None:
        return self.format.value_offset(self.fields, f, raw)

    def constraint(self, kinds: Sequence[ConstraintKind]) -> Constraint | None:
        """The constraint to send to a backend accepting ``kinds`` (None: unguided, or no kind fits)."""
        if not self.guided:
            return None
        for kind in kinds:
            if kind == "regex":
                regex = self.regex()
                if regex is not None:
                    return Constraint(regex=regex)
            elif kind == "json_schema" and self.format.schema_is_answer:
                return Constraint(json_schema=self.json_schema())
        return None

    def fingerprint(self) -> str:
        """A short hash of everything that shapes the answer (fields, format, constraint)."""
        payload = {
            "format": self.response_format.value,
            "guided": self.guided,
            "schema": self.json_schema(),
            "regex": self.regex(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _field_json_schema(f: OutputField) -> dict[str, Any]:
    if f.labels is not None and f.judgment_type is JudgmentType.INT:
        return {"type": "integer", "enum": [int(label) for label in f.labels]}
    if f.labels is not None:
        return {"type": "string", "enum": list(f.labels)}
    if f.judgment_type is JudgmentType.INT:
        return {"type": "integer"}
    if f.judgment_type is JudgmentType.FLOAT:
        return {"type": "number"}
    return {"type": "string", "maxLength": f.max_chars}


def build_output_spec(config: JudgeConfig, fields: Sequence[OutputField]) -> OutputSpec:
    """A judge config's output spec: ``fields`` (its kind declares them:
    :meth:`jurist.judges.base.JudgeKind.output_fields`) in its response format, guided unless switched
    off."""
    jp = config.judge_params
    guided = jp.use_guided_decoding and answer_format(jp.response_format).constrained
    return OutputSpec(tuple(fields), jp.response_format, guided)


def explanation_field(name: str, description: str, cap: int, criterion: str = "judgment") -> OutputField:
    """An explanation field, written before the judgment it explains (at most ``cap`` characters)."""
    return OutputField(
        name, "explanation", JudgmentType.TEXT, description, max_chars=cap, criterion=criterion
    )


def leading_explanation(config: JudgeConfig) -> tuple[OutputField, ...]:
    """The explanation a one-judgment judge writes first, if it asks for one (LOGPROBS scoring reads the
    judgment after one prefill: nothing is written before it)."""
    jp = config.judge_params
    if jp.include_explanation and jp.scoring is ScoringMode.GENERATE:
        return (explanation_field("explanation", "why you judged as you did", jp.max_explanation_chars),)
    return ()


def judgment_field(config: JudgeConfig) -> OutputField:
    """The judgment field of a one-judgment judge: ``judge_params``' type and scores."""
    jp = config.judge_params
    return OutputField(
        "judgment",
        "judgment",
        jp.judgment_type,
        "your judgment",
        labels_for(jp.judgment_type, jp.judgment_scores),
        jp.judgment_scores,
        max_chars=jp.max_explanation_chars,
    )
