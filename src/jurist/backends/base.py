"""The backend seam: the protocols between the engine and a model.

A backend turns a batch of :class:`~jurist.records.GenerationRequest` into one
:class:`~jurist.records.Completion` per request, in request order, and, where its engine can, label requests
into label scores, reward requests into reward scores and state requests into hidden states (each request
type names its method). It owns everything engine-specific (argument names, tokenization, prompt-length
checks, constraint compilation); the engine owns nothing of that. The records themselves are neutral
(:mod:`jurist.records`); :func:`call` sends one type of request to the method that answers it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from jurist.records import (
    FAILED,
    Answer,
    Completion,
    ConstraintKind,
    GenerationRequest,
    HiddenState,
    LabelRequest,
    LabelScores,
    Request,
    RewardRequest,
    RewardScores,
    StateRequest,
)


class RequestFeed(Protocol):
    """Where a streaming backend takes its requests from: up to ``n`` at a time, each with a key that its
    answer is returned with. An empty list means nothing is ready now; once the backend has nothing in
    flight either, the stream is over."""

    def take(self, n: int) -> list[tuple[int, GenerationRequest]]: ...


@runtime_checkable
class StreamingBackend(Protocol):
    """A backend that keeps its engine full across chunks: it takes requests from a feed while earlier ones
    decode and yields each answer as soon as it is done, in any order, with its key. Like ``generate`` it
    must not raise for a problem with one request."""

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]: ...


@runtime_checkable
class Backend(Protocol):
    """A model that completes batches of chat prompts.

    ``generate`` must return exactly one completion per request, in request order, and must not raise
    for a problem with one request (that request's completion carries ``finish_reason`` ``too_long`` or
    ``error``). ``model_id`` names the model for provenance. ``constraint_kinds`` lists the constraint kinds
    the backend enforces, in its order of preference (empty: it enforces none).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]: ...

    def close(self) -> None: ...


def describe(backend: Backend) -> dict[str, Any]:
    """What a backend runs, for a run's provenance: its ``describe()`` when it has one (model path,
    revision, weights fingerprint, engine and versions), else its model id."""
    method = getattr(backend, "describe", None)
    described: dict[str, Any] = dict(method()) if callable(method) else {}
    return {"model": backend.model_id, **described}


class Forwarding:
    """A backend wrapper (the lazy backend, data-parallel workers, the bench's timer) that sends every
    request type but generation through one method, :meth:`forward`."""

    def forward(self, kind: type[Request], requests: Sequence[Request]) -> list[Answer]:
        raise NotImplementedError

    def score_labels(self, requests: Sequence[LabelRequest]) -> list[LabelScores]:
        return self.forward(LabelRequest, requests)  # type: ignore[return-value]

    def score_rewards(self, requests: Sequence[RewardRequest]) -> list[RewardScores]:
        return self.forward(RewardRequest, requests)  # type: ignore[return-value]

    def hidden_states(self, requests: Sequence[StateRequest]) -> list[HiddenState]:
        return self.forward(StateRequest, requests)  # type: ignore[return-value]


def call(backend: object, kind: type[Request], requests: Sequence[Request]) -> list[Answer]:
    """Requests of one type answered by the backend's method for it (``kind.method``), in order; when the
    backend has no such method, each gets a failed answer (:data:`~jurist.records.FAILED`) saying so."""
    method = getattr(backend, kind.method, None)
    if method is None:
        message = f"backend {type(backend).__name__} cannot {kind.action}"
        return [FAILED[kind](message) for _ in requests]
    answers: list[Answer] = method(requests)
    return answers
