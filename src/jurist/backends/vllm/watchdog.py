"""A watchdog on an engine that runs in processes of its own: a dead or stalled engine stops the run.

vLLM's engine core runs in a process of its own on GPUs (``VLLM_ENABLE_V1_MULTIPROCESSING=1``, vLLM's
default). When that process dies (killed, out of memory, a crashed kernel), vLLM usually raises
``EngineDeadError`` from the next ``step()``; but its client can also shut its output thread down first and
leave ``step()`` waiting forever on a queue nothing will fill (seen here: the run still waiting 300 s after
the engine core was killed, nothing on stderr). A long run then stops judging without a word.

:class:`Watchdog` runs each engine step on a daemon thread of its own and waits for it in slices of
``poll_s``: between slices it checks that every watched process is alive and that the step has not run past
``stall_s`` seconds. A dead process or a stall raises :class:`~jurist.errors.BackendError` naming what died
or stalled and how long it waited, which stops the run (exit 2 on the command line) with its committed
chunks kept, so a rerun resumes. A stalled step is left behind on its daemon thread, which does not keep
the process from exiting; the engine is not used again. A step that raises passes its exception on
unchanged.

An engine whose core runs in this process (vLLM's CPU default in jurist) has no process to lose and is not
watched: it dies with the run.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from jurist.errors import BackendError

T = TypeVar("T")


@dataclass(frozen=True)
class Watched:
    """A process the watchdog follows: what it is, its pid, and whether it is still alive."""

    name: str
    pid: int
    alive: Callable[[], bool]


DEFAULT_STALL_S = 900.0
"""How long one engine step may run before the engine counts as stalled: far above a long prefill (a
32k-token prompt on a 70B model takes seconds on GPUs, about a minute on a CPU); ``engine_params``
``stall_timeout_s`` changes it."""

RESUME = "the chunks committed so far are kept: rerun the same command to resume"


class Watchdog:
    """Runs engine steps on a daemon thread of its own, watching ``processes()`` (the engine's processes)
    every ``poll_s`` seconds and each step's length against ``stall_s`` (None: no bound). ``what`` names the
    engine in messages. The thread is a daemon, so a step stuck for good does not keep the process from
    exiting."""

    def __init__(
        self,
        what: str,
        processes: Callable[[], list[Watched]],
        *,
        stall_s: float | None = DEFAULT_STALL_S,
        poll_s: float = 1.0,
    ) -> None:
        self.what = what
        self.processes = processes
        self.stall_s = stall_s
        self.poll_s = poll_s
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._broken: BackendError | None = None
        self._thread = threading.Thread(target=self._work, name="jurist-engine-step", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job.result = job.step()
            except BaseException as exc:  # handed to the caller, whatever it is
                job.error = exc
            job.done.set()

    def call(self, step: Callable[[], T]) -> T:
        """``step()``'s result, or a :class:`BackendError` when the engine died or the step stalled (and on
        every call after that)."""
        if self._broken is not None:
            raise self._broken
        job = _Job(step)
        self._jobs.put(job)
        started = time.monotonic()
        while not job.done.wait(self.poll_s):
            waited = time.monotonic() - started
            dead = [p for p in self.processes() if not p.alive()]
            if dead:
                names = " and ".join(dict.fromkeys(p.name for p in dead))
                pids = ", ".join(str(p.pid) for p in dead)
                self._break(
                    f"{names} died (pid {pids}, {self.what}; noticed after waiting {waited:.0f} s for an "
                    f"engine step); {RESUME} (the engine's own log, beside the output, says why it died)"
                )
            if self.stall_s is not None and waited > self.stall_s:
                self._break(
                    f"{self.what} stalled: one engine step has not returned in {waited:.0f} s (the bound, "
                    f"engine_params.stall_timeout_s, is {self.stall_s:.0f} s) while requests are "
                    f"outstanding; {RESUME}"
                )
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[no-any-return]

    def _break(self, message: str) -> NoReturn:
        self._broken = BackendError(message)
        raise self._broken

    @property
    def broken(self) -> bool:
        """Whether the engine was found dead or stalled (it must not be used again)."""
        return self._broken is not None

    def close(self) -> None:
        """Let the step thread end (after a step still running, if one is)."""
        self._jobs.put(None)


@dataclass
class _Job:
    """One step handed to the step thread, and what came of it."""

    step: Callable[[], Any]
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


def child_processes(marker: str) -> Callable[[], list[Watched]]:
    """The watched processes: this process's descendants whose name or command line holds ``marker``
    (vLLM names its engine core ``VLLM::EngineCore``), found once at the first call and then followed."""
    found: list[Watched] | None = None

    def processes() -> list[Watched]:
        nonlocal found
        if found is None:
            found = _find(marker)
        return found

    return processes


def _find(marker: str) -> list[Watched]:
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with vLLM
        return []
    out: list[Watched] = []
    for child in psutil.Process().children(recursive=True):
        try:
            label = f"{child.name()} {' '.join(child.cmdline())}"
        except psutil.Error:
            continue
        if marker in label:
            out.append(Watched("vLLM's engine process (EngineCore)", child.pid, _alive(child)))
    return out


def _alive(process: Any) -> Callable[[], bool]:
    def alive() -> bool:
        try:
            return bool(process.is_running()) and process.status() != "zombie"
        except Exception:  # psutil.NoSuchProcess and its kind: gone
            return False

    return alive


def engine_watchdog(model: str, stall_s: float | None) -> Watchdog | None:
    """A watchdog on vLLM's engine-core process, when vLLM runs one (None: the core is in this process)."""
    processes = child_processes("EngineCore")
    if not processes():
        return None
    return Watchdog(f"vLLM on {model}", processes, stall_s=stall_s)
