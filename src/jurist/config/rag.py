"""The ``rag_judge_params`` config section: which RAG metric a judge computes, its bounds, its inputs.

A config with this section is a RAG judge (:class:`~jurist.judges.rag.kind.RagJudge`). Its ``judge_params``
keep two jobs: ``system_instruction`` is the system message of every step, and ``prompt_template`` shows
the row's material (the *case*: contexts, question, answer, reference), which every step of a row repeats
word for word before its own task, so that a prefix cache reuses it from step to step. The template reads
the metric's inputs as ``{question}``, ``{answer}``, ``{contexts}`` (numbered ``[1]``, ``[2]``...) and
``{reference}``, filled from the first of each ``*_field`` candidate columns a row has. What the steps ask
and how they answer is fixed by the metric (the RAG judge kind's prompts and schemas,
:mod:`jurist.judges.rag`).

This module imports nothing from jurist but the config base types and the template grammar, so
:mod:`jurist.config.models` can hold the section.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from jurist.config.templates import placeholders_in
from jurist.config.types import StrictModel


class RagMetric(str, enum.Enum):
    """The metrics of scikit-plots' ``LLMJudge`` that jurist computes as RAG judges."""

    ANSWER_CORRECTNESS = "answer_correctness"
    ANSWER_RELEVANCE = "answer_relevance"
    CONTEXT_PRECISION = "context_precision"
    CONTEXT_RECALL = "context_recall"
    FAITHFULNESS = "faithfulness"
    CRITERIA_SCORE = "criteria_score"


RAG_INPUTS = ("question", "answer", "contexts", "reference", "criteria")
"""The inputs a RAG judge reads from a row (each through its ``*_field`` candidates)."""


@dataclass(frozen=True)
class MetricInputs:
    """What a metric reads: ``required`` inputs (a row without one is ``missing_input``) and ``optional``
    ones (shown as "(none given)" when absent)."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    @property
    def shown(self) -> tuple[str, ...]:
        """The inputs the case template must show (the criteria are part of the task, not the case)."""
        return tuple(name for name in self.required if name != "criteria")


METRIC_INPUTS: dict[RagMetric, MetricInputs] = {
    RagMetric.ANSWER_CORRECTNESS: MetricInputs(("question", "answer", "reference")),
    RagMetric.ANSWER_RELEVANCE: MetricInputs(("question", "answer")),
    RagMetric.CONTEXT_PRECISION: MetricInputs(("question", "contexts"), ("reference",)),
    RagMetric.CONTEXT_RECALL: MetricInputs(("question", "contexts", "reference")),
    RagMetric.FAITHFULNESS: MetricInputs(("question", "answer", "contexts")),
    RagMetric.CRITERIA_SCORE: MetricInputs(("question", "answer", "criteria"), ("reference", "contexts")),
}

FIXED_JUDGE_PARAMS = (
    "judgment_type",
    "judgment_scores",
    "include_explanation",
    "examples",
    "scoring",
    "label_probabilities",
    "samples",
    "response_format",
    "max_explanation_chars",
)
"""``judge_params`` keys a RAG judge does not take: its steps' answers are fixed JSON shapes whose bounds are
set in ``rag_judge_params``."""

DEFAULT_SCALE = 5


def _candidates(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class RagJudgeParams(StrictModel):
    """A RAG metric judged in steps (a jurist extension of Oumi's format).

    Bounds (they make every step's guided answer end): ``max_statements`` statements of at most
    ``max_statement_chars`` characters per extraction, reasons of at most ``max_reason_chars`` characters per
    verdict and rating (0: no reason is written), at most ``max_contexts`` contexts for context precision
    (one verdict per context). ``scale`` and ``criteria`` belong to ``criteria_score`` (without
    ``criteria``, each row's ``criteria_field`` column is read).
    """

    takes_samples: ClassVar[bool] = False
    """Such a judge does not vote on repeated samples (``judge_params.samples`` is refused)."""

    metric: RagMetric
    """answer_correctness, answer_relevance, context_precision, context_recall, faithfulness or
    criteria_score."""
    max_statements: int = Field(default=12, ge=1, le=64)
    """At most this many statements per extraction step."""
    max_statement_chars: int = Field(default=200, ge=16, le=2000)
    """At most this many characters per extracted statement."""
    max_reason_chars: int = Field(default=160, ge=0, le=2000)
    """At most this many characters per reason of a verdict or rating (0: no reasons are written)."""
    max_contexts: int = Field(default=16, ge=1, le=128)
    """At most this many contexts (context precision gives one verdict per context)."""
    scale: int | None = Field(default=None, ge=2, le=100, description="criteria_score: the highest rating.")
    criteria: str | None = Field(default=None, description="criteria_score: the rubric, in plain language.")
    question_field: list[str] = Field(
        default_factory=lambda: ["question", "user_input", "query", "input", "instruction", "prompt"]
    )
    """Columns the question is read from, the first one a row has."""
    answer_field: list[str] = Field(default_factory=lambda: ["answer", "response"])
    """Columns the answer is read from."""
    contexts_field: list[str] = Field(
        default_factory=lambda: ["contexts", "retrieved_contexts", "context", "documents"]
    )
    """Columns the retrieved contexts are read from (a list, one string, or a JSON array as text)."""
    reference_field: list[str] = Field(
        default_factory=lambda: ["reference", "ground_truth", "expected_output", "reference_answer"]
    )
    """Columns the reference answer is read from."""
    criteria_field: list[str] = Field(default_factory=lambda: ["criteria"])
    """Columns a row's own criteria are read from (criteria_score without criteria)."""

    _coerce = field_validator(
        "question_field", "answer_field", "contexts_field", "reference_field", "criteria_field", mode="before"
    )(_candidates)

    @field_validator("metric", mode="before")
    @classmethod
    def _metric_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            known = [m.value for m in RagMetric]
            if value.strip().lower() not in known:
                raise ValueError(f"unknown metric {value!r}; known: {', '.join(known)}")
            return value.strip().lower()
        return value

    @field_validator("criteria")
    @classmethod
    def _criteria_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("criteria is empty")
        return value

    @model_validator(mode="after")
    def _criteria_score_only(self) -> RagJudgeParams:
        if self.metric is not RagMetric.CRITERIA_SCORE:
            for key in ("scale", "criteria"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key} belongs to metric criteria_score, not {self.metric.value}")
        return self

    @property
    def inputs(self) -> MetricInputs:
        return METRIC_INPUTS[self.metric]

    @property
    def rating_scale(self) -> int:
        """The highest rating of a rating metric (answer_relevance: 5; criteria_score: ``scale`` or 5)."""
        return self.scale or DEFAULT_SCALE

    def candidates(self, name: str) -> list[str]:
        """The columns an input is read from, in order of preference."""
        found: list[str] = getattr(self, f"{name}_field")
        return found

    def problem_with(
        self, judge_params_set: Iterable[str], prompt_template: str, other_kind: bool
    ) -> str | None:
        """What makes a config with this section invalid, or None: another kind's section (``other_kind``),
        a ``judge_params`` key the steps fix, or a case template that does not show a required input."""
        if other_kind:
            return "a RAG judge (rag_judge_params) has no rubric_judge_params or pairwise_judge_params"
        fixed = sorted(set(judge_params_set) & set(FIXED_JUDGE_PARAMS))
        if fixed:
            return (
                f"judge_params.{fixed[0]} is not allowed in a RAG judge: each step of metric "
                f"{self.metric.value} answers in a fixed JSON shape, bounded by rag_judge_params"
            )
        shown = placeholders_in(prompt_template)
        missing = [name for name in self.inputs.shown if name not in shown]
        if missing:
            return (
                f"judge_params.prompt_template must show {', '.join('{' + m + '}' for m in missing)} to a "
                f"{self.metric.value} judge (it reads {', '.join(self.inputs.required)})"
            )
        return None
