"""jurist's cache folder for models, the lock converters hold, and a file's sha256 remembered by its stat.

Everything a model conversion or a fetch writes lives under :func:`cache_root` (``$JURIST_CACHE_DIR`` or
``~/.cache/jurist``). Writers build into a temporary sibling and rename it into place, under
:func:`file_lock`, so a killed process leaves at most a temporary folder that the next converter removes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
from collections.abc import Iterator
from typing import Final

CACHE_ENV_VAR: Final = "JURIST_CACHE_DIR"
"""Environment variable naming jurist's cache root."""

_HASH_BLOCK: Final = 1 << 22


def cache_root() -> pathlib.Path:
    """``$JURIST_CACHE_DIR`` when it is set and not empty, else ``~/.cache/jurist``."""
    root = os.environ.get(CACHE_ENV_VAR)
    return pathlib.Path(root).expanduser() if root else pathlib.Path.home() / ".cache" / "jurist"


@contextlib.contextmanager
def file_lock(lock_path: pathlib.Path) -> Iterator[bool]:
    """Hold an exclusive ``fcntl.flock`` on ``lock_path`` (created if missing) for the ``with`` body.

    Yields True while holding the lock, or False where ``fcntl`` does not exist (Windows): the atomic
    renames of the writers still keep half-written folders out of the cache there.
    """
    try:
        import fcntl
    except ImportError:
        yield False
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def sha256_of(path: pathlib.Path) -> str:
    """The hex sha256 of a file's bytes (read in 4 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_HASH_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def remembered_sha256(path: pathlib.Path, memo_dir: pathlib.Path) -> str:
    """The sha256 of ``path``, computed once per (path, size, mtime, inode) and remembered in ``memo_dir``.

    Hashing a 40 GB GGUF file takes minutes; a run that names the same unchanged file again reads the
    remembered value. A file that changed in place gets a new size or mtime and is hashed again.
    """
    resolved = path.resolve()
    stat = resolved.stat()
    identity = {
        "path": str(resolved),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
    }
    memo = memo_dir / (hashlib.sha256(str(resolved).encode()).hexdigest()[:24] + ".json")
    with contextlib.suppress(OSError, ValueError):
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if isinstance(saved, dict) and all(saved.get(k) == v for k, v in identity.items()):
            value = saved.get("sha256")
            if isinstance(value, str) and len(value) == 64:
                return value
    value = sha256_of(resolved)
    with contextlib.suppress(OSError):
        memo_dir.mkdir(parents=True, exist_ok=True)
        temporary = memo.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({**identity, "sha256": value}) + "\n", encoding="utf-8")
        os.replace(temporary, memo)
    return value
