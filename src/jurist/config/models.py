"""Judge configs as pydantic models compatible with Oumi's judge YAML.

A config has three sections, as in Oumi:

* ``judge_params`` (:class:`JudgeParams`): prompt template, system instruction, response format, judgment
  type and scores, explanation, few-shot examples, guided decoding.
* ``rubric_judge_params`` (:class:`RubricJudgeParams`, optional): several criteria judged in one call, and
  how their scores aggregate. Its presence makes the judge a rubric judge.
* ``inference_config`` (:class:`~jurist.config.inference.InferenceConfig`): the judge model, the engine
  that runs it and the generation parameters.

jurist adds ``pairwise_judge_params`` (judging two responses in both orders), ``reward_judge_params`` (a
reward model or classifier as the judge), ``rag_judge_params`` (a RAG metric computed in steps,
:mod:`jurist.config.rag`), ``name`` and ``description``. Every model rejects
unknown keys; cross-section rules are checked when a config is built.
Oumi's ``rule_judge_params`` (:class:`RuleJudgeParams`) makes a judge that runs a rule and no model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, PrivateAttr, field_validator, model_validator

from jurist.config.inference import InferenceConfig
from jurist.config.pairwise import PairLabels, PairwiseJudgeParams
from jurist.config.rag import RagJudgeParams
from jurist.config.rules import RuleJudgeParams, check_example_value, check_scores, coerce_scores
from jurist.config.templates import Template
from jurist.config.types import (
    IDENTIFIER,
    Aggregation,
    JudgmentType,
    ResponseFormat,
    ScoringMode,
    StrictModel,
)


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
    INT judgments, pairwise judges)."""
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


class Criterion(StrictModel):
    """One criterion of a rubric judge: one output field (plus its explanation)."""

    id: str
    """The criterion's output field (letters, digits and underscores); its column is <judge>.<id>."""
    description: str
    """What the criterion asks, shown to the model."""
    judgment_type: JudgmentType = JudgmentType.BOOL
    """The criterion's judgment type: BOOL, INT, FLOAT, TEXT or ENUM."""
    judgment_scores: dict[str, float | None] | None = None
    """Label -> score for this criterion (as judge_params.judgment_scores)."""
    include_explanation: bool = True
    """Ask for <id>_explanation before the judgment."""
    weight: float = Field(default=1.0, gt=0.0)
    """The criterion's weight in WEIGHTED_MEAN aggregation (> 0)."""

    @field_validator("judgment_scores", mode="before")
    @classmethod
    def _labels_are_strings(cls, value: Any) -> Any:
        return coerce_scores(value)

    @field_validator("id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not IDENTIFIER.fullmatch(value):
            raise ValueError(
                f"criterion id {value!r} must be identifier-like: letters, digits and underscores, "
                "not starting with a digit"
            )
        if value == "explanation" or value.endswith("_explanation"):
            raise ValueError(
                f"criterion id {value!r} is reserved: 'explanation' and '*_explanation' name the "
                "generated explanation fields"
            )
        return value

    @field_validator("weight")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"weight must be finite, got {value!r}")
        return value

    @model_validator(mode="after")
    def _scores_fit_type(self) -> Criterion:
        check_scores(self.judgment_type, self.judgment_scores, f"criterion {self.id!r}")
        return self


class RubricJudgeParams(StrictModel):
    """Several criteria judged in one call (Oumi's ``rubric_judge_params``)."""

    aggregation: Aggregation = Aggregation.WEIGHTED_MEAN
    """How the criteria's scores combine into the judge's score: WEIGHTED_MEAN, MIN, ALL (1.0 when every
    scored criterion is 1.0) or NONE."""
    criteria: list[Criterion] = Field(min_length=1)
    """The criteria, judged in one call, one output field each (at least one)."""

    @model_validator(mode="after")
    def _unique_ids(self) -> RubricJudgeParams:
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.id in seen:
                raise ValueError(f"criterion id {criterion.id!r} appears twice")
            seen.add(criterion.id)
        return self


class RewardJudgeParams(StrictModel):
    """A sequence-classification model as the judge (a jurist extension): a reward model such as
    Skywork-Reward-V2 scores the conversation ``judge_params.prompt_template`` (the user turn) +
    ``response_template`` (the assistant turn) with one number; a classifier gives one probability per
    label. No text is generated."""

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


class JudgeConfig(StrictModel):
    """A whole judge: Oumi's ``judge_params`` + ``rubric_judge_params`` + ``inference_config``.

    ``name`` (a jurist extension) names the judge's output columns; by default it is the config file's
    stem. ``warnings`` lists what :func:`load_judge_config` found suspicious but legal.
    """

    name: str | None = None
    """The judge's name: the prefix of its output columns (default: the config file's stem)."""
    description: str | None = None
    """Free text, shown by `jurist list` and `jurist validate`."""
    judge_params: JudgeParams
    """What the judge is asked and how it answers."""
    rubric_judge_params: RubricJudgeParams | None = None
    """Several criteria in one call: makes the judge a rubric judge."""
    pairwise_judge_params: PairwiseJudgeParams | None = None
    """Two responses judged in both orders: makes the judge a pairwise judge."""
    rag_judge_params: RagJudgeParams | None = None
    """A RAG metric computed in steps: makes the judge a RAG judge."""
    reward_judge_params: RewardJudgeParams | None = None
    """A reward model or classifier as the judge: no text is generated."""
    rule_judge_params: RuleJudgeParams | None = None
    """A deterministic rule, no model (Oumi's rule-based judges)."""
    inference_config: InferenceConfig = Field(default_factory=InferenceConfig)
    """The judge model, its engine and its generation settings."""

    _source: str = PrivateAttr(default="<python>")
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name_identifier(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", value):
            raise ValueError(f"name {value!r} must be letters, digits, '_' or '-', not starting with a digit")
        return value

    @property
    def is_rubric(self) -> bool:
        return self.rubric_judge_params is not None

    @property
    def is_pairwise(self) -> bool:
        return self.pairwise_judge_params is not None

    @property
    def is_rag(self) -> bool:
        return self.rag_judge_params is not None

    @property
    def is_reward(self) -> bool:
        return self.reward_judge_params is not None

    @property
    def is_rule(self) -> bool:
        return self.rule_judge_params is not None

    @property
    def source(self) -> str:
        """Where the config came from: a file path, a built-in name or ``<python>``."""
        return self._source

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    @model_validator(mode="after")
    def _cross_checks(self) -> JudgeConfig:
        jp = self.judge_params
        rubric = self.rubric_judge_params
        kinds = [  # every optional section but RAG's, which says itself what it cannot be combined with
            name.removesuffix("_judge_params")
            for name in type(self).model_fields
            if name.endswith("_judge_params")
            and name not in ("judge_params", "rag_judge_params")
            and getattr(self, name) is not None
        ]
        if len(kinds) > 1:
            named = " or ".join(f"{kind}_judge_params" for kind in kinds)
            both = "both" if len(kinds) == 2 else "all of them"
            raise ValueError(f"a judge has either {named}, not {both}")
        if self.rule_judge_params is not None:
            for key in ("scoring", "label_probabilities", "examples"):
                if key in jp.model_fields_set:
                    raise ValueError(f"judge_params.{key} does not apply to a rule judge: it runs no model")
        if self.reward_judge_params is not None:
            for key in ("scoring", "label_probabilities", "examples", "judgment_type", "judgment_scores"):
                if key in jp.model_fields_set:
                    raise ValueError(
                        f"judge_params.{key} does not apply to a reward judge: it generates no answer (the "
                        "model's output is the score)"
                    )
        if self.rag_judge_params is not None:
            other = len(kinds) > 0
            problem = self.rag_judge_params.problem_with(jp.model_fields_set, jp.prompt_template, other)
            if problem is not None:
                raise ValueError(problem)
        if rubric is not None:
            for key in ("judgment_type", "judgment_scores", "include_explanation"):
                if key in jp.model_fields_set:
                    raise ValueError(
                        f"judge_params.{key} is not allowed in a rubric judge: set it per criterion in "
                        "rubric_judge_params.criteria"
                    )
        elif self.pairwise_judge_params is None:
            check_scores(jp.judgment_type, jp.judgment_scores, "judge_params")
        if self.pairwise_judge_params is not None:
            pair = self.pairwise_judge_params
            if pair.decision == "probability" and jp.scoring is not ScoringMode.LOGPROBS and jp.samples < 2:
                raise ValueError(
                    "pairwise_judge_params.decision probability reads the label probabilities of both "
                    "orders: it needs judge_params.scoring LOGPROBS or judge_params.samples > 1 (or decision "
                    "both_orders)"
                )
            for key in ("judgment_type", "judgment_scores"):
                if key in jp.model_fields_set:
                    raise ValueError(
                        f"judge_params.{key} is not allowed in a pairwise judge: its judgment is the label "
                        "of the better response (pairwise_judge_params.labels)"
                    )
        if jp.scoring is ScoringMode.LOGPROBS:
            if rubric is not None:
                raise ValueError(
                    "judge_params.scoring LOGPROBS reads one label distribution after one prefill; a rubric "
                    "judge writes several fields (use label_probabilities in GENERATE scoring instead)"
                )
            if self.pairwise_judge_params is None:
                jt = jp.judgment_type
                if jt not in (JudgmentType.BOOL, JudgmentType.ENUM, JudgmentType.INT):
                    raise ValueError(
                        f"judge_params.scoring LOGPROBS needs a BOOL, ENUM or INT judgment, not {jt.value}"
                    )
                if jt is JudgmentType.INT and not jp.judgment_scores:
                    raise ValueError(
                        "judge_params.scoring LOGPROBS with INT needs judgment_scores (the scale)"
                    )
        if jp.samples > 1:
            self._check_samples()
        self._check_examples()
        return self

    def _check_samples(self) -> None:
        """Repeated samples vote on discrete verdicts of a generating simple, rubric or pairwise judge."""
        jp = self.judge_params
        for section in ("reward", "rule", "rag"):
            if getattr(self, f"{section}_judge_params") is not None:
                raise ValueError(
                    f"judge_params.samples applies to simple, rubric and pairwise judges, not to a {section} "
                    "judge"
                )
        if jp.scoring is ScoringMode.LOGPROBS:
            raise ValueError(
                "judge_params.samples needs GENERATE scoring: LOGPROBS reads one label distribution, which "
                "sampling again would not change"
            )
        if jp.label_probabilities:
            raise ValueError("judge_params.samples and label_probabilities: use one confidence, not both")
        if self.inference_config.generation.temperature <= 0:
            raise ValueError(
                "judge_params.samples needs inference_config.generation.temperature > 0: greedy decoding "
                "gives the same answer every time"
            )
        if self.pairwise_judge_params is not None:
            return  # each order votes on the pair's labels
        rubric = self.rubric_judge_params
        types = [c.judgment_type for c in rubric.criteria] if rubric is not None else [jp.judgment_type]
        voted = (JudgmentType.BOOL, JudgmentType.ENUM, JudgmentType.INT)
        for jt in types:
            if jt not in voted:
                raise ValueError(
                    f"judge_params.samples votes on BOOL, ENUM or INT judgments, not {jt.value} "
                    "(samples of it rarely agree exactly)"
                )

    def _check_examples(self) -> None:
        jp = self.judge_params
        rubric = self.rubric_judge_params
        for index, example in enumerate(jp.examples):
            where = f"judge_params.examples[{index}]"
            if rubric is not None:
                needed = []
                for criterion in rubric.criteria:
                    if criterion.include_explanation:
                        needed.append(f"{criterion.id}_explanation")
                    needed.append(criterion.id)
            else:
                needed = ["judgment", *(["explanation"] if jp.include_explanation else [])]
            missing = [key for key in needed if key not in example or example[key] is None]
            if missing:
                raise ValueError(f"{where} lacks {', '.join(missing)} (every output field needs a value)")
            if rubric is not None:
                for c in rubric.criteria:
                    check_example_value(example[c.id], c.judgment_type, c.judgment_scores, f"{where}.{c.id}")
            elif self.pairwise_judge_params is not None:
                labels = self.pairwise_judge_params.answer_labels
                check_example_value(
                    example["judgment"], JudgmentType.ENUM, dict.fromkeys(labels, 0.0), f"{where}.judgment"
                )
            else:
                check_example_value(
                    example["judgment"], jp.judgment_type, jp.judgment_scores, f"{where}.judgment"
                )

    def copy_with(self, **updates: Any) -> JudgeConfig:
        """A validated copy with top-level fields replaced; the source and warnings are kept."""
        data = self.model_dump(mode="python", exclude_unset=True)
        data.update(updates)
        new = JudgeConfig.model_validate(data)
        new._source = self._source
        new._warnings = list(self._warnings)
        return new


__all__ = [
    "Criterion",
    "JudgeConfig",
    "JudgeParams",
    "PairLabels",
    "PairwiseJudgeParams",
    "RewardJudgeParams",
    "RubricJudgeParams",
]
