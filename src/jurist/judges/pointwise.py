"""Pointwise judges (simple and rubric): one prompt per row, one answer, typed fields and scores.

A row is rendered once; its answer is read (:class:`~jurist.answer.reading.AnswerReader`) and scored
(:class:`~jurist.answer.scoring.Scorer`). In LOGPROBS scoring the row's score is the expected score of the
judgment's label distribution; label fields also get ``<field>_p.<label>``, ``_confidence``, ``_entropy``
and ``_expected`` columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import pyarrow as pa

from jurist.answer.labels import LabelDistribution
from jurist.answer.reading import Reading
from jurist.backends.base import ConstraintKind
from jurist.judges.base import Answer, JudgeKind, Step
from jurist.judges.columns import RAW_COLUMN, Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput, Status


def distribution_columns(name: str, found: LabelDistribution) -> dict[str, Any]:
    """The extra values of one label field's distribution, by column suffix."""
    columns: dict[str, Any] = {f"{name}_p.{label}": p for label, p in found.probs.items()}
    columns[f"{name}_confidence"] = found.confidence
    columns[f"{name}_entropy"] = found.entropy
    columns[f"{name}_expected"] = found.expected_score
    return columns


def _score_column(name: str) -> Column:
    return Column(f"{name}_score", pa.float64(), lambda o, _p: o.field_scores.get(name))


class PointwiseJudge(JudgeKind):
    """A simple or rubric judge."""

    kind_name = "pointwise"

    def failure(self, status: Status, error: str) -> JudgeOutput:
        nothing = self._nothing()
        values = dict(nothing)
        if status == "target_error":
            if "explanation" in values:  # the target's error also stands in the explanation
                values["explanation"] = f"target error: {error}"
            error = f"the target errored: {error}"
        return JudgeOutput(status, values, nothing, error=error)

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        request = self.parts.request(self.parts.prompt.render(row), kinds)
        return Step((request,), self.finish)

    def finish(self, answers: Sequence[Answer]) -> JudgeOutput:
        """The row's output from its one answer."""
        return self.output(self.parts.reader.read_answer(answers[0]))

    def output(self, reading: Reading) -> JudgeOutput:
        """A reading, scored: fields, scores, aggregate, label distributions."""
        tokens: dict[str, Any] = {
            "prompt_tokens": reading.prompt_tokens,
            "completion_tokens": reading.completion_tokens,
        }
        if not reading.ok:
            nothing = self._nothing()
            return JudgeOutput(
                reading.status, dict(nothing), nothing, error=reading.error, raw=reading.raw, **tokens
            )
        values = dict(reading.values)
        scores = self.parts.scorer.score(values)
        extras: dict[str, Any] = {}
        for name, found in reading.distributions.items():
            extras.update(distribution_columns(name, found))
        score = scores.score
        if self.parts.logprob_scoring:
            score = reading.distributions[self.parts.label_fields[0].name].expected_score
        return JudgeOutput(
            "ok", values, scores.fields, scores.aggregate, score, raw=reading.raw, extras=extras, **tokens
        )

    def _nothing(self) -> dict[str, Any]:
        """None for every output field: what a row without a usable answer reports."""
        return dict.fromkeys(f.name for f in self.spec.fields)

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        """Each field, each judgment's score, each label field's distribution, then the raw answer."""
        columns: list[Column] = []
        for f in self.spec.fields:
            columns.append(field_column(f.name, f.arrow_kind))
            if f.is_judgment:
                columns.append(_score_column(f.name))
        for f in self.parts.label_fields:
            columns += [extra_column(f"{f.name}_p.{label}") for label in f.labels or ()]
            columns += [extra_column(f"{f.name}_{part}") for part in ("confidence", "entropy", "expected")]
        columns.append(RAW_COLUMN)
        return tuple(columns)
