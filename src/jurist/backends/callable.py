"""A function ``fn(prompt, system) -> str`` as a backend (scikit-plots' ``make_llm`` convention).

Each request becomes one call: ``system`` is the text of its system messages, ``prompt`` the text of the
others, joined by blank lines. ``fn`` may return a string (a finished answer) or a
:class:`~jurist.records.Completion` (to report, say, an answer cut off at a length limit). It
enforces no constraint (``constraint_kinds`` is empty), so its answers are read as an unconstrained
model's are. An exception raised by ``fn``, or an answer that is not text, becomes that request's
``error`` completion: it never stops the batch. ``max_workers`` > 1 calls ``fn`` from that many threads
(for functions that wait on a remote service).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jurist.records import Completion, ConstraintKind, GenerationRequest

PromptFn = Callable[[str, str], Any]


def split_messages(request: GenerationRequest) -> tuple[str, str]:
    """``(prompt, system)`` of a request: the non-system messages' text and the system messages' text."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    prompt = "\n\n".join(m.content for m in request.messages if m.role != "system")
    return prompt, system


def _name(fn: PromptFn) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


class CallableBackend:
    """Calls ``fn(prompt, system)`` once per request. ``model_id`` names it in results (default:
    ``callable:<the function's name>``)."""

    def __init__(self, fn: PromptFn, *, model_id: str | None = None, max_workers: int = 1) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable as fn(prompt, system), got {type(fn).__name__}")
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.fn = fn
        self.max_workers = max_workers
        self._model_id = model_id or f"callable:{_name(fn)}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]:
        return ()

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        if self.max_workers == 1 or len(requests) < 2:
            return [self._one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: GenerationRequest) -> Completion:
        prompt, system = split_messages(request)
        try:
            answer = self.fn(prompt, system)
        except Exception as exc:
            return Completion("", "error", error=f"{type(exc).__name__}: {exc}")
        if isinstance(answer, Completion):
            return answer
        if not isinstance(answer, str):
            return Completion(
                "", "error", error=f"{self._model_id} returned a {type(answer).__name__}, not text"
            )
        return Completion(answer, "stop")

    def describe(self) -> dict[str, str]:
        return {"engine": "callable"}

    def close(self) -> None:
        pass
