"""The neutral records between a judge and a model: what is sent (:class:`GenerationRequest`,
:class:`LabelRequest`, :class:`RewardRequest`, :class:`StateRequest`, made of :class:`Message` and a
:class:`Constraint`) and what comes back (:class:`Completion`, :class:`LabelScores`, :class:`RewardScores`,
:class:`HiddenState`), and what judges ask of an engine beyond generation (:class:`EngineUse`).

They sit at the bottom of jurist: answer formats, rendering and judges build them, and every engine adapter
(:mod:`jurist.backends`) reads them, without either depending on the other. The constraint travels in a
neutral form: each backend translates it into its engine's arguments. Each request type names the backend
method that answers it (``method``) and the engine capability that method needs (``capability``: None for
generation, which every engine has); :data:`FAILED` makes the answer a request gets when it cannot be
answered: the engine sends requests, and wrappers forward them, by these alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

FinishReason = Literal["stop", "length", "too_long", "error"]
Capability = Literal["label_scores", "hidden_states", "rewards"]
Pooling = Literal["last", "mean", "last_mean"]
"""Which tokens' states make a prompt's feature: its last token's; the mean over one text's tokens (a
response's, say: :class:`StateRequest`'s ``text``); or both, the last token's first (twice the width)."""
"""What an engine can do besides generating: score labels after a prefill, give a prompt's last hidden state
at a layer, run a sequence-classification (reward) model. The engine table says which engines can
(:data:`jurist.backends.registry.ENGINES`)."""


@dataclass(frozen=True)
class EngineUse:
    """What the judges on one engine ask of it besides generation, decided by their scoring modes
    (:mod:`jurist.scoring`), never by a config file: ``label_scores`` (a judge reads label probabilities: the
    output projection runs in float32 where the engine can) and ``hidden_states_layer`` (a judge reads
    prompts' last hidden states after this many transformer layers: the engine may load the model cut
    there, for hidden states only) and ``token_states`` (a judge reads pooled states, which need every
    token's state from the engine)."""

    label_scores: bool = False
    hidden_states_layer: int | None = None
    token_states: bool = False

    @classmethod
    def states(cls, layer: int, pooling: Pooling) -> EngineUse:
        """The use of an engine that gives states after ``layer``, pooled as ``pooling`` says (every token's
        state where the feature is pooled)."""
        return cls(hidden_states_layer=layer, token_states=pooling != "last")

    def merged(self, other: EngineUse) -> EngineUse:
        """The use of an engine that serves both (their hidden-state layers must agree: they share the key
        of one engine)."""
        return EngineUse(
            self.label_scores or other.label_scores,
            self.hidden_states_layer or other.hidden_states_layer,
            self.token_states or other.token_states,
        )


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


ConstraintKind = Literal["regex", "choice", "json_schema"]
ALL_CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = ("regex", "choice", "json_schema")


@dataclass(frozen=True)
class Constraint:
    """What the output must look like, independent of any engine: exactly one of

    * ``regex``: a full-match pattern for one answer;
    * ``choices``: a closed set of whole answers;
    * ``json_schema``: the JSON schema of the answer object.

    Which one is set is checked when the constraint is built, as vLLM checks its structured-output parameters.
    A backend says which kinds it accepts (``Backend.constraint_kinds``); each backend has one function that
    turns a constraint into its engine's parameters.
    """

    regex: str | None = None
    choices: tuple[str, ...] | None = None
    json_schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        given = [name for name in ("regex", "choices", "json_schema") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "a Constraint holds exactly one of regex, choices or json_schema; "
                f"got {', '.join(given) or 'none'}"
            )
        if self.choices is not None and not self.choices:
            raise ValueError("a choice constraint needs at least one choice")

    @property
    def kind(self) -> ConstraintKind:
        if self.regex is not None:
            return "regex"
        return "choice" if self.choices is not None else "json_schema"


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to complete.

    ``messages`` start with the judge's shared prefix (system instruction, criteria, few-shot turns) and
    end with the row's user turn. ``seed`` is set when sampling (temperature > 0) so reruns agree.
    ``logprobs`` asks for that many top log-probabilities per generated token (None: none).
    ``min_tokens`` makes the answer at least that long (benchmarks use it to force equal lengths; the
    vLLM backend honours it, the others ignore it). ``prefix`` is text the assistant's turn already
    begins with, after the chat template's generation prompt (a judge's reasoning, ended): the completion
    continues it and does not repeat it.
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
    prefix: str = ""

    method: ClassVar[str] = "generate"
    action: ClassVar[str] = "generate"
    capability: ClassVar[Capability | None] = None


@dataclass(frozen=True)
class Completion:
    """The answer to one request.

    ``finish_reason``: ``stop`` (ended on its own), ``length`` (hit max_tokens), ``too_long`` (the prompt
    exceeds the model's context; nothing was generated) or ``error`` (``error`` says what failed).
    ``token_logprobs`` holds, per generated token, its top alternatives as {token text: logprob}, and
    ``tokens`` the generated tokens' texts, when log-probabilities were asked for.
    """

    text: str
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    error: str | None = None
    token_logprobs: tuple[Mapping[str, float], ...] | None = None
    tokens: tuple[str, ...] | None = None


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

    method: ClassVar[str] = "score_labels"
    action: ClassVar[str] = "score labels"
    capability: ClassVar[Capability | None] = "label_scores"


@dataclass(frozen=True)
class LabelScores:
    """The answer to a :class:`LabelRequest`: ``logprobs`` maps each label to log P(label | prompt) under
    the full vocabulary (not renormalized over the labels); ``finish_reason`` as for :class:`Completion`."""

    logprobs: Mapping[str, float] | None
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    error: str | None = None


@dataclass(frozen=True)
class RewardRequest:
    """Score a whole conversation with a reward model or classifier: ``messages`` end with the assistant's
    response, and the model's chat template is applied as it expects (no generation prompt)."""

    messages: tuple[Message, ...]

    method: ClassVar[str] = "score_rewards"
    action: ClassVar[str] = "run a reward model or classifier"
    capability: ClassVar[Capability | None] = "rewards"


@dataclass(frozen=True)
class RewardScores:
    """The answer to a :class:`RewardRequest`: the model's raw output ``logits`` (one for a reward model,
    one per label for a classifier); ``finish_reason`` as for :class:`Completion`."""

    logits: tuple[float, ...] | None
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    error: str | None = None


@dataclass(frozen=True)
class StateRequest:
    """Ask for the hidden state of a prompt's last token after ``layer`` transformer layers (1 = the first
    layer's output), passed through the model's final norm, as vLLM's pooling runner returns it for a model
    cut after that layer (LAST pooling, no normalisation). The prompt is the chat template's, then
    ``answer_prefix`` (the assistant's turn begun, as a :class:`LabelRequest` reads its labels after it).
    ``pooling`` other than ``last`` asks for the mean of the states of ``text``'s tokens (where it last
    occurs in the prompt), alone or after the last token's state."""

    messages: tuple[Message, ...]
    layer: int
    answer_prefix: str = ""
    pooling: Pooling = "last"
    text: str = ""

    method: ClassVar[str] = "hidden_states"
    action: ClassVar[str] = "read hidden states"
    capability: ClassVar[Capability | None] = "hidden_states"


@dataclass(frozen=True)
class HiddenState:
    """The answer to a :class:`StateRequest`: ``values``, a float32 vector of the model's hidden size (twice
    it for ``last_mean`` pooling; a NumPy array), or None; ``finish_reason`` as for :class:`Completion`."""

    values: Any
    finish_reason: FinishReason = "stop"
    prompt_tokens: int = 0
    error: str | None = None


Request = GenerationRequest | LabelRequest | RewardRequest | StateRequest
Answer = Completion | LabelScores | RewardScores | HiddenState


FAILED: Mapping[type[Request], Callable[[str], Answer]] = {
    GenerationRequest: lambda error: Completion("", "error", error=error),
    LabelRequest: lambda error: LabelScores(None, "error", error=error),
    RewardRequest: lambda error: RewardScores(None, "error", error=error),
    StateRequest: lambda error: HiddenState(None, "error", error=error),
}
"""Per request type, the answer a request gets when it cannot be answered (the error says why)."""
REQUEST_TYPES: tuple[type[Request], ...] = (GenerationRequest, LabelRequest, RewardRequest, StateRequest)
"""Every request type, in the order the engine sends a round's requests."""
