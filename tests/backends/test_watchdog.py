"""The engine watchdog: a step that never returns is reported as stalled within its bound, a watched process
that dies is reported within a poll, and both leave the watchdog refusing every later step."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from jurist.backends.vllm.watchdog import Watchdog, Watched, child_processes
from jurist.errors import BackendError


def test_a_step_that_returns_or_raises_passes_through() -> None:
    watchdog = Watchdog("engine", lambda: [], stall_s=5, poll_s=0.05)
    assert watchdog.call(lambda: [1, 2]) == [1, 2]
    with pytest.raises(ZeroDivisionError):
        watchdog.call(lambda: 1 / 0)
    assert watchdog.call(lambda: "again") == "again" and not watchdog.broken
    watchdog.close()


def test_a_stalled_step_is_reported_within_its_bound() -> None:
    never = threading.Event()
    watchdog = Watchdog("vLLM on tiny", lambda: [], stall_s=1.0, poll_s=0.05)
    started = time.monotonic()
    with pytest.raises(
        BackendError, match=r"vLLM on tiny stalled: one engine step has not returned in 1 s"
    ) as error:
        watchdog.call(never.wait)
    waited = time.monotonic() - started
    assert 1.0 <= waited < 3.0
    assert "stall_timeout_s, is 1 s" in str(error.value) and "rerun the same command to resume" in str(
        error.value
    )
    assert watchdog.broken
    with pytest.raises(BackendError, match="stalled"):  # the engine is not used again
        watchdog.call(lambda: "late")
    never.set()
    watchdog.close()


def test_a_dead_engine_process_is_reported_within_a_poll() -> None:
    engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "fake-EngineCore"])
    try:
        processes = child_processes("fake-EngineCore")
        found = processes()
        assert [(p.name, p.pid) for p in found] == [("vLLM's engine process (EngineCore)", engine.pid)]
        watchdog = Watchdog("vLLM on tiny", processes, stall_s=None, poll_s=0.1)
        blocked = threading.Event()
        threading.Timer(0.5, lambda: engine.send_signal(signal.SIGKILL)).start()
        started = time.monotonic()
        with pytest.raises(BackendError) as error:
            watchdog.call(blocked.wait)  # waits forever, as vLLM's client did once its engine was gone
        assert time.monotonic() - started < 3.0
        message = str(error.value)
        assert "vLLM's engine process (EngineCore) died" in message and f"pid {engine.pid}" in message
        assert "rerun the same command to resume" in message
        blocked.set()
        watchdog.close()
    finally:
        engine.kill()
        engine.wait()


def test_without_a_bound_a_slow_step_is_not_a_stall() -> None:
    alive = Watched("engine", 1, lambda: True)
    watchdog = Watchdog("engine", lambda: [alive], stall_s=None, poll_s=0.05)
    assert watchdog.call(lambda: time.sleep(0.4) or "done") == "done"
    watchdog.close()
