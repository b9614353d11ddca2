"""Output schemas: what a judge must answer, as fields, a JSON schema, a compact regex and a token bound.

For every judge this module derives :class:`OutputSpec`: the ordered output fields (an explanation
before the judgment it explains), and from them

* ``json_schema()``: the JSON schema of the answer object (documentation, OpenAI-style servers);
* ``regex()``: a compact regular expression for exactly one well-formed answer in the judge's response
  format, with fixed separators (no optional whitespace) and length-capped strings. This is what guided
  decoding enforces: it admits no whitespace loops and, because every string is capped, every answer that
  follows it ends within ``max_tokens()`` tokens;
* ``max_tokens()``: an upper bound on the answer's length in tokens (every token carries at least one
  byte, so the regex's longest match in UTF-8 bytes bounds it);
* ``instructions()``: the text that tells the model the exact shape to write;
* ``render_answer(values)``: a well-formed answer for given values (few-shot examples).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jurist.config import JudgeConfig, JudgmentType, ResponseFormat, ScoringMode

BOOL_LABELS = ("Yes", "No")
MAX_INT_DIGITS = 9
MAX_FRACTION_DIGITS = 6
# JSON string body: any character but quote, backslash and control characters, or one of a few escapes.
_JSON_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/nt])'
_XML_CHAR = r"[^<\x00-\x08\x0b\x0c\x0e-\x1f]"
_UTF8_MAX = 4  # bytes per character, worst case


@dataclass(frozen=True)
class OutputField:
    """One field of a judge's answer.

    ``kind`` is ``judgment`` or ``explanation``. ``labels`` is the closed set of allowed values when
    there is one (BOOL, ENUM, INT with judgment_scores). ``scores`` maps labels to scores.
    """

    name: str
    kind: Literal["judgment", "explanation"]
    judgment_type: JudgmentType
    description: str = ""
    labels: tuple[str, ...] | None = None
    scores: Mapping[str, float | None] | None = None
    max_chars: int = 400
    criterion: str = "judgment"

    @property
    def is_judgment(self) -> bool:
        return self.kind == "judgment"

    @property
    def arrow_kind(self) -> str:
        """The Arrow type of the field's column: bool, int64, float64 or string."""
        return {
            JudgmentType.BOOL: "bool",
            JudgmentType.INT: "int64",
            JudgmentType.FLOAT: "float64",
        }.get(self.judgment_type, "string")


@dataclass(frozen=True)
class OutputSpec:
    """The ordered fields of one judge's answer in one response format."""

    fields: tuple[OutputField, ...]
    response_format: ResponseFormat
    guided: bool = True

    @property
    def judgment_fields(self) -> tuple[OutputField, ...]:
        return tuple(f for f in self.fields if f.is_judgment)

    def field(self, name: str) -> OutputField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    # ---------------------------------------------------------------------------------- JSON schema
    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the answer object: properties in order, all required, nothing else."""
        properties: dict[str, Any] = {}
        for f in self.fields:
            properties[f.name] = _field_json_schema(f)
        return {
            "type": "object",
            "properties": properties,
            "required": [f.name for f in self.fields],
            "additionalProperties": False,
        }

    # ---------------------------------------------------------------------------------------- regex
    def regex(self) -> str | None:
        """The compact regex of one answer; None for RAW (nothing to delimit)."""
        if self.response_format is ResponseFormat.RAW:
            return None
        if self.response_format is ResponseFormat.JSON:
            parts = [f"{_re_literal(json.dumps(f.name))}: {_json_value_regex(f)}" for f in self.fields]
            return r"\{" + ", ".join(parts) + r"\}"
        return r"\n".join(f"<{f.name}>{_xml_value_regex(f)}</{f.name}>" for f in self.fields)

    def max_answer_bytes(self) -> int:
        """The longest answer the regex admits, in UTF-8 bytes."""
        if self.response_format is ResponseFormat.RAW:
            return sum(_value_max_bytes(f, "raw") for f in self.fields) + 16 * len(self.fields)
        total = 0
        for f in self.fields:
            if self.response_format is ResponseFormat.JSON:
                total += len(json.dumps(f.name)) + 2 + _value_max_bytes(f, "json")
            else:
                total += 2 * len(f.name) + 5 + _value_max_bytes(f, "xml")
        separators = 2 + 2 * (len(self.fields) - 1) if self.response_format is ResponseFormat.JSON else 0
        newlines = len(self.fields) - 1 if self.response_format is ResponseFormat.XML else 0
        return total + separators + newlines

    def max_tokens(self) -> int:
        """Upper bound on the answer's tokens (+1 for the end-of-sequence token)."""
        return self.max_answer_bytes() + 1

    # --------------------------------------------------------------------------------- instructions
    def instructions(self) -> str:
        """Tells the model the exact shape of its answer."""
        lines: list[str] = []
        if self.response_format is not ResponseFormat.RAW:
            json_format = self.response_format is ResponseFormat.JSON
            if json_format:
                lines.append("Respond with only a JSON object with exactly these keys, in this order:")
            else:
                lines.append("Respond with only these XML tags, in this order, one per line:")
            for f in self.fields:
                key = f'"{f.name}"' if json_format else f"<{f.name}>"
                lines.append(f"- {key}: {_describe_value(f, 'json' if json_format else 'xml')}")
            example = self.render_answer({f.name: _placeholder_value(f) for f in self.fields})
            lines.append(("Example: " if json_format else "Example:\n") + example)
        else:
            judgment = self.judgment_fields[0]
            explanation = [f for f in self.fields if not f.is_judgment]
            if explanation:
                lines.append(
                    "First explain your judgment briefly. Then, on the last line, write only your "
                    f"judgment: {_describe_value(judgment, 'raw')}"
                )
            else:
                lines.append(f"Respond with only your judgment: {_describe_value(judgment, 'raw')}")
        return "\n".join(lines)

    def render_answer(self, values: Mapping[str, Any]) -> str:
        """A well-formed answer holding ``values`` (each given in the field's type or as its label)."""
        if self.response_format is ResponseFormat.JSON:
            items = []
            for f in self.fields:
                items.append(f"{json.dumps(f.name)}: {_json_value_text(f, values.get(f.name))}")
            return "{" + ", ".join(items) + "}"
        if self.response_format is ResponseFormat.XML:
            return "\n".join(
                f"<{f.name}>{_xml_escape(_label_text(f, values.get(f.name)))}</{f.name}>" for f in self.fields
            )
        judgment = self.judgment_fields[0]
        text = _label_text(judgment, values.get(judgment.name))
        explanations = [values.get(f.name) for f in self.fields if not f.is_judgment]
        if explanations and explanations[0]:
            return f"{explanations[0]}\n{text}"
        return text

    def fingerprint(self) -> str:
        """A short hash of everything that shapes the answer (fields, format, constraint)."""
        payload = {
            "format": self.response_format.value,
            "guided": self.guided,
            "schema": self.json_schema(),
            "regex": self.regex(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------- building


def labels_for(
    judgment_type: JudgmentType, scores: Mapping[str, float | None] | None
) -> tuple[str, ...] | None:
    """The closed label set of a judgment, or None when its values are open (FLOAT, TEXT, INT w/o scale)."""
    if judgment_type is JudgmentType.BOOL:
        return BOOL_LABELS
    if judgment_type is JudgmentType.ENUM:
        return tuple(scores or ())
    if judgment_type is JudgmentType.INT and scores:
        return tuple(str(int(label)) for label in scores)
    return None


def build_output_spec(config: JudgeConfig) -> OutputSpec:
    """The output fields of a judge config, explanation before its judgment."""
    jp = config.judge_params
    cap = jp.max_explanation_chars
    fields: list[OutputField] = []
    if config.rubric_judge_params is not None:
        for c in config.rubric_judge_params.criteria:
            if c.include_explanation:
                fields.append(
                    OutputField(
                        f"{c.id}_explanation",
                        "explanation",
                        JudgmentType.TEXT,
                        f"why you judged {c.id} as you did",
                        max_chars=cap,
                        criterion=c.id,
                    )
                )
            fields.append(
                OutputField(
                    c.id,
                    "judgment",
                    c.judgment_type,
                    c.description,
                    labels_for(c.judgment_type, c.judgment_scores),
                    c.judgment_scores,
                    max_chars=cap,
                    criterion=c.id,
                )
            )
    else:
        # LOGPROBS scoring reads the judgment after one prefill: nothing is written before it
        if jp.include_explanation and jp.scoring is ScoringMode.GENERATE:
            fields.append(
                OutputField(
                    "explanation",
                    "explanation",
                    JudgmentType.TEXT,
                    "why you judged as you did",
                    max_chars=cap,
                )
            )
        fields.append(_simple_judgment(config))
    guided = jp.use_guided_decoding and jp.response_format is not ResponseFormat.RAW
    return OutputSpec(tuple(fields), jp.response_format, guided)


def _simple_judgment(config: JudgeConfig) -> OutputField:
    """The judgment field of a simple judge; for a pairwise judge, the label of the better response."""
    jp = config.judge_params
    pair = config.pairwise_judge_params
    if pair is None:
        return OutputField(
            "judgment",
            "judgment",
            jp.judgment_type,
            "your judgment",
            labels_for(jp.judgment_type, jp.judgment_scores),
            jp.judgment_scores,
            max_chars=jp.max_explanation_chars,
        )
    labels = pair.answer_labels
    scores = {pair.labels.first: 1.0, pair.labels.second: 0.0, pair.labels.tie: 0.5}
    description = (
        f"{pair.labels.first} if the first response is better, {pair.labels.second} if the second is"
    )
    if pair.allow_tie:
        description += f", {pair.labels.tie} if they are equally good"
    return OutputField(
        "judgment",
        "judgment",
        JudgmentType.ENUM,
        description,
        tuple(labels),
        {label: scores[label] for label in labels},
        max_chars=jp.max_explanation_chars,
    )


# ----------------------------------------------------------------------------------------- helpers


def _re_literal(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")


def _alternation(options: Sequence[str]) -> str:
    # longest first, so that no backend's leftmost-alternative matching cuts a label short
    ordered = sorted(options, key=len, reverse=True)
    return "(?:" + "|".join(_re_literal(o) for o in ordered) + ")"


_INT_RE = rf"-?(?:0|[1-9][0-9]{{0,{MAX_INT_DIGITS - 1}}})"
_FLOAT_RE = rf"{_INT_RE}(?:\.[0-9]{{1,{MAX_FRACTION_DIGITS}}})?"


def _json_value_regex(f: OutputField) -> str:
    if f.labels is not None and f.judgment_type is JudgmentType.INT:
        return _alternation(f.labels)
    if f.labels is not None:
        return _alternation([json.dumps(label, ensure_ascii=False) for label in f.labels])
    if f.judgment_type is JudgmentType.INT:
        return _INT_RE
    if f.judgment_type is JudgmentType.FLOAT:
        return _FLOAT_RE
    return f'"{_JSON_CHAR}{{0,{f.max_chars}}}"'


def _xml_value_regex(f: OutputField) -> str:
    if f.labels is not None:
        return _alternation([_xml_escape(label) for label in f.labels])
    if f.judgment_type is JudgmentType.INT:
        return _INT_RE
    if f.judgment_type is JudgmentType.FLOAT:
        return _FLOAT_RE
    return f"{_XML_CHAR}{{0,{f.max_chars}}}"


def _value_max_bytes(f: OutputField, fmt: str) -> int:
    if f.labels is not None:
        if fmt == "xml":
            texts = [_xml_escape(label) for label in f.labels]
        elif fmt == "json" and f.judgment_type is not JudgmentType.INT:
            texts = [json.dumps(label, ensure_ascii=False) for label in f.labels]
        else:
            texts = list(f.labels)
        return max(len(text.encode()) for text in texts)
    if f.judgment_type is JudgmentType.INT:
        return MAX_INT_DIGITS + 1
    if f.judgment_type is JudgmentType.FLOAT:
        return MAX_INT_DIGITS + 2 + MAX_FRACTION_DIGITS
    per_char = _UTF8_MAX
    return f.max_chars * per_char + (2 if fmt == "json" else 0)


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


def _describe_value(f: OutputField, fmt: str) -> str:
    if f.kind == "explanation":
        return f"{f.description}, in at most {f.max_chars} characters"
    prefix = f"{f.description}; " if f.criterion != "judgment" or fmt != "raw" else ""
    if f.labels is not None:
        shown = ", ".join(
            f'"{label}"' if fmt == "json" and f.judgment_type is not JudgmentType.INT else label
            for label in f.labels
        )
        return f"{prefix}one of {shown}"
    if f.judgment_type is JudgmentType.INT:
        return f"{prefix}an integer"
    if f.judgment_type is JudgmentType.FLOAT:
        return f"{prefix}a number"
    return f"{prefix}text, at most {f.max_chars} characters"


def _placeholder_value(f: OutputField) -> Any:
    if f.kind == "explanation":
        return "..."
    if f.labels:
        return f.labels[0]
    if f.judgment_type is JudgmentType.INT:
        return 3
    if f.judgment_type is JudgmentType.FLOAT:
        return 0.5
    return "..."


def _label_text(f: OutputField, value: Any) -> str:
    """A value as the label the model writes (True -> Yes)."""
    if value is None:
        return ""
    if f.judgment_type is JudgmentType.BOOL and f.is_judgment:
        if isinstance(value, bool):
            return "Yes" if value else "No"
        text = str(value).strip()
        return (
            "Yes"
            if text.lower() in ("yes", "true", "1")
            else "No"
            if text.lower() in ("no", "false", "0")
            else text
        )
    if isinstance(value, float) and value.is_integer() and f.judgment_type is JudgmentType.INT:
        return str(int(value))
    if isinstance(value, float) and f.judgment_type is JudgmentType.FLOAT:
        return _float_text(value)
    return str(value)


def _json_value_text(f: OutputField, value: Any) -> str:
    text = _label_text(f, value)
    if f.judgment_type in (JudgmentType.INT, JudgmentType.FLOAT) and f.is_judgment:
        try:
            number = float(text)
        except ValueError:
            return json.dumps(text, ensure_ascii=False)
        if f.judgment_type is JudgmentType.INT and number.is_integer():
            return str(int(number))
        return _float_text(number)
    return json.dumps(text, ensure_ascii=False)


def _float_text(number: float) -> str:
    """A number as the FLOAT regex admits it: no exponent, at most MAX_FRACTION_DIGITS decimals."""
    text = f"{number:.{MAX_FRACTION_DIGITS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
