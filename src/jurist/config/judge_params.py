"""``judge_params``: what a judge is asked and how it answers (:class:`JudgeParams`, Oumi's section), and
the rules a simple judge's own answer follows (:func:`simple_judge_problem`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from jurist.config.reasoning import ReasoningParams
from jurist.config.rules import check_scores, coerce_scores
from jurist.config.templates import Template
from jurist.config.types import JudgmentType, ResponseFormat, ScoringMode, StrictModel


class JudgeParams(StrictModel):
    """What the judge is asked and how it answers (Oumi's ``judge_params``)."""

    prompt_template: str = Field(description="The user prompt; {name} placeholders are filled per row.")
    system_instruction: str | None = Field(default=None, description="Optional system message.")
    template_variables: dict[str, str] = Field(
        default_factory=dict, description="Placeholders replaced once, when the judge is built."
    )
    response_format: ResponseFormat = ResponseFormat.JSON
    """How the judge writes its answer: JSON, XML, or RAW (simple judges only: the bare judgment)."""
    judgment_type: JudgmentType = JudgmentType.BOOL
    """The judgment's type: BOOL, INT, FLOAT, TEXT or ENUM (simple judges; a rubric sets it per criterion)."""
    judgment_scores: dict[str, float | None] | None = None
    """Label -> score (ENUM labels, or the allowed INT / FLOAT / TEXT values); an ENUM label mapped to null is
    N/A and drops out of the aggregate."""
    include_explanation: bool = False
    """Ask for an explanation (at most max_explanation_chars), written before the judgment (GENERATE
    scoring only)."""
    examples: list[dict[str, Any]] = Field(default_factory=list, description="Few-shot examples.")
    use_guided_decoding: bool = True
    """Hold the answer to the output schema with the engine's constrained decoding (off: parse whatever the
    model writes)."""
    format_instructions: bool = Field(
        default=True,
        description="jurist: append the answer format's instructions to the system message (false: the "
        "system message is exactly system_instruction, as evaluatorq sends it; guided decoding still holds "
        "the answer to the format).",
    )
    # jurist extensions (not in Oumi): bounds that make guided decoding terminate, and the scoring mode.
    max_explanation_chars: int = Field(
        default=400, ge=16, le=20000, description="Upper bound on an explanation or TEXT judgment."
    )
    scoring: ScoringMode = ScoringMode.GENERATE
    """GENERATE decodes the answer; LOGPROBS reads the label distribution after one prefill (BOOL, ENUM and
    INT judgments, pairwise judges); PROBE reads it with a probe head (``probe``) from the same prefill's
    hidden state."""
    probe: str | None = Field(
        default=None,
        description="jurist: the probe head file (`jurist probe fit`) that scoring PROBE reads labels with; "
        "the head must have been fitted on this judge's model, prompt and labels.",
    )
    label_probabilities: bool = Field(
        default=False,
        description="In GENERATE scoring, also read each label field's distribution from token logprobs.",
    )
    samples: int = Field(
        default=1,
        ge=1,
        le=64,
        description="jurist: judge each row this many times, sampling (temperature > 0), and keep the "
        "most common verdict; ``<judge>.sample_agreement`` is the share of samples that gave it "
        "(self-consistency; a generation judge's confidence as a cascade stage). Simple and rubric judges "
        "with discrete judgments (BOOL, ENUM, INT) in GENERATE scoring.",
    )
    reasoning: ReasoningParams | None = Field(
        default=None,
        description="jurist: think first: free text up to a token budget, then the constrained answer "
        "after it ({budget_tokens: N}; see the reasoning keys). Simple, rubric and pairwise judges.",
    )
    target_error_field: str | list[str] | None = Field(
        default_factory=lambda: ["error", "output.error"],
        description=(
            "Column(s) or dotted path(s) whose non-empty value makes the row an errored target, not judged "
            "(target_error): by default an ``error`` column or a nested ``output.error``; null turns it off."
        ),
    )
    prompt_template_placeholders: list[str] | None = Field(
        default=None,
        description="Oumi's declared placeholders: checked against the template (every row must fill them).",
    )

    @field_validator("judgment_scores", mode="before")
    @classmethod
    def _labels_are_strings(cls, value: Any) -> Any:
        return coerce_scores(value)

    @field_validator("template_variables", mode="before")
    @classmethod
    def _variables_are_strings(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): ("" if v is None else str(v)) for k, v in value.items()}
        return value

    @field_validator("prompt_template")
    @classmethod
    def _template_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt_template is empty")
        return value

    @model_validator(mode="after")
    def _declared_placeholders(self) -> JudgeParams:
        """As in Oumi: the declared placeholders must be the template's (after template_variables)."""
        if self.prompt_template_placeholders:
            found = Template(self.prompt_template).substitute(self.template_variables).names
            declared = set(self.prompt_template_placeholders)
            if declared != found:
                raise ValueError(
                    f"prompt_template_placeholders {sorted(declared)} are not the placeholders of "
                    f"prompt_template {sorted(found)}"
                )
        return self


def simple_judge_problem(jp: JudgeParams) -> str | None:
    """What is wrong with the judgment of a judge with no rubric and no pair (its type and scores are
    ``judge_params``'), or None."""
    try:
        check_scores(jp.judgment_type, jp.judgment_scores, "judge_params")
    except ValueError as exc:
        return str(exc)
    if jp.scoring.reads_labels:
        jt, mode = jp.judgment_type, jp.scoring.value
        if jt not in (JudgmentType.BOOL, JudgmentType.ENUM, JudgmentType.INT):
            return f"judge_params.scoring {mode} needs a BOOL, ENUM or INT judgment, not {jt.value}"
        if jt is JudgmentType.INT and not jp.judgment_scores:
            return f"judge_params.scoring {mode} with INT needs judgment_scores (the scale)"
    return None
