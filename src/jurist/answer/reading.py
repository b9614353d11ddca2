"""Reading one model answer: a completion (or label scores) -> status, typed values, label distributions.

:class:`AnswerReader` is built once per judge (its label fields' contexts are fixed) and reads every
answer the same way:

* a completion that did not end well keeps its reason: ``too_long`` (nothing was generated),
  ``backend_error``, ``truncated`` (it hit ``max_tokens``);
* otherwise it is parsed (:func:`~jurist.answer.parsing.parse_completion`): ``parse_error`` with the reason,
  or ``ok`` with a typed value for every field;
* label fields (LOGPROBS scoring, or ``label_probabilities`` in generation) also get their distribution:
  from the label scores of one prefill, or from the top log-probabilities of the generated token where the
  value begins.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from jurist.answer.fields import OutputField
from jurist.answer.format_base import LabelContext
from jurist.answer.labels import LabelDistribution, distribution, generated_distribution
from jurist.answer.parsing import parse_completion
from jurist.answer.spec import OutputSpec
from jurist.records import Completion, LabelScores

ReadStatus = Literal["ok", "parse_error", "truncated", "too_long", "backend_error"]


@dataclass(frozen=True)
class Reading:
    """One answer, read. ``values`` holds a typed value for every field when ``status`` is ``ok``, else
    nothing; ``distributions`` the label fields' distributions that could be read."""

    status: ReadStatus
    values: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    raw: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    distributions: Mapping[str, LabelDistribution] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class AnswerReader:
    """Reads the answers of one judge. ``label_fields``: the fields whose distributions are read;
    ``max_tokens``: the answer's token budget (named when an answer is cut off)."""

    def __init__(self, spec: OutputSpec, label_fields: tuple[OutputField, ...], max_tokens: int) -> None:
        self.spec = spec
        self.label_fields = label_fields
        self.max_tokens = max_tokens
        # fixed per judge, read on every row: computed once here
        self.contexts: dict[str, LabelContext] = {f.name: spec.label_context(f) for f in label_fields}
        self._by_text = {
            name: {text: label for label, text in context.texts.items()}
            for name, context in self.contexts.items()
        }
        self._keys = {  # each label as a JSON key, for the raw answer of label scores
            name: {label: json.dumps(label) for label in context.texts}
            for name, context in self.contexts.items()
        }
        self._top_values: dict[str, Mapping[str, Any]] = {}  # a label answer's parsed values, by top label

    def read_answer(self, answer: object) -> Reading:
        """A completion or a LOGPROBS label-scores answer, read."""
        if isinstance(answer, LabelScores):
            return self.read_labels(answer)
        if isinstance(answer, Completion):
            return self.read(answer)
        raise TypeError(f"a generative judge reads completions or label scores, not {type(answer).__name__}")

    def read(self, completion: Completion) -> Reading:
        """Parse one completion (and read its label fields' distributions when asked for)."""
        tokens: dict[str, Any] = {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
        }
        if completion.finish_reason == "too_long":
            return Reading(
                "too_long", error=completion.error or "prompt exceeds the model's context", **tokens
            )
        if completion.finish_reason == "error":
            return Reading(
                "backend_error", error=completion.error or "engine error", raw=completion.text, **tokens
            )
        if completion.finish_reason == "length":
            error = f"the answer hit max_tokens ({self.max_tokens}) before it ended"
            return Reading("truncated", error=error, raw=completion.text, **tokens)
        parsed = parse_completion(completion.text, self.spec)
        if not parsed.ok:
            return Reading("parse_error", error=parsed.error, raw=completion.text, **tokens)
        found = {}
        for f in self.label_fields:
            generated = self._generated_distribution(f, completion)
            if generated is not None:
                found[f.name] = generated
        return Reading("ok", parsed.values, raw=completion.text, distributions=found, **tokens)

    def _generated_distribution(self, f: OutputField, completion: Completion) -> LabelDistribution | None:
        if completion.tokens is None or completion.token_logprobs is None:
            return None
        start = self.spec.value_offset(f, completion.text)
        if start is None:
            return None
        context = self.contexts[f.name]
        return generated_distribution(
            f,
            context.texts,
            context.suffix,
            start,
            completion.text,
            completion.tokens,
            completion.token_logprobs,
        )

    def read_labels(self, scores: LabelScores) -> Reading:
        """LOGPROBS scoring: the most likely label is the judgment; the distribution comes with it."""
        tokens: dict[str, Any] = {"prompt_tokens": scores.prompt_tokens, "completion_tokens": 0}
        if scores.finish_reason == "too_long":
            return Reading("too_long", error=scores.error or "prompt exceeds the model's context", **tokens)
        if scores.finish_reason != "stop" or scores.logprobs is None:
            return Reading("backend_error", error=scores.error or "no label scores", **tokens)
        f = self.label_fields[0]
        context = self.contexts[f.name]
        by_text = self._by_text[f.name]
        logprobs = scores.logprobs
        try:
            found = distribution(f, {by_text[text]: lp for text, lp in logprobs.items()})
        except (KeyError, ValueError) as exc:
            return Reading("backend_error", error=f"unusable label scores: {exc}", **tokens)
        values = self._top_values.get(found.top)
        if values is None:
            values = parse_completion(self.spec.render_answer({f.name: found.top}), self.spec).values
            self._top_values[found.top] = values
        raw = _json_object(
            self._keys[f.name], {label: logprobs[text] for label, text in context.texts.items()}
        )
        return Reading("ok", dict(values), raw=raw, distributions={f.name: found}, **tokens)


def _json_object(keys: Mapping[str, str], values: Mapping[str, Any]) -> str:
    """``json.dumps(values)`` of a mapping whose keys are given as JSON already (``keys``), written directly
    when every value is a finite float (as ``json.dumps`` writes one: its ``repr``)."""
    if all(type(v) is float and math.isfinite(v) for v in values.values()):
        return "{" + ", ".join(f"{keys[k]}: {float.__repr__(v)}" for k, v in values.items()) + "}"
    return json.dumps(dict(values))
