"""The public judge: a config compiled into the kind of judge it describes.

``Judge(config)`` (or :meth:`Judge.from_config`) builds the judge's parts once
(:class:`~jurist.judges.parts.JudgeParts`: output spec, prompt, reader, scorer, requests) and the kind that
uses them: :class:`~jurist.judges.pairwise.PairwiseJudge` for configs with ``pairwise_judge_params``,
:class:`~jurist.judges.rag.kind.RagJudge` for configs with ``rag_judge_params``,
:class:`~jurist.judges.reward.RewardJudge` for ``reward_judge_params``,
:class:`~jurist.judges.rule.RuleJudge` for ``rule_judge_params`` (no model),
:class:`~jurist.judges.pointwise.PointwiseJudge` otherwise. The engine only talks to this class.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.answer.spec import OutputSpec
from jurist.config.inference import InferenceConfig
from jurist.config.loading import load_judge_config
from jurist.config.models import JudgeConfig
from jurist.config.templates import MissingValue
from jurist.judges.base import JudgeKind, OneCallKind, Step
from jurist.judges.checks import check_config, compile_warnings
from jurist.judges.columns import GENERIC_COLUMNS, Column, Provenance
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.pairwise import PairwiseJudge
from jurist.judges.pairwise_pointwise import PointwisePairJudge
from jurist.judges.parts import JudgeParts
from jurist.judges.pointwise import PointwiseJudge
from jurist.judges.rag.kind import RagJudge
from jurist.judges.reasoning import reasoning_columns, think_first
from jurist.judges.reward import RewardJudge
from jurist.judges.rule import RuleJudge
from jurist.records import (
    ALL_CONSTRAINT_KINDS,
    Answer,
    Constraint,
    ConstraintKind,
    EngineUse,
    GenerationRequest,
    Message,
    Request,
)
from jurist.render.prompts import PromptBuilder
from jurist.scoring import Scoring

logger = logging.getLogger("jurist")

KINDS: tuple[type[JudgeKind], ...] = (PairwiseJudge, RagJudge, RewardJudge, RuleJudge)
"""The judge kinds a config section selects (each names its section); a config with none of them is
judged pointwise. The one list of kinds: add a kind here and nowhere else."""


def kind_for(config: JudgeConfig) -> type[JudgeKind]:
    """The kind of judge a config describes: the kind whose section it sets, else pointwise."""
    chosen = [k for k in KINDS if k.section is not None and getattr(config, k.section) is not None]
    if not chosen:
        return PointwiseJudge
    pair = config.pairwise_judge_params
    if chosen[0] is PairwiseJudge and pair is not None and pair.mode == "pointwise":
        return PointwisePairJudge  # the pairwise section's other mode: each response alone
    return chosen[0]


class Judge:
    """One judge, ready to turn rows into requests and answers into outputs. Immutable once built.

    ``columns``: the judge's output columns in order, its own then the generic ones, each declared once.
    """

    def __init__(self, config: JudgeConfig) -> None:
        check_config(config)
        self.config = config
        found = compile_warnings(config)
        for warning in found:
            logger.warning("%s: %s", config.source, warning)
        self.warnings: list[str] = [*config.warnings, *found]
        """The config's warnings and those found when compiling it (formats, examples)."""
        self.name: str = config.name or "judge"
        kind = kind_for(config)
        self.parts = JudgeParts(kind.parts_config(config), kind.output_fields)
        self.kind: JudgeKind = kind(self.parts)
        self.reasoning = config.judge_params.reasoning
        """The judge's reasoning phase (``judge_params.reasoning``), or None: it answers at once."""
        self._several = self.kind.kind_name == "pairwise" or config.judge_params.samples > 1
        thinking = reasoning_columns(self.reasoning, self._several) if self.reasoning else ()
        self.columns: tuple[Column, ...] = (*self.kind.value_columns, *thinking, *GENERIC_COLUMNS)
        self.needs_model: bool = self.kind.needs_model
        """False for a rule judge: it sends no request, and no model loads for it."""
        self.scoring: Scoring = self.parts.scoring
        """The judge's scoring mode (:mod:`jurist.scoring`), checked against its prompt, answer format and
        labels (a PROBE judge's head: a :class:`~jurist.errors.ConfigError` names both fingerprints)."""
        if self.needs_model:
            self.scoring.check_judge(self.name, self.prompt_hash, self.schema_hash, self.parts.label_texts)

    @property
    def engine_config(self) -> InferenceConfig:
        """The inference config of the engine the judge runs on, with what its scoring mode asks of that
        engine (``use``: label scores, or hidden states after a layer)."""
        config = self.config.inference_config
        use = self.scoring.engine_use() if self.needs_model else EngineUse()
        return config if use == config.use else config.model_copy(update={"use": use})

    @classmethod
    def from_config(
        cls,
        config: str | Path | JudgeConfig | Mapping[str, Any],
        overrides: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
    ) -> Judge:
        """Load (see :func:`~jurist.config.loading.load_judge_config`) and compile a judge."""
        return cls(load_judge_config(config, overrides, name=name))

    # ------------------------------------------------------------------------------ description
    @property
    def spec(self) -> OutputSpec:
        return self.parts.spec

    @property
    def prompt_hash(self) -> str:
        return self.kind.prompt_hash

    @property
    def schema_hash(self) -> str:
        return self.kind.schema_hash

    @property
    def max_tokens(self) -> int:
        """Tokens allowed per answer: max_new_tokens if set, else the schema's bound (guided) or 1024."""
        return self.parts.max_tokens

    @property
    def constraint(self) -> Constraint | None:
        """The constraint sent to an engine that takes every kind (the regex; None when unguided)."""
        return self.spec.constraint(ALL_CONSTRAINT_KINDS)

    @property
    def required_fields(self) -> set[str]:
        """Root names the judge reads from a row."""
        return self.kind.required_fields

    def missing_columns(self, columns: set[str]) -> list[str]:
        """The inputs this judge needs that a dataset with ``columns`` lacks (quoted, for messages)."""
        return self.kind.missing_columns(columns)

    def provenance(self, model_id: str) -> Provenance:
        return Provenance(model_id, self.prompt_hash, self.schema_hash)

    # ------------------------------------------------------------------------------------ rows
    def target_error(self, row: Mapping[str, Any]) -> str | None:
        """The error an errored target carries (the row is then not judged), else None."""
        return self.kind.target_error(row)

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind] = ALL_CONSTRAINT_KINDS) -> Step:
        """The row's first step, its constraints of the first of ``kinds`` the answer can be held to
        (raises :class:`~jurist.config.templates.MissingValue` for a missing value); with a reasoning
        phase, a round of reasoning first (:func:`~jurist.judges.reasoning.think_first`)."""
        step = self.kind.start(row, kinds)
        if self.reasoning is None:
            return step
        gen = self.config.inference_config.generation
        return think_first(
            step, self.reasoning, several=self._several, temperature=gen.temperature, seed=gen.seed
        )

    def combine(self, answers: Sequence[Answer]) -> JudgeOutput:
        """The output of a row from the answers to its requests (:meth:`start`), in request order, for
        judges that need one model call per row (pointwise and pairwise without a reasoning phase)."""
        if self.reasoning is not None:
            raise TypeError(
                f"judge {self.name!r} reasons before it answers (two rounds); run it with an Engine"
            )
        if not isinstance(self.kind, OneCallKind):
            raise TypeError(
                f"judge {self.name!r} is a {self.kind.kind_name} judge: its output comes from the steps "
                "start(row) returns, not from answers handed to it; run it with an Engine"
            )
        result = self.kind.finish(answers)
        if isinstance(result, Step):
            raise TypeError(f"judge {self.name!r} needs further model calls per row; run it with an Engine")
        return result

    def interpret(self, answer: Answer) -> JudgeOutput:
        """The output of one answer to a pointwise judge's prompt (parse, score, aggregate, status)."""
        return self.combine([answer])

    def failure(self, status: Status, error: str) -> JudgeOutput:
        """The output of a row that was never judged (missing input, bad input, errored target)."""
        return self.kind.failure(status, error)

    # ---------------------------------------------------------------------------------- prompts
    @property
    def prompt(self) -> PromptBuilder:
        return self.parts.prompt

    def render(self, row: Mapping[str, Any]) -> tuple[Message, ...]:
        """The messages the judge's prompt gives for a row (raises :class:`MissingValue`)."""
        return self.parts.prompt.render(row)

    def request(self, messages: tuple[Message, ...]) -> Request:
        """The request for rendered messages, as the scoring mode makes it."""
        return self.parts.request(messages)

    def generation_request(self, messages: tuple[Message, ...]) -> GenerationRequest:
        """The generation request for rendered messages."""
        return self.parts.generation_request(messages)


def missing_message(exc: MissingValue) -> str:
    return f"field {exc.placeholder!r} is missing or null"
