"""What every kind of judge does with a row, and the steps between a row and its output.

A judge kind (pointwise, pairwise, ...) turns one row into a :class:`Step`: the requests the row needs
next and what to do with their answers, which is either the row's :class:`~jurist.judges.outputs.JudgeOutput`
or a further step (judges that need several model calls per row). The engine sends the requests of every
row of a chunk together and feeds each step its answers in request order.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from jurist.answer.fields import OutputField
from jurist.answer.spec import OutputSpec, judgment_field, leading_explanation
from jurist.config.models import JudgeConfig
from jurist.config.templates import lookup
from jurist.judges.columns import Column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.records import ALL_CONSTRAINT_KINDS, Answer, Capability, ConstraintKind, Request
from jurist.render.namespace import NAMESPACE_ROOTS, namespace_value


@dataclass(frozen=True)
class Step:
    """The requests a row needs next, and what becomes of their answers (given in request order)."""

    requests: tuple[Request, ...]
    finish: Callable[[Sequence[Answer]], JudgeOutput | Step]


class JudgeKind(ABC):
    """One kind of judge: how a row becomes requests, how answers become its output, which columns it
    writes. Built from :class:`~jurist.judges.parts.JudgeParts`."""

    needs_model: bool = True
    """False for a kind that sends no request (a rule): no model loads for it."""

    kind_name: ClassVar[str]
    """The kind in a word, as result metadata records it (``pointwise``, ``pairwise``, ...)."""

    section: ClassVar[str | None] = None
    """The config section that selects this kind (``pairwise_judge_params``...); None for the default."""

    parts_used: ClassVar[tuple[str, ...]] = ("spec", "prompt", "reader", "scorer")
    """The :class:`~jurist.judges.parts.JudgeParts` this kind uses: built (and so checked) when the judge
    is, so that a config error surfaces before any row; the others are never built."""

    @classmethod
    def output_fields(cls, config: JudgeConfig) -> tuple[OutputField, ...]:
        """The fields of this kind's answer, in the order the model writes them: by default an explanation
        (when asked for) and then :meth:`judgment_field`."""
        return (*leading_explanation(config), cls.judgment_field(config))

    @classmethod
    def judgment_field(cls, config: JudgeConfig) -> OutputField:
        """The judgment field of a one-judgment answer: ``judge_params``' judgment type and scores."""
        return judgment_field(config)

    @classmethod
    def parts_config(cls, config: JudgeConfig) -> JudgeConfig:
        """The config this kind's parts (spec, prompt, reader, requests) are built from: the judge's own,
        unless the kind renders a prompt of its own (a pairwise judge in pointwise mode)."""
        return config

    def __init__(self, parts: JudgeParts) -> None:
        self.parts = parts
        self.config = parts.config
        for name in self.parts_used:
            getattr(parts, name)

    @property
    def generates(self) -> bool:
        """Whether every request of this judge decodes text (what an engine kept full streams); label
        scoring and reward scoring are prefill only."""
        return self.parts.scoring.generates

    @property
    def needs(self) -> tuple[Capability | None, str]:
        """What the engine must be able to do for this judge besides generating (None: nothing more), and
        who needs it, in words: by default what the judge's scoring mode reads."""
        mode = self.parts.scoring
        return mode.capability, f"judge_params.scoring {mode.mode.value} reads {mode.reads}"

    @property
    def spec(self) -> OutputSpec:
        return self.parts.spec

    @property
    def required_fields(self) -> set[str]:
        """Root names the rendered prompt reads from a row."""
        return self.parts.prompt.required_fields

    def missing_columns(self, columns: set[str]) -> list[str]:
        """The inputs this judge needs that a dataset with ``columns`` lacks (quoted, for messages)."""
        return [repr(name) for name in sorted(self.required_fields - columns)]

    @property
    def prompt_hash(self) -> str:
        """A short hash of the prompt as the judge defines it."""
        return self.parts.prompt_hash

    @property
    def schema_hash(self) -> str:
        """A short hash of what the judge's answer must look like."""
        return self.parts.schema_hash

    def target_error(self, row: Mapping[str, Any]) -> str | None:
        """The error an errored target carries (the first non-empty ``judge_params.target_error_field``),
        else None; a row with one is not judged."""
        paths = self.config.judge_params.target_error_field
        if isinstance(paths, str):
            paths = [paths]
        for path in paths or ():
            steps = tuple(path.split("."))
            value = lookup(row, steps)
            if value is None and steps[0] in NAMESPACE_ROOTS:  # e.g. output.error from an error column
                value = namespace_value(row, steps)
            if value not in (None, ""):
                return str(value)
        return None

    @abstractmethod
    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        """The row's first step (raises :class:`~jurist.config.templates.MissingValue`)."""

    @abstractmethod
    def failure(self, status: Status, error: str) -> JudgeOutput:
        """The output of a row that was never judged (missing input, bad input, errored target)."""

    @property
    @abstractmethod
    def value_columns(self) -> tuple[Column, ...]:
        """The judge's own columns, before the generic ones."""

    @property
    def label(self) -> str:
        """The kind in a word, for listings (``rubric``, ``pairwise``...; a simple judge: its judgment
        type)."""
        if self.config.rubric_judge_params is not None:
            return "rubric"
        return self.config.judge_params.judgment_type.value

    @property
    def judgment_fields(self) -> tuple[str, ...]:
        """The judgment fields a panel can combine across judges (none for judges that only score)."""
        return tuple(f.name for f in self.spec.judgment_fields)

    def describe(self) -> list[str]:
        """What the judge answers, in a few lines: format, fields, token bound and constraint."""
        guided = "on" if self.spec.guided else "off"
        lines = [
            f"response format {self.config.judge_params.response_format.value}, guided decoding {guided}"
        ]
        lines.append("output fields:")
        for f in self.spec.fields:
            labels = f" {list(f.labels)}" if f.labels else ""
            scores = f" scores {dict(f.scores)}" if f.scores else ""
            lines.append(
                f"  {f.name}: {f.judgment_type.value if f.is_judgment else 'explanation'}{labels}{scores}"
            )
        rubric = self.config.rubric_judge_params
        if rubric is not None:
            weights = ", ".join(f"{c.id}={c.weight:g}" for c in rubric.criteria)
            lines.append(f"aggregation {rubric.aggregation.value}; weights {weights}")
        lines.append("output schema: " + json.dumps(self.spec.json_schema()))
        reasoning = self.config.judge_params.reasoning
        if reasoning is not None:
            lines.append(
                f"phase 1, reasoning: free text after {reasoning.start!r}, up to {reasoning.budget_tokens} "
                f"tokens, until {reasoning.end!r} (cut there and counted in reasoning_cut)"
            )
            lines.append("phase 2, the answer: after the reasoning, in the same turn, as below")
        lines.append(f"max tokens per answer {self.parts.max_tokens}")
        samples = self.config.judge_params.samples
        if samples > 1:
            lines.append(f"{samples} samples per row; the most common verdict is kept (sample_agreement)")
        constraint = self.spec.constraint(ALL_CONSTRAINT_KINDS)
        if constraint is not None:
            lines.append(f"constraint (regex): {constraint.regex}")
        return lines


class OneCallKind(JudgeKind):
    """A kind whose row is decided by the answers to its first step's requests, in one round (pointwise,
    pairwise, reward): it can also read answers handed to it directly (:meth:`finish`,
    :meth:`jurist.judges.judge.Judge.combine`). A rule (no request) and a RAG judge (several rounds) are
    not: their outputs come only from the steps ``start`` returns."""

    @abstractmethod
    def finish(self, answers: Sequence[Answer]) -> JudgeOutput | Step:
        """What the answers to the first step's requests (in request order) make of the row."""
