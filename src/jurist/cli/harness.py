"""What every command that writes a durable output does around its run, written once: the output's lock,
the console (libraries' output to ``<output>.log``), signals and ``--max-runtime``, and the exit code of
each way a run can end (``jurist judge dataset`` and ``jurist batch`` use it)."""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Generic, TypeVar

from jurist.cli.common import EXIT_CRASH, EXIT_OK, EXIT_USAGE
from jurist.cli.console import run_console
from jurist.engine.interrupt import EXIT_INTERRUPTED, Stopped, stop_on_signals, stopped_message
from jurist.engine.summary import RunSummary
from jurist.errors import JuristError
from jurist.io.location import is_url
from jurist.io.lock import OutputLock
from jurist.launch import Launch

logger = logging.getLogger("jurist")
T = TypeVar("T")


@dataclass(frozen=True)
class Ended(Generic[T]):
    """How a run ended: its result (None unless it finished), the line to print on stderr, the exit code
    and the log file the libraries wrote to."""

    result: T | None
    problem: str | None
    code: int
    log: Path | None


def log_path(output: str | Path, *, kept: bool = True) -> Path | None:
    """Where the libraries' output goes during a run: ``<output>.log`` beside a kept output (a folder's
    beside the folder; a URL's in this machine's temporary folder), else nowhere."""
    if not kept:
        return None
    text = str(output)
    if is_url(text):
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", text.split("://", 1)[1]).strip("_")
        folder = Path(tempfile.gettempdir()) / "jurist-logs"
        folder.mkdir(exist_ok=True)
        return folder / f"{name}.log"
    path = Path(text)
    return path.with_name(path.name + ".log") if path.parent.is_dir() else None


def run_guarded(
    run: Callable[[IO[str] | None], T],
    *,
    output: str | Path,
    lock: OutputLock | None,
    close: Callable[[], None],
    verbose: bool = False,
    quiet: bool = False,
    kept: bool = True,
    runtime: float | None = None,
    runtime_label: str | None = None,
) -> Ended[T]:
    """Call ``run(progress)`` (``progress``: the stream for the progress line, None with ``quiet``) with the
    libraries' output in the log, SIGTERM, SIGHUP and ``runtime`` seconds stopping it as Ctrl-C does, and
    turn how it ended into an exit code: 0 done, 2 a :class:`~jurist.errors.JuristError`, 124/129/130/143
    stopped (the committed chunks kept: the message says to rerun, unless the output is not ``kept``), 1 any
    other error (its traceback in the log). ``close`` (the engine's models) and the lock's release always
    run. The lock must be held (None: the run takes its own, a results dataset's lease)."""
    log = log_path(output, kept=kept)
    where = output if kept else None
    result: T | None = None
    problem, code = None, EXIT_OK
    with run_console(log, verbose=verbose) as console:
        try:
            with stop_on_signals(runtime, label=runtime_label):
                result = run(None if quiet else console.err)
        except JuristError as exc:
            problem, code = f"error: {exc}", EXIT_USAGE
        except Stopped as exc:
            problem, code = stopped_message(exc.reason, where), exc.exit_code
        except KeyboardInterrupt:
            problem, code = stopped_message("interrupted", where), EXIT_INTERRUPTED
        except Exception as exc:
            logger.exception("the run failed")
            details = f" (details in {log})" if log is not None else ""
            problem, code = f"error: {type(exc).__name__}: {exc}{details}", EXIT_CRASH
        finally:
            close()
            if lock is not None:
                lock.release()
    return Ended(result, problem, code, log)


@dataclass(frozen=True)
class Guard:
    """:func:`run_guarded`'s settings for one output, and a launched judge run through it."""

    output: str | Path
    lock: OutputLock | None
    verbose: bool = False
    quiet: bool = False
    kept: bool = True

    def run(
        self,
        launched: Launch,
        *,
        overwrite: bool = False,
        runtime: float | None = None,
        runtime_label: str | None = None,
    ) -> Ended[RunSummary]:
        """Run ``launched`` into the output under the guard; its models are closed after."""
        return run_guarded(
            lambda progress: launched.run(
                self.output, overwrite=overwrite, progress=progress, lock=self.lock
            ),
            output=self.output,
            lock=self.lock,
            close=launched.close,
            verbose=self.verbose,
            quiet=self.quiet,
            kept=self.kept,
            runtime=runtime,
            runtime_label=runtime_label,
        )
