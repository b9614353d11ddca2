"""The request window a streaming backend draws from, shared by judge runs
(:class:`jurist.engine.stream.Feed`) and OpenAI batch files (:mod:`jurist.openai_batch.runner`).

Chunks are opened in input order, at most ``max_open`` at once; each opened chunk puts its requests in the
queue under fresh integer keys, each key with the slot its answer goes to. The backend takes requests
(:meth:`RequestWindow.take` opens chunks as the queue runs dry) and answers them by key in any order
(:meth:`RequestWindow.slot`); chunks leave in input order once their owner says they are done
(:meth:`RequestWindow.finished`), which frees room for the next.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from jurist.records import GenerationRequest

S = TypeVar("S")  # an open chunk, as its owner keeps it
T = TypeVar("T")  # where a request's answer goes

MAX_OPEN_CHUNKS = 4
"""Chunks a stream keeps open by default: enough to keep an engine full while the first chunk's slowest
rows decode, few enough that a crash loses little uncommitted work."""


class RequestWindow(Generic[S, T]):
    """The open chunks (``open``, oldest first) and the queue of their requests not yet taken."""

    def __init__(self, max_open: int = MAX_OPEN_CHUNKS) -> None:
        self.max_open = max(1, max_open)
        self.open: deque[S] = deque()
        self._queue: deque[tuple[int, GenerationRequest]] = deque()
        self._slots: dict[int, T] = {}
        self._counter = itertools.count()

    @property
    def has_room(self) -> bool:
        """Another chunk may be opened."""
        return len(self.open) < self.max_open

    def put(self, items: Iterable[tuple[T, GenerationRequest]], *, front: bool = False) -> None:
        """Queue requests, each with the slot of its answer; ``front``: before those already queued (a
        follow-up round, so that its rows finish sooner)."""
        keyed = []
        for slot, request in items:
            key = next(self._counter)
            self._slots[key] = slot
            keyed.append((key, request))
        if front:
            self._queue.extendleft(reversed(keyed))
        else:
            self._queue.extend(keyed)

    def take(self, n: int, open_next: Callable[[], bool]) -> list[tuple[int, GenerationRequest]]:
        """Up to ``n`` queued requests with their keys; while the queue is empty and there is room,
        ``open_next()`` opens the next chunk (appending it to ``open`` and putting its requests; False at
        the end of the input)."""
        out: list[tuple[int, GenerationRequest]] = []
        while len(out) < n:
            if self._queue:
                out.append(self._queue.popleft())
            elif not (self.has_room and open_next()):
                break
        return out

    def slot(self, key: int) -> T:
        """Where the answer to the request taken under ``key`` goes (each key is answered once)."""
        return self._slots.pop(key)

    def finished(self, done: Callable[[S], bool]) -> Iterator[S]:
        """The open chunks at the head of the window that are ``done``, oldest first, removed."""
        while self.open and done(self.open[0]):
            yield self.open.popleft()
