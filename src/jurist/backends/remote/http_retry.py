"""When a request to a remote server is tried again, how long to wait first, and when to give up.

A server that is only *busy* (``429``, or any retryable answer that carries ``Retry-After``) is waited for as
long as it asks, and those waits do not use up ``max_retries``; a *failure* (another 408/5xx answer, a
connection reset, no answer within the request timeout) uses up one retry. Every wait is exponential
(``retry_backoff_base`` doubling up to ``retry_backoff_max``) with jitter, so that many workers do not come
back in step, and never shorter than the server's ``Retry-After``.

Two caps keep a broken server from stalling a run for hours: one request waits at most
``max_retry_wait_s`` in all, and once the server has answered no request successfully for that long, no
request waits any more (each still makes its own first attempt, so a recovered server is noticed).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from dataclasses import dataclass, field

from jurist.config.inference import RemoteParams

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def retry_after_seconds(value: str | None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds: a number of seconds or an HTTP date (None when
    absent or unreadable)."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """How many failures a request may retry (``max_retries``), the first and longest backoff (``base``,
    ``longest``, seconds), and the most a request waits in all (``budget``, seconds)."""

    max_retries: int
    base: float
    longest: float
    budget: float

    @classmethod
    def from_params(cls, remote: RemoteParams, max_retries: int | None = None) -> RetryPolicy:
        return cls(
            max_retries=remote.max_retries if max_retries is None else max_retries,
            base=remote.retry_backoff_base,
            longest=max(remote.retry_backoff_max, remote.retry_backoff_base),
            budget=remote.max_retry_wait_s,
        )

    def backoff(self, retry: int, rng: random.Random) -> float:
        """The wait before retry number ``retry`` (0 for the first): half the exponential step fixed, half
        drawn at random ("equal jitter")."""
        step = min(self.longest, self.base * 2.0**retry)
        return step / 2 + rng.uniform(0.0, step / 2)


@dataclass
class ServerHealth:
    """What every request to one server shares: when it last answered a request successfully (or when the
    first request was sent, before any success)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _last_ok: float | None = None
    rng: random.Random = field(default_factory=random.Random)
    _stopped: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        """The run is stopping: requests waiting to retry give up at once."""
        self._stopped.set()

    def resume(self) -> None:
        self._stopped.clear()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds``; False when the run stopped meanwhile."""
        return not self._stopped.wait(seconds)

    def answered(self) -> None:
        with self._lock:
            self._last_ok = time.monotonic()

    def failing_for(self) -> float:
        """Seconds since the server last answered successfully (since the first request, before any)."""
        with self._lock:
            if self._last_ok is None:
                self._last_ok = time.monotonic()
            return time.monotonic() - self._last_ok

    def jitter(self, policy: RetryPolicy, retry: int) -> float:
        with self._lock:
            return policy.backoff(retry, self.rng)


class Attempts:
    """The retries of one request: call :meth:`wait_before_retry` after each failed attempt; it sleeps and
    returns None, or returns why the request gives up."""

    def __init__(self, policy: RetryPolicy, health: ServerHealth) -> None:
        self._policy = policy
        self._health = health
        self._started = time.monotonic()
        self._failures = 0
        self._waits = 0
        self._waited = 0.0

    def wait_before_retry(self, *, busy: bool, retry_after: float | None) -> str | None:
        policy = self._policy
        if not busy:
            self._failures += 1
            if self._failures > policy.max_retries:
                return f"after {policy.max_retries} retries (remote_params.max_retries)"
        down = self._health.failing_for()
        if down > policy.budget:
            return (
                f"the server has answered no request for {down:.0f} s "
                f"(more than remote_params.max_retry_wait_s {policy.budget:g} s)"
            )
        pause = max(self._health.jitter(policy, self._waits), retry_after or 0.0)
        if self._waited + pause > policy.budget:
            return (
                f"after {self._waits} retries in {time.monotonic() - self._started:.0f} s "
                f"(the next wait, {pause:.1f} s, would pass "
                f"remote_params.max_retry_wait_s {policy.budget:g} s)"
            )
        if not self._health.pause(pause):
            return "as the run is stopping"
        self._waits += 1
        self._waited += pause
        return None
