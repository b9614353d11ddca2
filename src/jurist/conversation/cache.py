"""A persistent cache of conversation verdicts, keyed by the hash of (judge, criterion, conversation).

The key (:func:`verdict_key`) covers the judge's identity (model, engine, prompt and schema fingerprints,
generation settings), the criterion and every message of the conversation, so a change to any of them is a
miss: changing the model never serves a stale verdict. Only verdicts the model gave (status ``ok``) are
stored; a failed call is asked again next time.

Storage is one SQLite file (the standard library's ``sqlite3``), by default
``$JURIST_CACHE_DIR/verdicts.sqlite3`` or ``~/.cache/jurist/verdicts.sqlite3``. SQLite's file locking makes
it safe for several processes at once (each operation opens its own connection, and waits up to
``timeout_s`` for another writer). ``VerdictCache(":memory:")`` keeps verdicts in this process only. The
file is created on the first lookup, not before.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.conversation.transcript import Turn
from jurist.conversation.verdict import JudgeVerdict
from jurist.models.default_model import CACHE_ENV_VAR

MEMORY = ":memory:"
CACHE_FILE_NAME = "verdicts.sqlite3"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, verdict TEXT NOT NULL, reason TEXT NOT NULL, "
    "raw_response TEXT NOT NULL, criterion TEXT NOT NULL, created REAL NOT NULL DEFAULT (julianday('now')))"
)


def default_cache_path() -> Path:
    """``$JURIST_CACHE_DIR/verdicts.sqlite3`` when that variable is set, else
    ``~/.cache/jurist/verdicts.sqlite3``."""
    root = os.environ.get(CACHE_ENV_VAR)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "jurist"
    return base / CACHE_FILE_NAME


def verdict_key(identity: Mapping[str, Any], criterion: str, turns: Sequence[Turn]) -> str:
    """The hash of (judge identity, criterion, conversation)."""
    payload = {
        "judge": dict(identity),
        "criterion": criterion,
        "conversation": [[turn.role, turn.content] for turn in turns],
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    """Lookups of a cache (or of one judge's use of it): ``hits`` answered from it, ``misses`` not found,
    ``stored`` verdicts written."""

    hits: int = 0
    misses: int = 0
    stored: int = 0

    @property
    def lookups(self) -> int:
        return self.hits + self.misses


class VerdictCache:
    """Verdicts by key, in a SQLite file (``path``; default :func:`default_cache_path`) or in memory
    (``":memory:"``). ``stats`` counts this object's lookups."""

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 30.0) -> None:
        self.in_memory = str(path) == MEMORY
        self.path: Path | None = None if self.in_memory else Path(path or default_cache_path()).expanduser()
        self.timeout_s = timeout_s
        self._memory: dict[str, JudgeVerdict] = {}
        self._lock = threading.Lock()
        self._ready = False
        self._hits = self._misses = self._stored = 0

    def __repr__(self) -> str:
        return f"VerdictCache({MEMORY if self.path is None else str(self.path)!r})"

    @property
    def stats(self) -> CacheStats:
        return CacheStats(self._hits, self._misses, self._stored)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        assert self.path is not None
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=self.timeout_s)) as connection:
            if not self._ready:
                with connection:
                    connection.execute(_SCHEMA)
                self._ready = True
            with connection:  # one transaction, committed on success
                yield connection

    def get(self, key: str) -> JudgeVerdict | None:
        """The verdict stored under ``key``, or None (counted as a hit or a miss)."""
        found: JudgeVerdict | None
        if self.path is None:
            found = self._memory.get(key)
        else:
            with self._connect() as connection:
                row = connection.execute(
                    "SELECT verdict, reason, raw_response FROM verdicts WHERE key = ?", (key,)
                ).fetchone()
            found = None if row is None else JudgeVerdict(str(row[0]), str(row[1]), str(row[2]))
        with self._lock:
            if found is None:
                self._misses += 1
            else:
                self._hits += 1
        return found

    def put(self, key: str, verdict: JudgeVerdict, criterion: str = "") -> None:
        """Store a verdict the model gave (a verdict whose status is not ``ok`` is not stored)."""
        if not verdict.ok:
            return
        if self.path is None:
            self._memory[key] = verdict
        else:
            with self._connect() as connection:
                connection.execute(
                    "INSERT OR REPLACE INTO verdicts (key, verdict, reason, raw_response, criterion) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (key, verdict.verdict, verdict.reason, verdict.raw_response, criterion),
                )
        with self._lock:
            self._stored += 1

    def __len__(self) -> int:
        """Verdicts stored (in the file, by every process)."""
        if self.path is None:
            return len(self._memory)
        with self._connect() as connection:
            return int(connection.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def clear(self) -> None:
        """Forget every stored verdict (the counters stay)."""
        if self.path is None:
            self._memory.clear()
            return
        with self._connect() as connection:
            connection.execute("DELETE FROM verdicts")
