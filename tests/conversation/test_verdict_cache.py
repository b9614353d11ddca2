"""The persistent verdict cache: keys, storage, counters, and two processes writing one file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jurist.conversation.cache import CacheStats, VerdictCache, default_cache_path, verdict_key
from jurist.conversation.transcript import Turn
from jurist.conversation.verdict import JudgeVerdict

CONVERSATION = (Turn("user", "What is two plus two?"), Turn("assistant", "That's four."))
IDENTITY = {"model": "m", "prompt": "p", "schema": "s"}


def test_the_key_covers_judge_criterion_and_every_message() -> None:
    key = verdict_key(IDENTITY, "correct", CONVERSATION)
    assert key == verdict_key(dict(IDENTITY), "correct", tuple(CONVERSATION))
    others = {
        verdict_key({**IDENTITY, "model": "other"}, "correct", CONVERSATION),
        verdict_key({**IDENTITY, "prompt": "q"}, "correct", CONVERSATION),
        verdict_key(IDENTITY, "polite", CONVERSATION),
        verdict_key(IDENTITY, "correct", CONVERSATION[:1]),
        verdict_key(IDENTITY, "correct", (*CONVERSATION, Turn("assistant", "Anything else?"))),
        verdict_key(
            IDENTITY, "correct", (CONVERSATION[0], Turn("assistant", "That's"), Turn("assistant", "four."))
        ),
    }
    assert key not in others
    assert len(others) == 6


def test_a_file_cache_stores_reads_and_counts(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "sub" / "verdicts.sqlite3")
    assert not (tmp_path / "sub").exists()  # nothing is written before the first use
    assert cache.get("k") is None
    cache.put("k", JudgeVerdict("yes", "fine", '{"judgment": "yes"}'), "correct")
    assert cache.get("k") == JudgeVerdict("yes", "fine", '{"judgment": "yes"}')
    assert cache.stats == CacheStats(hits=1, misses=1, stored=1)
    assert len(VerdictCache(tmp_path / "sub" / "verdicts.sqlite3")) == 1  # another object, same file
    cache.clear()
    assert len(cache) == 0


def test_a_verdict_the_model_did_not_give_is_not_stored(tmp_path: Path) -> None:
    for cache in (VerdictCache(tmp_path / "v.sqlite3"), VerdictCache(":memory:")):
        cache.put("k", JudgeVerdict("error", "answer did not parse", "garbage", "parse_error"))
        assert cache.get("k") is None
        assert cache.stats.stored == 0


def test_the_default_file_is_under_the_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "verdicts.sqlite3"
    assert VerdictCache().path == tmp_path / "verdicts.sqlite3"
    monkeypatch.delenv("JURIST_CACHE_DIR")
    assert default_cache_path() == Path.home() / ".cache" / "jurist" / "verdicts.sqlite3"


WRITER = textwrap.dedent(
    """
    import sys
    from jurist.conversation.cache import VerdictCache
    from jurist.conversation.verdict import JudgeVerdict
    cache = VerdictCache(sys.argv[1])
    for i in range(150):
        cache.put(f"{sys.argv[2]}-{i}", JudgeVerdict("yes", f"reason {i}", "raw"))
        assert cache.get(f"{sys.argv[2]}-{i}") is not None
    """
)


def test_two_processes_write_one_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), name], stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    errors = [writer.communicate(timeout=120)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], errors
    cache = VerdictCache(path)
    assert len(cache) == 300
    assert cache.get("a-149") == JudgeVerdict("yes", "reason 149", "raw")
    assert cache.get("b-0") == JudgeVerdict("yes", "reason 0", "raw")
