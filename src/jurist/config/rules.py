"""Oumi's rules on judgment values, shared by the config models: scores per label, few-shot values.

Each check raises ``ValueError`` with a message naming where the problem is; pydantic turns it into a
validation error that :mod:`jurist.config.loading` reports with the file and the dotted key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from jurist.config.types import JudgmentType


def check_scores(judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str) -> None:
    """Apply Oumi's rules on ``judgment_scores`` for one judgment."""
    if scores is None:
        if judgment_type is JudgmentType.ENUM:
            raise ValueError(f"{where}: an ENUM judgment needs judgment_scores (its labels and their scores)")
        return
    if not scores:
        raise ValueError(f"{where}: judgment_scores is empty")
    if judgment_type is JudgmentType.BOOL:
        raise ValueError(
            f"{where}: BOOL judgments score 1.0 / 0.0 automatically; judgment_scores is for ENUM, INT, "
            "FLOAT and TEXT"
        )
    for label, score in scores.items():
        if not str(label).strip():
            raise ValueError(f"{where}: judgment_scores has an empty label")
        if score is None:
            if judgment_type is not JudgmentType.ENUM:
                raise ValueError(
                    f"{where}: label {label!r} maps to null; null (N/A) scores are allowed only for ENUM "
                    f"judgments, not {judgment_type.value}"
                )
            continue
        if not math.isfinite(score):
            raise ValueError(f"{where}: label {label!r} has a non-finite score {score!r}")
    if judgment_type is JudgmentType.INT:
        for label in scores:
            if not re.fullmatch(r"-?\d+", str(label).strip()):
                raise ValueError(f"{where}: INT judgment_scores label {label!r} is not an integer")
    if judgment_type is JudgmentType.FLOAT:
        for label in scores:
            try:
                float(label)
            except ValueError:
                raise ValueError(f"{where}: FLOAT judgment_scores label {label!r} is not a number") from None


def coerce_scores(value: Any) -> Any:
    """YAML reads ``1: 0.0`` with an int key; labels are strings."""
    if isinstance(value, Mapping):
        return {str(key): score for key, score in value.items()}
    return value


def check_example_value(
    value: Any, judgment_type: JudgmentType, scores: Mapping[str, float | None] | None, where: str
) -> None:
    """A few-shot judgment must be a value the judge itself could answer."""
    text = str(value).strip()
    if judgment_type is JudgmentType.BOOL:
        if not isinstance(value, bool) and text.lower() not in ("yes", "no", "true", "false"):
            raise ValueError(f"{where}: {value!r} is not a BOOL judgment (Yes/No/True/False)")
    elif judgment_type is JudgmentType.ENUM:
        labels = list(scores or ())
        if text.casefold() not in {label.casefold() for label in labels}:
            raise ValueError(f"{where}: {value!r} is not one of the labels {', '.join(labels)}")
    elif judgment_type in (JudgmentType.INT, JudgmentType.FLOAT):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{where}: {value!r} is not a number") from None
        if judgment_type is JudgmentType.INT:
            if isinstance(value, bool) or not number.is_integer():
                raise ValueError(f"{where}: {value!r} is not an integer")
            if scores and int(number) not in {int(label) for label in scores}:
                raise ValueError(f"{where}: {value!r} is not one of {', '.join(scores)}")
