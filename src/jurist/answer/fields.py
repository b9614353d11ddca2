"""The fields of a judge's answer: one per judgment, plus an explanation before each judgment that has one.

Each judge kind derives them from its config (:meth:`jurist.judges.base.JudgeKind.output_fields`, from
:func:`jurist.answer.spec.judgment_field` and :func:`jurist.answer.spec.explanation_field`), in the order the
model writes them (the reason before the verdict); this module holds what a field is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from jurist.config.types import JudgmentType

BOOL_LABELS = ("Yes", "No")


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
        if not self.is_judgment:
            return "string"
        return {
            JudgmentType.BOOL: "bool",
            JudgmentType.INT: "int64",
            JudgmentType.FLOAT: "float64",
        }.get(self.judgment_type, "string")


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
