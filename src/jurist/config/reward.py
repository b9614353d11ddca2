"""``reward_judge_params``: a reward model or classifier as the judge (a jurist extension), and what a
reward judge's ``judge_params`` may not set."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from jurist.config.judge_params import JudgeParams
from jurist.config.types import StrictModel


class RewardJudgeParams(StrictModel):
    """A sequence-classification model as the judge (a jurist extension): a reward model such as
    Skywork-Reward-V2 scores the conversation ``judge_params.prompt_template`` (the user turn) +
    ``response_template`` (the assistant turn) with one number; a classifier gives one probability per
    label. No text is generated."""

    takes_samples: ClassVar[bool] = False
    """Such a judge does not vote on repeated samples (``judge_params.samples`` is refused)."""

    response_template: str = Field(default="{response}", description="The assistant turn that is scored.")
    labels: list[str] | None = Field(
        default=None, description="A classifier's label names, in output order (default label_0, label_1...)."
    )
    positive_label: str | None = Field(
        default=None,
        description="A classifier's label whose probability is the row's score (default: the last).",
    )

    @model_validator(mode="after")
    def _positive_is_a_label(self) -> RewardJudgeParams:
        if self.labels is not None and len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels must be distinct, got {self.labels}")
        if (
            self.positive_label is not None
            and self.labels is not None
            and self.positive_label not in self.labels
        ):
            raise ValueError(f"positive_label {self.positive_label!r} is not one of the labels {self.labels}")
        return self

    def problem_with(self, jp: JudgeParams) -> str | None:
        """What a reward judge's ``judge_params`` may not set: it generates no answer (None: nothing)."""
        for key in ("scoring", "label_probabilities", "examples", "judgment_type", "judgment_scores"):
            if key in jp.model_fields_set:
                return (
                    f"judge_params.{key} does not apply to a reward judge: it generates no answer (the "
                    "model's output is the score)"
                )
        return None
