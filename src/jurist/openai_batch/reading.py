"""Reading a batch input file line by line: from a file (plain, ``.gz``, ``.zst``, ``.bz2``) or stdin (``-``),
never whole.

Each non-blank line becomes a :class:`Line`: its request, or the reason it is refused (not JSON, not an
input line, a duplicate ``custom_id``, a ``url`` or body jurist does not run). Duplicates are found with
:class:`SeenIds`, which keeps 8 bytes per id (a 64-bit hash), so memory stays flat as files grow.
"""

from __future__ import annotations

import hashlib
import heapq
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jurist.backends.schema_regex import SchemaRegex
from jurist.errors import InputError
from jurist.io.formats import COMPRESSIONS, open_binary
from jurist.io.records import parse_line, split_lines
from jurist.openai_batch.requests import EmbeddingRequest, Refused, Served, to_request
from jurist.openai_batch.shapes import InputLine
from jurist.records import GenerationRequest

STDIN = "-"
BUFFER_IDS = 1 << 16


class SeenIds:
    """The custom ids seen so far, as 64-bit hashes: a sorted array plus a small set of recent ones,
    merged into the array when the set fills. Two distinct ids share a hash with probability about
    n^2 / 2^65 (3e-8 for a million ids)."""

    def __init__(self) -> None:
        self._sorted = array("Q")
        self._recent: set[int] = set()

    @staticmethod
    def _key(custom_id: str) -> int:
        return int.from_bytes(hashlib.blake2b(custom_id.encode("utf-8"), digest_size=8).digest(), "little")

    def __contains__(self, custom_id: str) -> bool:
        key = self._key(custom_id)
        if key in self._recent:
            return True
        at = bisect_left(self._sorted, key)
        return at < len(self._sorted) and self._sorted[at] == key

    def add(self, custom_id: str) -> None:
        self._recent.add(self._key(custom_id))
        if len(self._recent) >= BUFFER_IDS:
            self._sorted = array("Q", heapq.merge(self._sorted, sorted(self._recent)))
            self._recent = set()

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)


@dataclass(frozen=True)
class Line:
    """One non-blank input line: its 1-based number, its ``custom_id`` (None when unreadable), and either
    the request to run (with how its ``response_format`` schema is enforced, if it has one) or the refusal
    (``code``, ``message``)."""

    number: int
    custom_id: str | None
    request: GenerationRequest | EmbeddingRequest | None = None
    refused: tuple[str, str] | None = None
    schema: SchemaRegex | None = None


class BatchInput:
    """A batch input file, or stdin (read once)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.replayable = name != STDIN
        self.source = "<stdin>" if name == STDIN else name
        self.compression: str | None = None
        if self.replayable:
            path = Path(name)
            if not path.is_file():
                raise InputError("no such file" if not path.exists() else "is not a file", source=name)
            suffix = path.suffix.lower()
            self.compression = COMPRESSIONS.get(suffix)
            if path.stat().st_size == 0:
                raise InputError("is empty (0 bytes)", source=name)

    def total(self) -> int | None:
        """The lines of a plain file (blank ones too), for the progress line; None for stdin or compressed."""
        if not self.replayable or self.compression is not None:
            return None
        count, last = 0, b"\n"
        with Path(self.name).open("rb") as handle:
            while block := handle.read(1 << 22):
                count += block.count(b"\n")
                last = block[-1:]
        return count + (last != b"\n")

    def identity(self) -> dict[str, Any]:
        """What identifies the input for resuming (path, size, modification time, a hash of its head)."""
        if not self.replayable:
            return {"source": self.source}
        path = Path(self.name)
        stat = path.stat()
        with path.open("rb") as handle:
            head = hashlib.sha256(handle.read(1 << 20)).hexdigest()[:16]
        return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "head": head}

    def raw_lines(self) -> Iterator[tuple[int, bytes]]:
        """Non-blank lines with their 1-based numbers."""
        handle: Any = (
            sys.stdin.buffer
            if not self.replayable
            else open_binary(Path(self.name), self.compression, self.source)
        )
        try:
            for number, raw in enumerate(split_lines(handle.read), 1):
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if raw.strip():
                    yield number, raw
        finally:
            if self.replayable:
                handle.close()

    def lines(self, served: Served, seen: SeenIds) -> Iterator[Line]:
        """Every non-blank line, read and checked (``seen`` collects the custom ids)."""
        for number, raw in self.raw_lines():
            yield read_line(number, raw, served, seen)


def read_line(number: int, raw: bytes, served: Served, seen: SeenIds) -> Line:
    """One input line as a :class:`Line` (a refusal names the line and the field)."""
    record, reason = parse_line(raw, f"line {number}")
    if record is None:
        return Line(number, None, refused=("invalid_json", reason or "unreadable line"))
    custom_id = record.get("custom_id")
    custom_id = custom_id if isinstance(custom_id, str) and custom_id else None
    try:
        parsed = InputLine.model_validate(record)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}" for err in exc.errors()[:5]
        )
        if custom_id is not None and custom_id not in seen:
            seen.add(custom_id)
        return Line(number, custom_id, refused=("invalid_request", f"line {number}: {problems}"))
    if parsed.custom_id in seen:
        message = f"line {number}: custom_id {parsed.custom_id!r} was already used by an earlier line"
        return Line(number, parsed.custom_id, refused=("duplicate_custom_id", message))
    seen.add(parsed.custom_id)
    try:
        request, schema = to_request(parsed.url, parsed.body, served)
    except Refused as exc:
        return Line(number, parsed.custom_id, refused=(exc.code, f"line {number}: {exc.message}"))
    return Line(number, parsed.custom_id, request=request, schema=schema)
