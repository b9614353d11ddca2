"""A compiled judge: config + output spec + prompt builder, and the steps around inference.

For one row, :meth:`Judge.requests_for` gives the generation requests (one here; a pairwise judge gives
one per order) and :meth:`Judge.combine` turns their completions into one
:class:`~jurist.results.JudgeOutput` (parse, score, aggregate, status). :meth:`Judge.value_columns` and
:meth:`Judge.row_values` say which typed columns the judge writes. Only a missing template value raises
(:class:`~jurist.templates.MissingValue`, which the engine turns into ``missing_input``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.backends.base import Completion, Constraint, GenerationRequest, LabelRequest, LabelScores, Message
from jurist.config import JudgeConfig, ScoringMode, load_judge_config
from jurist.logprobs import (
    LabelDistribution,
    distribution,
    generated_distribution,
    label_context,
    value_offset,
)
from jurist.parsing import parse_completion
from jurist.prompts import PromptBuilder
from jurist.results import JudgeOutput
from jurist.schema import OutputSpec, build_output_spec
from jurist.scoring import aggregate, score_fields
from jurist.templates import NAMESPACE_ROOTS, MissingValue, build_namespace, lookup

UNGUIDED_MAX_TOKENS = 1024
TOP_LOGPROBS = 20  # alternatives per generated token when label probabilities are read in generation
Request = GenerationRequest | LabelRequest
Answer = Completion | LabelScores


class Judge:
    """One judge, ready to render rows and read answers. Build with :meth:`from_config`."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.name: str = config.name or "judge"
        self.spec: OutputSpec = build_output_spec(config)
        self.prompt = PromptBuilder(config, self.spec)
        self.prompt_hash = self.prompt.fingerprint()
        self.schema_hash = self.spec.fingerprint()
        regex = self.spec.regex() if self.spec.guided else None
        self.constraint: Constraint | None = (
            Constraint(
                regex=regex,
                json_schema=self.spec.json_schema() if self.spec.response_format.value == "JSON" else None,
            )
            if regex is not None
            else None
        )
        self.logprob_scoring = config.judge_params.scoring is ScoringMode.LOGPROBS
        self.label_fields = [
            f
            for f in self.spec.judgment_fields
            if f.labels is not None and (self.logprob_scoring or config.judge_params.label_probabilities)
        ]
        # fixed per judge, read on every row: computed once here
        self.label_contexts = {f.name: label_context(self.spec, f) for f in self.label_fields}
        self.column_names: tuple[str, ...] = tuple(name for name, _ in self.value_columns())

    @classmethod
    def from_config(
        cls,
        config: str | Path | JudgeConfig | Mapping[str, Any],
        overrides: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
    ) -> Judge:
        """Load (see :func:`~jurist.config.load_judge_config`) and compile a judge: a
        :class:`~jurist.pairwise.PairwiseJudge` for configs with ``pairwise_judge_params``."""
        return compile_judge(load_judge_config(config, overrides, name=name))

    @property
    def required_fields(self) -> set[str]:
        return self.prompt.required_fields

    @property
    def max_tokens(self) -> int:
        """Tokens allowed per answer: max_new_tokens if set, else the schema's bound (guided) or 1024."""
        configured = self.config.inference_config.generation.max_new_tokens
        if configured is not None:
            return configured
        return self.spec.max_tokens() if self.spec.guided else UNGUIDED_MAX_TOKENS

    def missing_columns(self, columns: set[str]) -> list[str]:
        """The inputs this judge needs that a dataset with ``columns`` lacks (quoted, for messages)."""
        return [repr(name) for name in sorted(self.required_fields - columns)]

    # ---------------------------------------------------------------------------------- row level
    def requests_for(self, row: Mapping[str, Any]) -> list[Request]:
        """The requests one row needs (raises :class:`~jurist.templates.MissingValue`)."""
        return [self.request(self.render(row))]

    def target_error(self, row: Mapping[str, Any]) -> str | None:
        """The error an errored target carries (``judge_params.target_error_field``), else None."""
        path = self.config.judge_params.target_error_field
        if not path:
            return None
        steps = tuple(path.split("."))
        value = lookup(row, steps)
        if value is None and steps[0] in NAMESPACE_ROOTS:  # e.g. output.error, derived from columns
            value = lookup(build_namespace(row), steps)
        return str(value) if value not in (None, "") else None

    def target_failure(self, error: str) -> JudgeOutput:
        """The output for an errored target: not judged; the error also stands in the explanation."""
        output = self.failure("target_error", f"the target errored: {error}")
        if "explanation" in output.field_values:
            output.field_values["explanation"] = f"target error: {error}"
        return output

    def combine(self, completions: Sequence[Answer]) -> JudgeOutput:
        """The row's output from the answers to :meth:`requests_for`, in the same order."""
        answer = completions[0]
        if isinstance(answer, LabelScores):
            return self.interpret_labels(answer)
        return self.interpret(answer)

    def value_columns(self) -> list[tuple[str, str]]:
        """(column suffix, Arrow kind) of the judge's own columns: each field, each judgment's score, raw."""
        columns: list[tuple[str, str]] = []
        for f in self.spec.fields:
            columns.append((f.name, f.arrow_kind if f.is_judgment else "string"))
            if f.is_judgment:
                columns.append((f"{f.name}_score", "float64"))
        for f in self.label_fields:
            assert f.labels is not None
            columns += [(f"{f.name}_p.{label}", "float64") for label in f.labels]
            columns += [
                (f"{f.name}_confidence", "float64"),
                (f"{f.name}_entropy", "float64"),
                (f"{f.name}_expected", "float64"),
            ]
        columns.append(("raw", "string"))
        return columns

    def row_values(self, output: JudgeOutput) -> dict[str, Any]:
        """One output's values for :meth:`value_columns`."""
        values: dict[str, Any] = {name: output.extras.get(name) for name in self.column_names}
        values["raw"] = output.raw
        for f in self.spec.fields:
            values[f.name] = output.field_values.get(f.name)
            if f.is_judgment:
                values[f"{f.name}_score"] = output.field_scores.get(f.name)
        return values

    def render(self, row: Mapping[str, Any]) -> tuple[Message, ...]:
        """The messages for one row (raises :class:`~jurist.templates.MissingValue`)."""
        return self.prompt.render(row)

    def request(self, messages: tuple[Message, ...]) -> Request:
        """The request for rendered messages: a label-scoring request in LOGPROBS scoring, else a
        generation request (see :meth:`generation_request`)."""
        if self.logprob_scoring:
            field = self.label_fields[0]
            context = self.label_contexts[field.name]
            return LabelRequest(
                messages,
                tuple(context.texts[label] for label in field.labels or ()),
                context.prefix,
                context.suffix,
                context.needs_suffix,
            )
        return self.generation_request(messages)

    def generation_request(self, messages: tuple[Message, ...]) -> GenerationRequest:
        """The generation request for rendered messages. A per-row seed is derived from the prompt's
        content when sampling, so a rerun gives the same verdicts."""
        gen = self.config.inference_config.generation
        seed = None
        if gen.temperature > 0:
            digest = hashlib.sha256(json.dumps([m.as_dict() for m in messages]).encode()).digest()
            seed = (int.from_bytes(digest[:4], "big") ^ (gen.seed or 0)) & 0x7FFFFFFF
        return GenerationRequest(
            messages=messages,
            max_tokens=self.max_tokens,
            temperature=gen.temperature,
            top_p=gen.top_p,
            top_k=gen.top_k,
            min_p=gen.min_p,
            seed=seed,
            frequency_penalty=gen.frequency_penalty,
            presence_penalty=gen.presence_penalty,
            stop=tuple(gen.stop_strings),
            constraint=self.constraint,
            logprobs=TOP_LOGPROBS if self.label_fields else None,
        )

    def interpret(self, completion: Completion) -> JudgeOutput:
        """Parse and score one completion."""
        tokens: dict[str, Any] = {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
        }
        nothing: dict[str, Any] = {"field_values": self._nothing(), "field_scores": self._nothing()}
        if completion.finish_reason == "too_long":
            return JudgeOutput(
                "too_long",
                error=completion.error or "prompt exceeds the model's context",
                **nothing,
                **tokens,
            )
        if completion.finish_reason == "error":
            return JudgeOutput(
                "backend_error",
                error=completion.error or "engine error",
                raw=completion.text,
                **nothing,
                **tokens,
            )
        if completion.finish_reason == "length":
            return JudgeOutput(
                "truncated",
                error=f"the answer hit max_tokens ({self.max_tokens}) before it ended",
                raw=completion.text,
                **nothing,
                **tokens,
            )
        parsed = parse_completion(completion.text, self.spec)
        if not parsed.ok:
            return JudgeOutput("parse_error", error=parsed.error, raw=completion.text, **nothing, **tokens)
        output = self.score(parsed.values, raw=completion.text, **tokens)
        for f in self.label_fields:
            found = self._generated_distribution(f, completion)
            if found is not None:
                output.extras.update(self._distribution_columns(f, found))
        return output

    def _generated_distribution(self, f: Any, completion: Completion) -> LabelDistribution | None:
        if completion.tokens is None or completion.token_logprobs is None:
            return None
        start = value_offset(self.spec, f, completion.text)
        if start is None:
            return None
        context = self.label_contexts[f.name]
        return generated_distribution(
            f,
            context.texts,
            context.suffix,
            start,
            completion.text,
            completion.tokens,
            completion.token_logprobs,
        )

    @staticmethod
    def _distribution_columns(f: Any, found: LabelDistribution) -> dict[str, Any]:
        columns: dict[str, Any] = {f"{f.name}_p.{label}": p for label, p in found.probs.items()}
        columns[f"{f.name}_confidence"] = found.confidence
        columns[f"{f.name}_entropy"] = found.entropy
        columns[f"{f.name}_expected"] = found.expected_score
        return columns

    def interpret_labels(self, scores: LabelScores) -> JudgeOutput:
        """The output of LOGPROBS scoring: the most likely label as the judgment, the distribution, and
        the expected score as the row's score."""
        tokens: dict[str, Any] = {"prompt_tokens": scores.prompt_tokens, "completion_tokens": 0}
        nothing: dict[str, Any] = {"field_values": self._nothing(), "field_scores": self._nothing()}
        if scores.finish_reason == "too_long":
            return JudgeOutput(
                "too_long", error=scores.error or "prompt exceeds the model's context", **nothing, **tokens
            )
        if scores.finish_reason != "stop" or scores.logprobs is None:
            return JudgeOutput("backend_error", error=scores.error or "no label scores", **nothing, **tokens)
        field = self.label_fields[0]
        context = self.label_contexts[field.name]
        by_text = {text: label for label, text in context.texts.items()}
        try:
            found = distribution(field, {by_text[text]: lp for text, lp in scores.logprobs.items()})
        except (KeyError, ValueError) as exc:
            return JudgeOutput("backend_error", error=f"unusable label scores: {exc}", **nothing, **tokens)
        parsed = parse_completion(self.spec.render_answer({field.name: found.top}), self.spec)
        raw = json.dumps({label: scores.logprobs[context.texts[label]] for label in context.texts})
        output = self.score(parsed.values, raw=raw, **tokens)
        output.extras.update(self._distribution_columns(field, found))
        return JudgeOutput(
            output.status,
            output.field_values,
            output.field_scores,
            output.aggregate_score,
            found.expected_score,
            raw=raw,
            extras=output.extras,
            **tokens,
        )

    def score(self, values: dict[str, Any], *, raw: str | None = None, **tokens: Any) -> JudgeOutput:
        """A successful output from typed values: field scores, aggregate and the row's score."""
        field_scores = score_fields(self.spec.fields, values)
        rubric = self.config.rubric_judge_params
        if rubric is not None:
            agg = aggregate(
                [field_scores[c.id] for c in rubric.criteria],
                [c.weight for c in rubric.criteria],
                rubric.aggregation,
            )
            return JudgeOutput("ok", values, field_scores, agg, agg, raw=raw, **tokens)
        return JudgeOutput("ok", values, field_scores, None, field_scores.get("judgment"), raw=raw, **tokens)

    def failure(self, status: str, error: str) -> JudgeOutput:
        """An output for a row that was never sent (missing input, bad input, errored target)."""
        nothing = self._nothing()
        return JudgeOutput(status, dict(nothing), nothing, error=error)  # type: ignore[arg-type]

    def _nothing(self) -> dict[str, Any]:
        """None for every output field: what a row without a usable answer reports."""
        return dict.fromkeys(f.name for f in self.spec.fields)

    def provenance(self, model_id: str) -> dict[str, str]:
        return {"model": model_id, "prompt_hash": self.prompt_hash, "schema_hash": self.schema_hash}


def compile_judge(config: JudgeConfig) -> Judge:
    """The judge a config describes: pairwise or not."""
    if config.is_pairwise:
        from jurist.pairwise import PairwiseJudge

        return PairwiseJudge(config)
    return Judge(config)


def missing_message(exc: MissingValue) -> str:
    return f"field {exc.placeholder!r} is missing or null"
