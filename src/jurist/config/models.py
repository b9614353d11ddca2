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

import re

from pydantic import Field, PrivateAttr, field_validator, model_validator

from jurist.config.inference import InferenceConfig
from jurist.config.judge_params import JudgeParams, simple_judge_problem
from jurist.config.pairwise import PairLabels, PairwiseJudgeParams
from jurist.config.rag import RagJudgeParams
from jurist.config.reward import RewardJudgeParams
from jurist.config.rubric import Criterion, RubricJudgeParams
from jurist.config.rules import RuleJudgeParams, check_example_value
from jurist.config.types import InferenceEngine, JudgmentType, StrictModel


def _refuse(problem: str | None) -> None:
    if problem is not None:
        raise ValueError(problem)


"""The engines that run the model in this process (and so can read its hidden states)."""


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
        sections = [  # every kind's section but RAG's, which says itself what it cannot be combined with
            name
            for name in type(self).model_fields
            if name.endswith("_judge_params") and name not in ("judge_params", "rag_judge_params")
        ]
        kinds = [name.removesuffix("_judge_params") for name in sections if getattr(self, name) is not None]
        if len(kinds) > 1:
            named = " or ".join(f"{kind}_judge_params" for kind in kinds)
            both = "both" if len(kinds) == 2 else "all of them"
            raise ValueError(f"a judge has either {named}, not {both}")
        for name in sections:  # each kind's section says what its judge_params may not be
            section = getattr(self, name)
            if section is not None:
                _refuse(section.problem_with(jp))
        if self.rag_judge_params is not None:
            other = len(kinds) > 0
            _refuse(self.rag_judge_params.problem_with(jp.model_fields_set, jp.prompt_template, other))
        if rubric is None and self.pairwise_judge_params is None:
            _refuse(simple_judge_problem(jp))
        if jp.samples > 1:
            self._check_samples()
        if jp.reasoning is not None:
            self._check_reasoning()
        self._check_examples()
        return self

    def _check_reasoning(self) -> None:
        """A reasoning phase comes before a simple, rubric or pairwise judge's answer, on an engine that
        can continue an assistant turn (local engines and ``vllm serve``), with the chat template's thinking
        not switched off."""
        for name in ("rag_judge_params", "reward_judge_params", "rule_judge_params"):
            if getattr(self, name) is not None:
                kind = name.removesuffix("_judge_params")
                raise ValueError(
                    "judge_params.reasoning applies to simple, rubric and pairwise judges, "
                    f"not to a {kind} judge"
                )
        if self.inference_config.engine is InferenceEngine.OPENAI:
            raise ValueError(
                "judge_params.reasoning needs an engine that continues the judge's reasoning in the same "
                "assistant turn (VLLM, NATIVE or REMOTE_VLLM), not OPENAI"
            )
        if self.inference_config.model.chat_template_kwargs.get("enable_thinking") is False:
            raise ValueError(
                "judge_params.reasoning with inference_config.model.chat_template_kwargs.enable_thinking: "
                "false: that template closes the think block before the reasoning could start; drop one"
            )

    def _check_samples(self) -> None:
        """Repeated samples vote on discrete verdicts of a generating simple, rubric or pairwise judge."""
        jp = self.judge_params
        for name in type(self).model_fields:  # a kind's section says whether its judge votes on samples
            section = getattr(self, name) if name.endswith("_judge_params") else None
            if name == "judge_params" or section is None or getattr(section, "takes_samples", True):
                continue
            kind = name.removesuffix("_judge_params")
            voters = "simple, rubric and pairwise judges"
            raise ValueError(f"judge_params.samples applies to {voters}, not to a {kind} judge")
        if jp.scoring.reads_labels:
            raise ValueError(
                f"judge_params.samples needs GENERATE scoring: {jp.scoring.value} reads one label "
                "distribution, which sampling again would not change"
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


__all__ = [
    "Criterion",
    "JudgeConfig",
    "JudgeParams",
    "PairLabels",
    "PairwiseJudgeParams",
    "RewardJudgeParams",
    "RubricJudgeParams",
]
