"""Field values, whatever the response format: typed conversion, the text a value is written as, numbers.

* :func:`convert_value` turns one raw value into its field's type: BOOL from Yes/No/True/False (any case,
  or a JSON boolean), INT and FLOAT from numbers or numeric strings, ENUM to the exact label (matched without
  regard to case or surrounding whitespace), TEXT as a string. A value outside a closed label set raises
  :class:`FieldError` naming the field: it is a parse failure, never a verdict.
* :func:`label_text` is the text the model writes for a value (``True`` -> ``Yes``); :func:`float_text`
  writes a number the way the FLOAT grammar admits it.
* :data:`INT_RE` / :data:`FLOAT_RE`: the bounded number grammar every constrained format uses.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from jurist.answer.fields import OutputField
from jurist.config.types import JudgmentType

MAX_INT_DIGITS = 9
MAX_FRACTION_DIGITS = 6
INT_RE = rf"-?(?:0|[1-9][0-9]{{0,{MAX_INT_DIGITS - 1}}})"
FLOAT_RE = rf"{INT_RE}(?:\.[0-9]{{1,{MAX_FRACTION_DIGITS}}})?"
INT_MAX_BYTES = MAX_INT_DIGITS + 1
FLOAT_MAX_BYTES = MAX_INT_DIGITS + 2 + MAX_FRACTION_DIGITS


class FieldError(ValueError):
    """One field's value could not be read; the message names the field."""


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
    return float(_to_number(f, value))


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


def label_text(f: OutputField, value: Any) -> str:
    """A value as the label the model writes (True -> Yes)."""
    if value is None:
        return ""
    if f.judgment_type is JudgmentType.BOOL and f.is_judgment:
        if isinstance(value, bool):
            return "Yes" if value else "No"
        text = str(value).strip()
        if text.lower() in ("yes", "true", "1"):
            return "Yes"
        if text.lower() in ("no", "false", "0"):
            return "No"
        return text
    if isinstance(value, float) and value.is_integer() and f.judgment_type is JudgmentType.INT:
        return str(int(value))
    if isinstance(value, float) and f.judgment_type is JudgmentType.FLOAT:
        return float_text(value)
    return str(value)


def float_text(number: float) -> str:
    """A number as the FLOAT grammar admits it: no exponent, at most MAX_FRACTION_DIGITS decimals."""
    text = f"{number:.{MAX_FRACTION_DIGITS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def placeholder_value(f: OutputField) -> Any:
    """A value for the example answer shown in the instructions."""
    if f.kind == "explanation":
        return "..."
    if f.labels:
        return f.labels[0]
    if f.judgment_type is JudgmentType.INT:
        return 3
    if f.judgment_type is JudgmentType.FLOAT:
        return 0.5
    return "..."


def is_number(f: OutputField) -> bool:
    """Whether a field's value is written as a bare number (INT and FLOAT judgments)."""
    return f.is_judgment and f.judgment_type in (JudgmentType.INT, JudgmentType.FLOAT)
