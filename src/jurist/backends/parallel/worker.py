"""The worker side of :mod:`jurist.backends.parallel.pool`: one process, one real backend, requests from a
pipe.

:func:`worker_main` places the process (its GPUs or cores come in its environment), builds its backend
with the picklable factory, says ``ready`` (model id, constraint kinds, how many requests to keep in
flight, its description) or ``failed``, then serves: requests to stream arrive tagged with an epoch (a newer
epoch drops queued older ones; answers go back under the epoch and key they came with), and synchronous
calls (``generate``, ``score_labels``, ``hidden_states``, an optional method such as
``reset_prefix_cache``) are answered in turn.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from jurist.backends.base import Backend, StreamingBackend, call
from jurist.records import REQUEST_TYPES, Completion, GenerationRequest

logger = logging.getLogger("jurist")

DEFAULT_WINDOW = 64  # requests per worker for a backend that neither streams nor names a batch size


def worker_main(conn: Connection, factory: Callable[[], Backend], env: dict[str, str]) -> None:
    """A worker process: place itself, build its backend, then serve requests until told to close."""
    place(env)
    try:
        backend = factory()
    except BaseException as exc:  # the parent reports it, naming this worker
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    streams = isinstance(backend, StreamingBackend)
    window = getattr(backend, "stream_window", None) if streams else None
    if not isinstance(window, int):
        batch = getattr(backend, "batch_size", None)
        window = 2 * batch if isinstance(batch, int) else DEFAULT_WINDOW
    describe = getattr(backend, "describe", None)
    conn.send(
        (
            "ready",
            {
                "model_id": backend.model_id,
                "constraint_kinds": tuple(backend.constraint_kinds),
                "window": window,
                "describe": dict(describe()) if callable(describe) else {},
            },
        )
    )
    try:
        _Server(conn, backend, streams, window).serve()
    finally:
        backend.close()


def place(env: dict[str, str]) -> None:
    """Put this process where its environment says (from :func:`~jurist.backends.parallel.pool.placements`):
    its GPUs through ``CUDA_VISIBLE_DEVICES``, or its share of the cores (``JURIST_CPU_CORES``)."""
    os.environ.update(env)
    cores = env.get("JURIST_CPU_CORES")
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


class _Server:
    """The worker's loop: requests to stream arrive tagged with an epoch (a newer epoch drops queued older
    ones), synchronous calls (generate, score_labels, hidden_states) are answered in turn."""

    def __init__(self, conn: Connection, backend: Backend, streams: bool, window: int) -> None:
        self.conn, self.backend, self.streams, self.window = conn, backend, streams, window
        self.queue: deque[tuple[int, int, GenerationRequest]] = deque()
        self.calls: deque[tuple[int, str, list[Any]]] = deque()
        self.epoch = 0
        self.closing = False
        # the engine sees ids of the worker's own; each maps back to the epoch and key it was sent with
        self.ids = itertools.count()
        self.taken: dict[int, tuple[int, int]] = {}

    def serve(self) -> None:
        while not self.closing:
            if self.calls:
                self._call(*self.calls.popleft())
            elif self.queue:
                self._stream()
            else:
                self._handle(self.conn.recv())

    def _handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "stream":
            self._advance(message[1])
            self.queue.extend((message[1], key, request) for key, request in message[2])
        elif kind == "cancel":
            self._advance(message[1])
        elif kind == "call":
            self.calls.append((message[1], message[2], message[3]))
        elif kind == "close":
            self.closing = True

    def _advance(self, epoch: int) -> None:
        if epoch > self.epoch:
            self.epoch = epoch
            self.queue = deque(item for item in self.queue if item[0] >= epoch)

    def take(self, n: int) -> list[tuple[int, GenerationRequest]]:
        """The worker's feed: new messages first, then up to ``n`` queued requests of the current epoch."""
        while self.conn.poll():
            self._handle(self.conn.recv())
        out: list[tuple[int, GenerationRequest]] = []
        while self.queue and len(out) < n and not self.closing:
            epoch, key, request = self.queue.popleft()
            if epoch == self.epoch:
                ident = next(self.ids)
                self.taken[ident] = (epoch, key)
                out.append((ident, request))
        return out

    def _send(self, answers: Sequence[tuple[int, Completion]]) -> None:
        """Answers back to the parent, each under the epoch and key its request came with."""
        by_epoch: dict[int, list[tuple[int, Completion]]] = {}
        for ident, completion in answers:
            epoch, key = self.taken.pop(ident)
            by_epoch.setdefault(epoch, []).append((key, completion))
        for epoch, items in by_epoch.items():
            self.conn.send(("answers", epoch, items))

    def _stream(self) -> None:
        try:
            if self.streams:
                for ident, completion in self.backend.stream(self):  # type: ignore[attr-defined]
                    self._send([(ident, completion)])
            else:
                while taken := self.take(self.window):
                    completions = self.backend.generate([request for _, request in taken])
                    self._send(list(zip([ident for ident, _ in taken], completions, strict=True)))
        except Exception as exc:
            logger.exception("data-parallel worker: the stream failed")
            epochs = {epoch for epoch, _ in self.taken.values()} | {self.epoch}
            self.queue.clear()
            self.taken.clear()
            for epoch in sorted(epochs):
                self.conn.send(("stream_failed", epoch, f"{type(exc).__name__}: {exc}"))

    def _call(self, call_id: int, kind: str, requests: list[Any]) -> None:
        try:
            if kind == "method":  # an optional method of the backend, without arguments (None: it has none)
                method = getattr(self.backend, requests[0], None)
                self.conn.send(("result", call_id, method() if callable(method) else None, None))
                return
            sent = next(t for t in REQUEST_TYPES if t.method == kind)  # the backend method it names
            result: list[Any] = call(self.backend, sent, requests)
            self.conn.send(("result", call_id, result, None))
        except Exception as exc:
            self.conn.send(("result", call_id, None, f"{type(exc).__name__}: {exc}"))
