"""A backend that answers from a script and records exactly what it was sent (for tests and dry runs).

It goes through the same door as the real engines: the engine cannot tell it apart. The script is a
callable ``(request) -> str | Completion`` or a sequence of answers consumed in order (cycled when
``cycle=True``). ``labels`` scripts label scoring (``judge_params.scoring: LOGPROBS``): a callable
``(label_request) -> {label text: log-probability}`` or a :class:`LabelScores`; ``rewards`` scripts reward
models (reward judges): ``(reward_request) -> logits`` or a :class:`RewardScores`; ``states`` scripts hidden
states (``judge_params.scoring: PROBE``): ``(state_request) -> vector`` or a :class:`HiddenState`.
``constraint_kinds`` says
which constraints it claims to enforce (all, by default), so tests can play any engine.
:class:`ScriptedStreamingBackend` also streams, answering out of order as an engine kept full does.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from jurist.backends.base import RequestFeed
from jurist.records import (
    ALL_CONSTRAINT_KINDS,
    Completion,
    ConstraintKind,
    GenerationRequest,
    HiddenState,
    LabelRequest,
    LabelScores,
    RewardRequest,
    RewardScores,
    StateRequest,
)

Answer = str | Completion


class ScriptedBackend:
    """Returns scripted completions; ``requests`` and ``calls`` record what was sent (``record=False``
    keeps only the call sizes, for runs too long to hold every request)."""

    def __init__(
        self,
        script: Callable[[GenerationRequest], Answer] | Sequence[Answer],
        *,
        model_id: str = "scripted",
        cycle: bool = False,
        max_prompt_chars: int | None = None,
        labels: Callable[[LabelRequest], Mapping[str, float] | LabelScores] | None = None,
        rewards: Callable[[RewardRequest], Sequence[float] | RewardScores] | None = None,
        states: Callable[[StateRequest], Any] | None = None,
        constraint_kinds: tuple[ConstraintKind, ...] = ALL_CONSTRAINT_KINDS,
        record: bool = True,
    ) -> None:
        self._model_id = model_id
        self._record = record
        self._constraint_kinds = constraint_kinds
        self._fn: Callable[[GenerationRequest], Answer] | None = None
        self._answers: Iterator[Answer] | None = None
        if callable(script):
            self._fn = script
        else:
            answers = list(script)
            self._answers = itertools.cycle(answers) if cycle else iter(answers)
        self.max_prompt_chars = max_prompt_chars
        self._labels = labels
        self._rewards = rewards
        self._states = states
        self.state_requests: list[StateRequest] = []
        self.reward_requests: list[RewardRequest] = []
        self.label_requests: list[LabelRequest] = []
        self.requests: list[GenerationRequest] = []
        self.calls: list[int] = []
        self.closed = False

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]:
        return self._constraint_kinds

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        self.calls.append(len(requests))
        out: list[Completion] = []
        for request in requests:
            if self._record:
                self.requests.append(request)
            prompt_chars = sum(len(m.content) for m in request.messages)
            if self.max_prompt_chars is not None and prompt_chars > self.max_prompt_chars:
                out.append(Completion("", "too_long", prompt_tokens=prompt_chars, error="prompt too long"))
                continue
            answer = self._next(request)
            if isinstance(answer, Completion):
                out.append(answer)
            else:
                out.append(
                    Completion(answer, "stop", prompt_tokens=prompt_chars, completion_tokens=len(answer))
                )
        return out

    def describe(self) -> dict[str, str]:
        return {"engine": "scripted"}

    def _scripted(
        self,
        requests: Sequence[Any],
        name: str,
        record: list[Any],
        answer: Callable[[Any, int], Any],
    ) -> list[Any]:
        """Each request's answer from the script ``name`` (``labels``, ``rewards``, ``states``): as scripted
        when it is already the answer type, else ``answer(value, prompt chars)``."""
        self.calls.append(len(requests))
        script: Callable[[Any], Any] | None = getattr(self, f"_{name}")
        if script is None:
            raise RuntimeError(f"ScriptedBackend has no {name} script (pass {name}=...)")
        out = []
        for request in requests:
            if self._record:
                record.append(request)
            value = script(request)
            given = isinstance(value, LabelScores | RewardScores | HiddenState)
            out.append(value if given else answer(value, sum(len(m.content) for m in request.messages)))
        return out

    def score_rewards(self, requests: Sequence[RewardRequest]) -> list[RewardScores]:
        """Scripted reward-model outputs (logits), one entry per request."""
        made = lambda v, _n: RewardScores(tuple(v), "stop")  # noqa: E731
        return self._scripted(requests, "rewards", self.reward_requests, made)

    def score_labels(self, requests: Sequence[LabelRequest]) -> list[LabelScores]:
        """Scripted label log-probabilities, one entry per request."""
        made = lambda v, n: LabelScores(dict(v), "stop", prompt_tokens=n)  # noqa: E731
        return self._scripted(requests, "labels", self.label_requests, made)

    def hidden_states(self, requests: Sequence[StateRequest]) -> list[HiddenState]:
        """Scripted hidden states, one per request."""
        made = lambda v, n: HiddenState(np.asarray(v, dtype=np.float32), "stop", prompt_tokens=n)  # noqa: E731
        return self._scripted(requests, "states", self.state_requests, made)

    def _next(self, request: GenerationRequest) -> Answer:
        if self._fn is not None:
            return self._fn(request)
        assert self._answers is not None
        try:
            return next(self._answers)
        except StopIteration:
            raise RuntimeError("ScriptedBackend ran out of scripted answers") from None

    def close(self) -> None:
        self.closed = True


class ScriptedStreamingBackend(ScriptedBackend):
    """A scripted backend that streams: ``window`` requests in flight, answered in a shuffled order."""

    def __init__(self, *args: Any, window: int = 64, stream_seed: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.window = window
        self._stream_seed = stream_seed

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]:
        """Streaming: take up to ``window`` requests at a time and answer them in a shuffled order
        (seeded), as an engine that finishes short answers first would."""
        order = random.Random(self._stream_seed)
        while taken := feed.take(self.window):
            answers = self.generate([request for _, request in taken])
            positions = list(range(len(taken)))
            order.shuffle(positions)
            for position in positions:
                yield taken[position][0], answers[position]
