"""The parts every model-backed judge is made of, built once from its config.

* the output spec (fields in a response format) and the prompt builder;
* the :class:`~jurist.answer.reading.AnswerReader` that reads each answer;
* the :class:`~jurist.answer.scoring.Scorer` that scores typed values;
* the scoring mode (:mod:`jurist.scoring`), which makes each rendered prompt's request and reads its
  answer; the generation and label requests it builds them from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from jurist.answer.fields import OutputField
from jurist.answer.reading import AnswerReader, Reading
from jurist.answer.scoring import Scorer
from jurist.answer.spec import OutputSpec, build_output_spec
from jurist.config.models import JudgeConfig
from jurist.records import (
    ALL_CONSTRAINT_KINDS,
    Answer,
    Constraint,
    ConstraintKind,
    GenerationRequest,
    LabelRequest,
    Message,
    Request,
)
from jurist.render.prompts import PromptBuilder
from jurist.scoring import Scoring, scoring_for

UNGUIDED_MAX_TOKENS = 1024
TOP_LOGPROBS = 20  # alternatives per generated token when label probabilities are read in generation
SAMPLE_SEED_STEP = 1_000_003  # a prime: a row's repeated samples get seeds this far apart


class JudgeParts:
    """Spec, prompt, reader, scorer and request building of one judge config. Each part is built the first
    time it is used, so a kind that sends no prompt (a rule) or reads no answer (a reward model) builds
    none of what it does not use."""

    def __init__(self, config: JudgeConfig, fields: Callable[[JudgeConfig], Sequence[OutputField]]) -> None:
        self.config = config
        self.fields = fields
        """What gives the answer's fields: the judge kind's ``output_fields``."""
        self.scoring: Scoring = scoring_for(config)
        """The judge's scoring mode: its requests, the reading of their answers, what it asks of an engine."""
        self._constraints: dict[tuple[ConstraintKind, ...], Constraint | None] = {}

    @property
    def reads_labels(self) -> bool:
        """Whether the judgment is read from a label distribution after one prefill (LOGPROBS, PROBE)."""
        return self.scoring.reads_labels

    @cached_property
    def spec(self) -> OutputSpec:
        return build_output_spec(self.config, self.fields(self.config))

    @cached_property
    def prompt(self) -> PromptBuilder:
        return PromptBuilder(self.config, self.spec)

    @cached_property
    def prompt_hash(self) -> str:
        return self.prompt.fingerprint()

    @cached_property
    def schema_hash(self) -> str:
        return self.spec.fingerprint()

    @cached_property
    def label_fields(self) -> tuple[OutputField, ...]:
        """The judgment fields whose label probabilities are read (LOGPROBS scoring or
        ``label_probabilities``)."""
        wants_labels = self.reads_labels or self.config.judge_params.label_probabilities
        return tuple(f for f in self.spec.judgment_fields if f.labels is not None and wants_labels)

    @cached_property
    def label_texts(self) -> tuple[str, ...]:
        """The texts a label request scores (the first label field's labels as the answer writes them)."""
        if not self.label_fields:
            return ()
        f = self.label_fields[0]
        context = self.reader.contexts[f.name]
        return tuple(context.texts[label] for label in f.labels or ())

    @cached_property
    def reader(self) -> AnswerReader:
        return AnswerReader(self.spec, self.label_fields, self.max_tokens)

    @cached_property
    def scorer(self) -> Scorer:
        return Scorer(self.spec.fields, self.config.rubric_judge_params)

    @cached_property
    def max_tokens(self) -> int:
        """Tokens allowed per answer: max_new_tokens if set, else the schema's bound (guided) or 1024."""
        configured = self.config.inference_config.generation.max_new_tokens
        if configured is not None:
            return configured
        return self.spec.max_tokens() if self.spec.guided else UNGUIDED_MAX_TOKENS

    def constraint(self, kinds: Sequence[ConstraintKind]) -> Constraint | None:
        """The output spec's constraint for a backend accepting ``kinds``, built once per ``kinds``."""
        key = tuple(kinds)
        if key not in self._constraints:
            self._constraints[key] = self.spec.constraint(key)
        return self._constraints[key]

    def request(
        self,
        messages: tuple[Message, ...],
        kinds: Sequence[ConstraintKind] = ALL_CONSTRAINT_KINDS,
        row: Mapping[str, Any] | None = None,
    ) -> Request:
        """The request for messages rendered from ``row``, as the scoring mode makes it."""
        return self.scoring.request(self, messages, kinds, row)

    def read(self, answer: Answer) -> Reading:
        """An answer to :meth:`request`, read as the scoring mode reads it."""
        return self.scoring.read(self, answer)

    def label_request(self, messages: tuple[Message, ...]) -> LabelRequest:
        """The label-scoring request for rendered messages: the first label field's labels, after the
        answer's start."""
        return LabelRequest(messages, *self._label_request_rest)

    @cached_property
    def _label_request_rest(self) -> tuple[tuple[str, ...], str, str, bool]:
        """What every label request of the judge shares: the labels, the answer's prefix and suffix around
        them, and whether the suffix is scored too."""
        context = self.reader.contexts[self.label_fields[0].name]
        return self.label_texts, context.prefix, context.suffix, context.needs_suffix

    def generation_request(
        self,
        messages: tuple[Message, ...],
        kinds: Sequence[ConstraintKind] = ALL_CONSTRAINT_KINDS,
        sample: int = 0,
    ) -> GenerationRequest:
        """The generation request for rendered messages, constrained with the first of ``kinds`` the
        answer format can express. When sampling, a per-row seed is derived from the prompt's content (and
        the ``sample`` number, for a judge's repeated samples of one row), so a rerun gives the same
        verdicts."""
        gen = self.config.inference_config.generation
        seed = None
        if gen.temperature > 0:
            digest = hashlib.sha256(json.dumps([m.as_dict() for m in messages]).encode()).digest()
            seed = (int.from_bytes(digest[:4], "big") ^ (gen.seed or 0)) + sample * SAMPLE_SEED_STEP
            seed &= 0x7FFFFFFF
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
            constraint=self.constraint(kinds),
            logprobs=TOP_LOGPROBS if self.label_fields else None,
        )
