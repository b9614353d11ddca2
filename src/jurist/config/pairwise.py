"""``pairwise_judge_params``: judging two responses to one question in both orders (a jurist extension of
Oumi's format), the labels the judge answers with, and how the two orders decide the winner."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from jurist.config.judge_params import JudgeParams
from jurist.config.types import StrictModel

Decision = Literal["probability", "both_orders"]
PairMode = Literal["both_orders", "pointwise"]


def _field_candidates(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class PairLabels(StrictModel):
    """The labels a pairwise judge answers with: the first shown response, the second, or a tie."""

    first: str = "A"
    """The label of the response shown first."""
    second: str = "B"
    """The label of the response shown second."""
    tie: str = "tie"
    """The label of a tie (used when allow_tie is true)."""

    @model_validator(mode="after")
    def _distinct(self) -> PairLabels:
        labels = [self.first, self.second, self.tie]
        if len({label.strip().casefold() for label in labels}) != 3 or not all(
            label.strip() for label in labels
        ):
            raise ValueError(f"pairwise labels must be distinct and non-empty, got {labels}")
        return self


class PairwiseJudgeParams(StrictModel):
    """Judging two responses to one question, in both orders (a jurist extension of Oumi's format).

    Each ``*_field`` lists candidate columns, the first one a row has wins (so LLMBar's ``input``,
    ``output_1``, ``output_2`` work as they are). The prompt reads ``{question}``, ``{response_a}``,
    ``{response_b}`` and ``{reference}`` (or ``{{response_a.output.response}}``...), filled per order.
    """

    question_field: list[str] = Field(default_factory=lambda: ["question", "input", "instruction", "prompt"])
    """Columns the question is read from, the first one a row has."""
    response_a_field: list[str] = Field(default_factory=lambda: ["response_a", "output_1", "answer_a"])
    """Columns response A is read from."""
    response_b_field: list[str] = Field(default_factory=lambda: ["response_b", "output_2", "answer_b"])
    """Columns response B is read from."""
    reference_field: list[str] = Field(default_factory=lambda: ["reference", "expected_output"])
    """Columns an optional reference answer is read from ({reference})."""
    error_a_field: list[str] = Field(default_factory=lambda: ["error_a", "response_a_error"])
    """Columns whose non-empty value means response A errored (the row is target_error)."""
    error_b_field: list[str] = Field(default_factory=lambda: ["error_b", "response_b_error"])
    """Columns whose non-empty value means response B errored."""
    labels: PairLabels = Field(default_factory=PairLabels)
    """The labels the judge answers with."""
    allow_tie: bool = False
    """Let the judge answer a tie as well as either response."""
    decision: Decision | None = Field(
        default=None,
        description="How the two orders decide the winner. both_orders: both must name the same side, "
        "else the row is `inconsistent` (the MT-Bench rule). probability (LOGPROBS or samples): the side "
        "with the higher order-averaged probability wins, a tie when the two are within tie_band (or, with "
        "allow_tie, when the averaged tie probability is the highest). Default: probability with "
        "LOGPROBS scoring or judge_params.samples > 1, both_orders otherwise.",
    )
    tie_band: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="With decision probability: a tie when |p_a - p_b| <= tie_band (0: only an exact tie).",
    )
    mode: PairMode = Field(
        default="both_orders",
        description="How the two responses are shown. both_orders: side by side, in both orders (two "
        "requests per row). pointwise: each response alone with the request, under a built-in pointwise "
        "prompt in this judge's spirit (pointwise_system_instruction and pointwise_prompt_template replace "
        "it); "
        "no prompt holds both responses, so there is no position bias; each answer is Yes or No, with "
        "LOGPROBS its P(Yes), and the winner is the side with the higher one (a tie within tie_band). The "
        "winner, p_a and status columns are the same as in both_orders.",
    )
    pointwise_system_instruction: str | None = None
    """mode pointwise: the system instruction of each one-response prompt (unset: the built-in one)."""
    pointwise_prompt_template: str | None = None
    """mode pointwise: the prompt of each response alone ({question}, {response}, {reference}; unset: the
    built-in one)."""
    inconsistent: Literal["tie", "inconclusive"] = Field(
        default="tie",
        description="With decision both_orders, what a row whose two orders disagree is: a tie (MT-Bench) or "
        "inconclusive (evaluatorq).",
    )

    _coerce = field_validator(
        "question_field",
        "response_a_field",
        "response_b_field",
        "reference_field",
        "error_a_field",
        "error_b_field",
        mode="before",
    )(_field_candidates)

    def problem_with(self, jp: JudgeParams) -> str | None:
        """What a pairwise judge's ``judge_params`` may not set, or must set for its decision (None:
        nothing)."""
        if self.mode == "pointwise":
            if jp.samples > 1:
                return (
                    "pairwise_judge_params.mode pointwise reads one answer per response: "
                    "judge_params.samples > 1 is not supported with it"
                )
            if self.decision == "both_orders":
                return (
                    "pairwise_judge_params.decision both_orders compares two orders; mode pointwise shows "
                    "each response alone (leave decision unset)"
                )
            if self.allow_tie:
                return (
                    "pairwise_judge_params.allow_tie asks the judge for a tie label; in mode pointwise a tie "
                    "is a difference within tie_band"
                )
        elif self.pointwise_system_instruction is not None or self.pointwise_prompt_template is not None:
            return (
                "pairwise_judge_params.pointwise_system_instruction and pointwise_prompt_template need "
                "mode: pointwise"
            )
        if self.decision == "probability" and not jp.scoring.reads_labels and jp.samples < 2:
            return (
                "pairwise_judge_params.decision probability reads the label probabilities of both orders: it "
                "needs judge_params.scoring LOGPROBS or judge_params.samples > 1 (or decision both_orders)"
            )
        for key in ("judgment_type", "judgment_scores"):
            if key in jp.model_fields_set:
                return (
                    f"judge_params.{key} is not allowed in a pairwise judge: its judgment is the label of "
                    "the better response (pairwise_judge_params.labels)"
                )
        return None

    def decision_for(self, judge_params: Any) -> Decision:
        """The decision rule in force for a judge's ``judge_params`` (the default: probability when the
        judge gives probabilities, LOGPROBS scoring or repeated samples; else both_orders)."""
        if self.decision is not None:
            return self.decision
        probabilities = judge_params.scoring.reads_labels or judge_params.samples > 1
        return "probability" if probabilities else "both_orders"

    @property
    def answer_labels(self) -> list[str]:
        """The judgment's labels in order: first, second (and tie when allowed)."""
        labels = [self.labels.first, self.labels.second]
        return [*labels, self.labels.tie] if self.allow_tie else labels
