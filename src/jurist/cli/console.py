"""Keeping the terminal for jurist's own lines while a run goes on.

:func:`run_console` sends everything the libraries print (vLLM's and transformers' logs, native warnings,
their progress bars) to a log file beside the output, and gives jurist two streams on the terminal: one for
the progress line and the messages (stderr) and one for the summary (stdout). With ``verbose`` nothing is
redirected: the libraries print to the terminal as usual, and Python logs also go to the log file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

LIBRARY_LOGGERS = ("vllm", "transformers", "torch", "jurist")


@dataclass(frozen=True)
class Console:
    """jurist's streams on the terminal, and the log file the libraries write to."""

    out: TextIO
    err: TextIO
    log: Path | None


@contextlib.contextmanager
def run_console(log: Path | None, *, verbose: bool) -> Iterator[Console]:
    """For the ``with`` body: library output goes to ``log`` (unless ``verbose``); jurist writes to the
    streams of the returned :class:`Console`, which stay on the terminal."""
    os.environ.setdefault("VLLM_CONFIGURE_LOGGING", "0")  # vLLM's loggers then reach the root logger
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    err = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8")
    root = logging.getLogger()
    handlers: list[logging.Handler] = []
    log_fd: int | None = None
    if log is not None:
        handlers.append(logging.FileHandler(log, encoding="utf-8"))
    if verbose:
        handlers.append(logging.StreamHandler(err))
    previous_level = root.level
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    if log is not None and not verbose:
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
    try:
        yield Console(out, err, log)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(previous_level)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, *([log_fd] if log_fd is not None else [])):
            os.close(fd)
        out.close()
        err.close()
