"""A full disk while results are written: one clear error with the path and the space needed.

``ENOSPC`` (no space left) and ``EDQUOT`` (a quota reached) raised while a part, the manifest or the merged
output is written become an :class:`~jurist.io.parts.OutputError` (exit 2 on the command line) that names the
file, about how much it needs and how much is free, and says that the chunks committed before are kept. The
half-written temporary file is removed by the writer; nothing committed is touched, so a rerun after space
is freed resumes.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jurist.errors import InputError

FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFullError(InputError):
    """The disk (or a quota) filled up while results were written."""


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def free_space(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


@contextmanager
def space_for(path: Path, needed: int, what: str, *, source: str | None = None) -> Iterator[None]:
    """Turn a full disk while the body writes ``path`` (``what``: a part, the merged output...) into a
    :class:`DiskFullError` naming it and the ``needed`` bytes (an estimate)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in FULL:
            raise
        free = free_space(path.parent)
        reason = "a disk quota is reached" if exc.errno == errno.EDQUOT else "no space left on the device"
        raise DiskFullError(
            f"{reason} while writing {what} {path}: it needs about {human(needed)}"
            + (f", {human(free)} is free" if free is not None else "")
            + ". The chunks committed before are kept: free some space (or move the output) and rerun the "
            "same command to resume",
            source=source or str(path),
        ) from exc
