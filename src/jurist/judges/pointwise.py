"""Pointwise judges (simple and rubric): one prompt per row, one answer, typed fields and scores.

A row is rendered once; its answer is read (:class:`~jurist.answer.reading.AnswerReader`) and scored
(:class:`~jurist.answer.scoring.Scorer`). In LOGPROBS scoring the row's score is the expected score of the
judgment's label distribution; label fields also get ``<field>_p.<label>``, ``_confidence``, ``_entropy``
and ``_expected`` columns.

With ``judge_params.samples`` N > 1 (self-consistency), the row is sent N times with distinct seeds, and
the samples vote (:func:`vote`): the verdict (the tuple of the judgment fields' values) most samples gave
wins, the first sample that gave it is the row's output (its explanation, fields and score), and
``sample_agreement`` is the share of the N samples that gave it (a sample that failed to parse counts
against it). ``samples_agreeing``, ``samples_ok`` and ``sample_score_mean`` (the mean score of the usable
samples) go beside it; the token counts are the samples' sums.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import pyarrow as pa

from jurist.answer.fields import OutputField, labels_for
from jurist.answer.labels import LabelDistribution
from jurist.answer.reading import Reading
from jurist.answer.spec import explanation_field
from jurist.config.models import JudgeConfig
from jurist.judges.base import OneCallKind, Step
from jurist.judges.columns import RAW_COLUMN, Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.records import Answer, ConstraintKind


def distribution_columns(name: str, found: LabelDistribution) -> dict[str, Any]:
    """The extra values of one label field's distribution, by column suffix."""
    columns: dict[str, Any] = {f"{name}_p.{label}": p for label, p in found.probs.items()}
    columns[f"{name}_confidence"] = found.confidence
    columns[f"{name}_entropy"] = found.entropy
    columns[f"{name}_expected"] = found.expected_score
    return columns


def _score_column(name: str) -> Column:
    return Column(f"{name}_score", pa.float64(), lambda o, _p: o.field_scores.get(name))


class PointwiseJudge(OneCallKind):
    """A simple or rubric judge."""

    kind_name = "pointwise"

    @classmethod
    def output_fields(cls, config: JudgeConfig) -> tuple[OutputField, ...]:
        """A rubric judge's fields: per criterion its explanation (unless switched off), then its judgment;
        a simple judge's: :meth:`JudgeKind.output_fields`."""
        rubric = config.rubric_judge_params
        if rubric is None:
            return super().output_fields(config)
        cap = config.judge_params.max_explanation_chars
        fields: list[OutputField] = []
        for c in rubric.criteria:
            if c.include_explanation:
                why = f"why you judged {c.id} as you did"
                fields.append(explanation_field(f"{c.id}_explanation", why, cap, c.id))
            labels = labels_for(c.judgment_type, c.judgment_scores)
            fields.append(
                OutputField(
                    c.id, "judgment", c.judgment_type, c.description, labels, c.judgment_scores, cap, c.id
                )
            )
        return tuple(fields)

    def failure(self, status: Status, error: str) -> JudgeOutput:
        nothing = self._nothing()
        values = dict(nothing)
        if status == "target_error":
            if "explanation" in values:  # the target's error also stands in the explanation
                values["explanation"] = f"target error: {error}"
            error = f"the target errored: {error}"
        return JudgeOutput(status, values, nothing, error=error)

    @property
    def samples(self) -> int:
        """How many times each row is judged (``judge_params.samples``)."""
        return self.config.judge_params.samples

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        messages = self.parts.prompt.render(row)
        if self.samples > 1:
            requests = tuple(self.parts.generation_request(messages, kinds, k) for k in range(self.samples))
            return Step(requests, self.finish)
        return Step((self.parts.request(messages, kinds, row),), self.finish)

    def finish(self, answers: Sequence[Answer]) -> JudgeOutput:
        """The row's output from its answer (with repeated samples: from their vote)."""
        outputs = [self.output(self.parts.read(answer)) for answer in answers]
        if len(outputs) == 1:
            return outputs[0]
        return vote(outputs, tuple(f.name for f in self.spec.judgment_fields))

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
        if self.parts.reads_labels:
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
        if self.samples > 1:
            columns.append(extra_column(AGREEMENT))
            columns += [extra_column(AGREEING, "int64"), extra_column(USABLE, "int64")]
            columns.append(extra_column(SCORE_MEAN))
        columns.append(RAW_COLUMN)
        return tuple(columns)


AGREEMENT = "sample_agreement"
AGREEING = "samples_agreeing"
USABLE = "samples_ok"
SCORE_MEAN = "sample_score_mean"


def vote(outputs: Sequence[JudgeOutput], fields: Sequence[str]) -> JudgeOutput:
    """One row's output from its repeated samples (see the module): the first sample giving the verdict
    most samples gave (ties: the verdict given first), with the samples' agreement, counts, mean score and
    summed tokens. When no sample is usable, the first sample's failure, its error prefixed with the count."""
    prompt_tokens = sum(o.prompt_tokens or 0 for o in outputs)
    completion_tokens = sum(o.completion_tokens or 0 for o in outputs)
    usable = [o for o in outputs if o.ok]
    if not usable:
        first = outputs[0]
        extras = {**first.extras, AGREEMENT: None, AGREEING: 0, USABLE: 0, SCORE_MEAN: None}
        error = f"none of {len(outputs)} samples was usable; the first: {first.error}"
        return replace(
            first,
            error=error,
            extras=extras,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
    verdicts = [tuple(o.field_values.get(name) for name in fields) for o in usable]
    winner, count = Counter(verdicts).most_common(1)[0]
    chosen = usable[verdicts.index(winner)]
    scores = [o.score for o in usable if o.score is not None]
    extras = {
        **chosen.extras,
        AGREEMENT: count / len(outputs),
        AGREEING: count,
        USABLE: len(usable),
        SCORE_MEAN: sum(scores) / len(scores) if scores else None,
    }
    return replace(chosen, extras=extras, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
