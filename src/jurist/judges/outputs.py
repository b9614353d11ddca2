"""Per-row judge results.

Every (row, judge) pair yields one :class:`JudgeOutput`, whatever happened: ``status`` says what.

========================  ===========================================================================
status                    meaning
========================  ===========================================================================
``ok``                    parsed; every field has a value
``parse_error``           the answer could not be parsed (``error`` says why; all fields None)
``truncated``             generation hit max_tokens before the answer ended (all fields None)
``too_long``              the prompt exceeds the model's context; nothing was sent
``missing_input``         the row lacks a value the prompt needs (``error`` names the field)
``bad_input``             the input row itself could not be read (e.g. a malformed JSONL line)
``target_error``          the row's response carries an error; it was not judged
``backend_error``         the engine failed on this request
========================  ===========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from jurist.answer.reading import ReadStatus

Status = Literal[ReadStatus, "missing_input", "bad_input", "target_error"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass(frozen=True)
class JudgeOutput:
    """One judge's result for one row (Oumi's ``JudgeOutput`` fields, plus status and provenance).

    ``field_values``: typed values by field name (None for every field unless ``status`` is ``ok``).
    ``field_scores``: one entry per output field; None for explanations and unscored judgments.
    ``aggregate_score``: a rubric judge's aggregate (None for simple judges, as in Oumi).
    ``score``: the row's single score: the aggregate for a rubric judge, the judgment's score otherwise
    (in LOGPROBS scoring, the expected score). ``extras``: further typed columns (label probabilities,
    confidence, entropy, expected score) by column suffix. Built once, never changed afterwards.
    """

    status: Status
    field_values: dict[str, Any] = field(default_factory=dict)
    field_scores: dict[str, float | None] = field(default_factory=dict)
    aggregate_score: float | None = None
    score: float | None = None
    error: str | None = None
    raw: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"
