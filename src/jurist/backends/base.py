"""The backend seam: what the engine sends to a model, what comes back, and the protocol between them.

A backend turns a batch of :class:`GenerationRequest` into one :class:`Completion` per request, in
request order. It owns everything engine-specific (argument names, tokenization, prompt-length checks,
constraint compilation); the engine owns nothing of that. The constraint travels in a neutral form
(:class:`Constraint`): each backend translates it into its engine's arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

FinishReason = Literal["stop", "length", "too_long", "error"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Constraint:
    """What the output must look like, independent of any engine.

    ``regex`` is a full-match pattern for one answer (the primary constraint); ``json_schema`` is the
    same answer's JSON schema when the format is JSON (for servers that take schemas). ``choices`` is a
    closed set of whole answers, when the answer is a bare label.
    """

    regex: str | None = None
    json_schema: Mapping[str, Any] | None = None
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to complete.

    ``messages`` start with the judge's shared prefix (system instruction, criteria, few-shot turns) and
    end with the row's user turn. ``seed`` is set when sampling (temperature > 0) so reruns agree.
    ``logprobs`` asks for that many top log-probabilities per generated token (None: none).
    ``min_tokens`` makes the answer at least that long (benchmarks use it to force equal lengths; the
    vLLM backend honours it, the others ignore it).
    """

    messages: tuple[Message, ...]
    max_tokens: int
    min_tokens: int = 0
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int | None = None
    min_p: float = 0.0
    seed: int | None = None
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    stop: tuple[str, ...] = ()
    constraint: Constraint | None = None
    logprobs: int | None = None
    label_tokens: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Completion:
    """The answer to one request.

    ``finish_reason``: ``stop`` (ended on its own), ``length`` (hit max_tokens), ``too_long`` (the prompt
    exceeds the model's context; nothing was generated) or ``error`` (``error`` says what failed).
    ``token_logprobs`` holds, per generated token, its top alternatives as {token text: logprob}, when
    asked for. ``label_logprobs`` holds {label: logprob} for a label-distribution request.
    """

    text: str
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    error: str | None = None
    token_logprobs: tuple[Mapping[str, float], ...] | None = None
    tokens: tuple[str, ...] | None = None
    label_logprobs: Mapping[str, float] | None = field(default=None)


@dataclass(frozen=True)
class LabelRequest:
    """Ask for the probability of each label as the start of the answer, after one prefill.

    The assistant's turn is taken to begin with ``answer_prefix`` (e.g. ``{"judgment": "``); each label
    is scored as the text that follows it, then ``answer_suffix`` when ``with_suffix`` (needed when one
    label is a prefix of another, so that "good" is not credited with "goodish"'s mass).
    """

    messages: tuple[Message, ...]
    labels: tuple[str, ...]
    answer_prefix: str = ""
    answer_suffix: str = ""
    with_suffix: bool = False


@dataclass(frozen=True)
class LabelScores:
    """The answer to a :class:`LabelRequest`: ``logprobs`` maps each label to log P(label | prompt) under
    the full vocabulary (not renormalized over the labels); ``finish_reason`` as for :class:`Completion`."""

    logprobs: Mapping[str, float] | None
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    error: str | None = None


@runtime_checkable
class LabelScorer(Protocol):
    """A backend that can score labels without decoding (``judge_params.scoring: LOGPROBS``)."""

    def score_labels(self, requests: Sequence[LabelRequest]) -> list[LabelScores]: ...


@runtime_checkable
class Backend(Protocol):
    """A model that completes batches of chat prompts.

    ``generate`` must return exactly one completion per request, in request order, and must not raise
    for a problem with one request (that request's completion carries ``finish_reason`` ``too_long`` or
    ``error``). ``model_id`` names the model for provenance.
    """

    @property
    def model_id(self) -> str: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]: ...

    def close(self) -> None: ...
