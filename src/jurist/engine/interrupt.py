"""Stopping a run cleanly when asked to: Ctrl-C, a scheduler's SIGTERM or SIGHUP, or a time limit.

Inside :func:`stop_on_signals`, SIGTERM and SIGHUP (what Slurm, Kubernetes and a closed terminal send) and
the end of ``max_runtime`` raise :class:`Stopped` in the main thread, a kind of ``KeyboardInterrupt``, so
they take the same path as Ctrl-C: no further request is sent, the chunks committed so far stay committed
(each commit is atomic, see :mod:`jurist.io.parts`), the backends are closed, and a rerun of the same
command resumes. Only the first signal raises; later ones, while the run tidies up, are ignored. A signal
ignored when the run starts (SIGHUP under ``nohup``) stays ignored.

A signal's handler runs wherever the main thread is, and that can be inside a finaliser (an object's
``__del__``, a weakref callback, the garbage collector), where Python prints an exception and drops it. A
dropped :class:`Stopped` would leave the run going, waiting on requests that a server holds back, for ever;
so it is caught on its way to ``sys.unraisablehook`` and the signal is sent to the main thread again, to
raise where it is not dropped.

Exit codes follow the shell's convention, 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM, 129 for
SIGHUP; a run stopped by ``--max-runtime`` exits 124, as ``timeout(1)`` does.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from jurist.errors import JuristError
from jurist.io.dataset import committed_units
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


class _Stopper:
    """The signal handler of one :func:`stop_on_signals` and its state: the Stopped raised (until a finaliser
    drops it), a signal to send again, and whether the body is over."""

    def __init__(self, max_runtime: float | None, label: str | None) -> None:
        self.limit = f"stopped at the time limit (--max-runtime {label or max_runtime})"
        self.out: tuple[int, Stopped] | None = None  # the signal whose Stopped is on its way up, and it
        self.pending: int | None = None  # a signal to send the main thread again
        self.in_hook = False
        self.over = False
        self.resenders: list[threading.Thread] = []
        self.hook = sys.unraisablehook

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.over or self.out is not None:
            return  # the body is over, or tidying up after the first: let it finish
        if self.in_hook:
            self.pending = signum  # raised in the hook, it would be dropped too: sent again after it
            return
        self.pending = None
        if signum == signal.SIGALRM:
            stopped = Stopped(self.limit, EXIT_MAX_RUNTIME)
        else:
            stopped = Stopped(f"stopped by {signal.Signals(signum).name}", 128 + signum)
        self.out = (signum, stopped)
        raise stopped

    def unraisable(self, unraisable: Any) -> None:
        """``sys.unraisablehook``: a Stopped that a finaliser dropped is raised again, by sending its signal
        to the main thread once the main thread is out of the hook (from another thread, so that it also
        ends a wait the main thread is in). Anything else goes to the hook there was before."""
        self.in_hook = True
        try:
            if self.out is not None and unraisable.exc_value is self.out[1]:
                self.pending, self.out = self.out[0], None
            else:
                self.hook(unraisable)
        finally:
            if self.pending is not None and not self.over:
                resender = threading.Thread(target=self._resend, name="jurist-stop", daemon=True)
                self.resenders.append(resender)
                resender.start()
            self.in_hook = False

    def _resend(self) -> None:
        main = threading.main_thread().ident
        assert main is not None
        while self.pending is not None and not self.over:
            time.sleep(0.02)
            signum = self.pending
            if signum is not None and not self.in_hook and not self.over:
                signal.pthread_kill(main, signum)

    def end(self) -> None:
        """The body is over: a signal still being sent again is ignored."""
        self.over = True
        for resender in self.resenders:
            resender.join()


@contextmanager
def stop_on_signals(max_runtime: float | None = None, *, label: str | None = None) -> Iterator[None]:
    """Within the body, SIGTERM and SIGHUP, and the end of ``max_runtime`` seconds (``label``: how the limit
    was written), raise :class:`Stopped`, also when the first one raised is dropped by a finaliser. Outside
    the main thread nothing is installed (Python lets only the main thread handle signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopper = _Stopper(max_runtime, label)
    watched = [signal.SIGTERM, signal.SIGHUP] + ([signal.SIGALRM] if max_runtime else [])
    # a signal ignored on purpose stays ignored (``nohup`` ignores SIGHUP so that a run outlives its terminal)
    watched = [s for s in watched if signal.getsignal(s) is not signal.SIG_IGN]
    previous: dict[int, Any] = {s: signal.signal(s, stopper) for s in watched}
    sys.unraisablehook = stopper.unraisable
    if max_runtime:
        signal.setitimer(signal.ITIMER_REAL, max_runtime)
    try:
        yield
    finally:
        stopper.end()
        if max_runtime:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = stopper.hook


def stopped_message(reason: str, output: str | Path | None) -> str:
    """What a stopped run prints: why, what is kept, and that a rerun resumes."""
    if output is not None:
        shards = committed_units(output)
        if shards is not None:
            return f"{reason}: {shards}; rerun the same command to resume"
    running = running_metadata(Path(output)) if output is not None else None
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
