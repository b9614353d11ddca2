"""One writer per output: an OS file lock held for the whole life of a run.

The lock is ``<output>.lock`` beside the output, locked with ``flock``. The operating system releases it
when the process ends in any way (``kill -9`` included), so a lock left by a dead run never blocks: the next
run takes it. The file holds who took it (host, pid, start time), which a second run prints when it
is refused. On release the file is removed; a run that opened it just before checks, once it holds the lock,
that the file it locked is still the one at that path, and otherwise locks the new one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jurist.io.parts import OutputError

logger = logging.getLogger("jurist")


def lock_path(output: Path) -> Path:
    return output.with_name(output.name + ".lock")


def _holder(path: Path) -> str:
    """Who holds the lock at ``path``, as its file says."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "another run (it has not written who it is yet)"
    if not isinstance(info, dict):
        return "another run"
    return f"pid {info.get('pid')} on host {info.get('host')}, started {info.get('started')}"


class OutputLock:
    """The lock of one output path: :meth:`acquire` it before anything touches the output, :meth:`release` it
    when the run ends (also a context manager)."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.path = lock_path(output)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock now, or raise :class:`~jurist.io.parts.OutputError` naming the run that holds it."""
        if self._fd is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create the folder {self.path.parent}: {exc.strerror or exc}", source=str(self.output)
            ) from exc
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise OutputError(
                    f"cannot create the lock file {self.path}: {exc.strerror or exc}", source=str(self.output)
                ) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise OutputError(
                        f"another run is writing this output: {_holder(self.path)}. Wait for it to end, "
                        "or stop it (its committed chunks are kept, and a rerun resumes); "
                        f"lock file {self.path}",
                        source=str(self.output),
                    ) from exc
                logger.warning("%s: file locks are not supported here (%s); running unlocked", self.path, exc)
                return
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed the file between our open and our lock: lock the new one
        self._fd = fd
        self._write_holder(fd)

    @staticmethod
    def _write_holder(fd: int) -> None:
        info: dict[str, Any] = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        data = (json.dumps(info) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)

    def release(self) -> None:
        """Remove the lock file and let the lock go (nothing when not held)."""
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
