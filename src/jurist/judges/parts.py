"""The parts every model-backed judge is made of, built once from its config.

* the output spec (fields in a response format) and the prompt builder;
* the :class:`~jurist.answer.reading.AnswerReader` that reads each answer;
* the :class:`~jurist.answer.scoring.Scorer` that scores typed values;
* the requests: a generation request per rendered prompt (its constraint, token bound and sampling), or a
  label-scoring request in LOGPROBS scoring.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from jurist.answer.fields import OutputField
from jurist.answer.reading import AnswerReader
from jurist.answer.scoring import Scorer
from jurist.answer.spec import OutputSpec, build_output_spec
from jurist.backends.base import (
    ALL_CONSTRAINT_KINDS,
    ConstraintKind,
    GenerationRequest,
    LabelRequest,
    Message,
    RewardRequest,
)
from jurist.config.models import JudgeConfig
from jurist.config.types import ScoringMode
from jurist.render.prompts import PromptBuilder

UNGUIDED_MAX_TOKENS = 1024
TOP_LOGPROBS = 20  # alternatives per generated token when label probabilities are read in generation
Request = GenerationRequest | LabelRequest | RewardRequest


class JudgeParts:
    """Spec, prompt, reader, scorer and request building of one judge config."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        jp = config.judge_params
        self.spec: OutputSpec = build_output_spec(config)
        self.prompt = PromptBuilder(config, self.spec)
        self.prompt_hash = self.prompt.fingerprint()
        self.schema_hash = self.spec.fingerprint()
        self.logprob_scoring = jp.scoring is ScoringMode.LOGPROBS
        wants_labels = self.logprob_scoring or jp.label_probabilities
        self.label_fields: tuple[OutputField, ...] = tuple(
            f for f in self.spec.judgment_fields if f.labels is not None and wants_labels
        )
        self.reader = AnswerReader(self.spec, self.label_fields, self.max_tokens)
        self.scorer = Scorer(self.spec.fields, config.rubric_judge_params)

    @property
    def max_tokens(self) -> int:
        """Tokens allowed per answer: max_new_tokens if set, else the schema's bound (guided) or 1024."""
        configured = self.config.inference_config.generation.max_new_tokens
        if configured is not None:
            return configured
        return self.spec.max_tokens() if self.spec.guided else UNGUIDED_MAX_TOKENS

    def request(
        self, messages: tuple[Message, ...], kinds: Sequence[ConstraintKind] = ALL_CONSTRAINT_KINDS
    ) -> Request:
        """The request for rendered messages: a label-scoring request in LOGPROBS scoring, else a
        generation request (see :meth:`generation_request`)."""
        if self.logprob_scoring:
            f = self.label_fields[0]
            context = self.reader.contexts[f.name]
            return LabelRequest(
                messages,
                tuple(context.texts[label] for label in f.labels or ()),
                context.prefix,
                context.suffix,
                context.needs_suffix,
            )
        return self.generation_request(messages, kinds)

    def generation_request(
        self, messages: tuple[Message, ...], kinds: Sequence[ConstraintKind] = ALL_CONSTRAINT_KINDS
    ) -> GenerationRequest:
        """The generation request for rendered messages, constrained with the first of ``kinds`` the
        answer format can express. When sampling, a per-row seed is derived from the prompt's content, so
        a rerun gives the same verdicts."""
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
            constraint=self.spec.constraint(kinds),
            logprobs=TOP_LOGPROBS if self.label_fields else None,
        )
