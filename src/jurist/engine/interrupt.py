"""Stopping a run cleanly when asked to: Ctrl-C, a scheduler's SIGTERM or SIGHUP, or a time limit.

Inside :func:`stop_on_signals`, SIGTERM and SIGHUP (what Slurm, Kubernetes and a closed terminal send) and
the end of ``max_runtime`` raise :class:`Stopped` in the main thread, a kind of ``KeyboardInterrupt``, so
they take the same path as Ctrl-C: no further request is sent, the chunks committed so far stay committed
(each commit is atomic, see :mod:`jurist.io.parts`), the backends are closed, and a rerun of the same
command resumes. Only the first signal raises; later ones, while the run tidies up, are ignored. A signal
ignored when the run starts (SIGHUP under ``nohup``) stays ignored.

Exit codes follow the shell's convention, 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM, 129 for
SIGHUP; a run stopped by ``--max-runtime`` exits 124, as ``timeout(1)`` does.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from jurist.errors import JuristError
from jurist.io.parts import running_metadata

EXIT_INTERRUPTED = 130
EXIT_MAX_RUNTIME = 124
_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([dhms])")


class Stopped(KeyboardInterrupt):
    """A run stopped from outside: ``reason`` says by what, ``exit_code`` is what the command exits with."""

    def __init__(self, reason: str, exit_code: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exit_code = exit_code


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``3h30m``, ``90m``, ``1d2h``, ``45s`` or a plain number of seconds."""
    value = text.strip().lower()
    try:
        seconds = float(value)
    except ValueError:
        parts = _DURATION.findall(value)
        if not parts or "".join(n + u for n, u in parts) != value.replace(" ", ""):
            raise JuristError(
                f"--max-runtime: cannot read {text!r} as a duration (for example 3h30m, 90m, 45s)"
            ) from None
        seconds = sum(float(number) * _UNITS[unit] for number, unit in parts)
    if seconds <= 0:
        raise JuristError(f"--max-runtime must be more than 0 seconds, got {text!r}")
    return seconds


@contextmanager
def stop_on_signals(max_runtime: float | None = None, *, label: str | None = None) -> Iterator[None]:
    """Within the body, SIGTERM and SIGHUP, and the end of ``max_runtime`` seconds (``label``: how the limit
    was written), raise :class:`Stopped`. Outside the main thread nothing is installed (Python lets only the
    main thread handle signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        if fired:
            return  # tidying up after the first: let it finish
        fired = True
        if signum == signal.SIGALRM:
            raise Stopped(
                f"stopped at the time limit (--max-runtime {label or max_runtime})", EXIT_MAX_RUNTIME
            )
        raise Stopped(f"stopped by {signal.Signals(signum).name}", 128 + signum)

    watched = [signal.SIGTERM, signal.SIGHUP] + ([signal.SIGALRM] if max_runtime else [])
    # a signal ignored on purpose stays ignored (``nohup`` ignores SIGHUP so that a run outlives its terminal)
    watched = [s for s in watched if signal.getsignal(s) is not signal.SIG_IGN]
    previous: dict[int, Any] = {s: signal.signal(s, stop) for s in watched}
    if max_runtime:
        signal.setitimer(signal.ITIMER_REAL, max_runtime)
    try:
        yield
    finally:
        if max_runtime:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stopped_message(reason: str, output: Path | None) -> str:
    """What a stopped run prints: why, what is kept, and that a rerun resumes."""
    running = running_metadata(output) if output is not None else None
    if running is None:
        kept = "no chunk was committed yet"
    else:
        total = running.get("rows")  # the input's rows, when known
        of = f" of {total}" if isinstance(total, int) else ""
        kept = (
            f"{running.get('committed_rows', 0)}{of} rows are committed in {running.get('parts', 0)} part(s) "
            f"beside {output}"
        )
    return f"{reason}: {kept}; rerun the same command to resume"
