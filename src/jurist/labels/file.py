"""The labels file: one JSON line per label, appended and never rewritten; the one module that reads and
writes it.

* The line (:class:`LabelLine`): ``row_id``, ``label``, ``labeller``, ``time`` and, for a row a sampling plan
  chose (:mod:`jurist.labels.sampling`), its inclusion ``probability``, the plan's ``position``,
  ``strategy``, ``seed`` and ``budget``. Fields beyond these are kept.
* Writing (:class:`LabelStore`): every change happens under one exclusive ``fcntl.flock`` on a sidecar lock
  file (``<labels>.lock``), so any number of threads and processes (two ``jurist label`` servers on one
  file) can share it. A label is one line written with a single ``os.write`` on a descriptor opened with
  ``O_APPEND``, then ``fsync``'d before :meth:`LabelStore.append` returns: a line reported as saved
  survives a killed process or a power cut. :meth:`LabelStore.lines` reads only what was appended since
  its last call, so every server sees the others' lines before it decides anything. Claims
  (``<labels>.claims``, a JSON object rewritten whole) say which row a labelling session holds and until
  when. A last line without its newline is one whose write was cut short (never reported as saved): it is
  left out when read, and the next append removes it first. A damaged line anywhere else is an error
  naming the file and the line.
* Reading: :func:`read_label_lines` (the lines, checked against :class:`LabelLine`) and
  :func:`latest_labels` (the latest line of a row counts: a correction is appended after the label it
  corrects). The commands that read labels take this file, or any other that jurist reads (an LLMBar JSON
  file, a CSV), through :class:`jurist.labels.source.LabelSource`.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jurist.errors import InputError


class Strategy(str, Enum):
    """How a plan chooses the rows to label."""

    UNIFORM = "uniform"
    STRATIFIED = "stratified"
    ACTIVE = "active"


class LabelLine(BaseModel):
    """One line of a labels file: a label of one row, by whom and when, and the design that chose the row
    (``probability`` is its inclusion probability; None for a label no plan chose). Fields beyond these
    are kept."""

    model_config = ConfigDict(extra="allow")

    row_id: str
    label: Any
    labeller: str = ""
    time: str = ""
    probability: float | None = Field(default=None, gt=0, le=1)
    position: int | None = Field(default=None, ge=0)
    strategy: Strategy | None = None
    seed: int | None = None
    budget: int | None = Field(default=None, ge=1)

    def to_json(self) -> str:
        """The line as the labels file holds it (no newline)."""
        return self.model_dump_json()


def read_label_lines(path: str | Path) -> list[LabelLine]:
    """The lines of a labels file (JSONL) in file order; an :class:`InputError` naming the file, the line
    and the field of a line that is not a label. Blank lines are skipped."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such labels file", source=str(path))
    out = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                out.append(LabelLine.model_validate(json.loads(text)))
            except json.JSONDecodeError as exc:
                raise InputError(f"line {number} is not JSON ({exc.msg})", source=str(path)) from None
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(str(p) for p in error["loc"]) or "the line"
                raise InputError(f"line {number}: {field}: {error['msg']}", source=str(path)) from None
    return out


def latest_labels(lines: list[LabelLine]) -> dict[str, LabelLine]:
    """The label that counts for each row: its latest line (a correction is appended after the first)."""
    return {line.row_id: line for line in lines}


@dataclass(frozen=True)
class Claim:
    """A row held by a labelling session until ``until`` (seconds since the epoch)."""

    row_id: str
    session: str
    labeller: str
    until: float


class LabelStore:
    """One labels file and its claims; safe to share between threads and processes.

    Use :meth:`transaction` around anything that reads and then writes (choosing a row and claiming it),
    and the methods of the :class:`Transaction` it yields; :meth:`append` and :meth:`lines` lock by
    themselves.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.claims_path = self.path.with_name(self.path.name + ".claims")
        self._thread_lock = threading.Lock()
        self._offset = 0
        self._line_number = 0

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Hold the file's lock (against other threads and processes) for the block."""
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield Transaction(self)
            finally:
                os.close(fd)  # closing the descriptor releases the lock

    def lines(self) -> list[tuple[int, dict[str, Any]]]:
        """The lines appended since the last call (all of them the first time), with their line numbers."""
        with self.transaction() as tx:
            return tx.new_lines()

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one line and make it durable (see :meth:`Transaction.append`)."""
        with self.transaction() as tx:
            tx.append(record)


class Transaction:
    """What may be done while a :class:`LabelStore`'s lock is held."""

    def __init__(self, store: LabelStore) -> None:
        self._store = store

    def new_lines(self) -> list[tuple[int, dict[str, Any]]]:
        """The complete lines appended since the store last read, each a JSON object, with its number; an
        :class:`InputError` naming the file and line for one that is not."""
        store = self._store
        if not store.path.exists():
            return []
        with store.path.open("rb") as handle:
            handle.seek(store._offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a cut-short last line is left for no one
        out = []
        for raw in data[:end].splitlines():
            store._line_number += 1
            if not raw.strip():
                continue
            out.append((store._line_number, _parse(raw, store.path, store._line_number)))
        store._offset += end
        return out

    def append(self, record: Mapping[str, Any]) -> None:
        """Write ``record`` as one JSON line with one ``write`` (``O_APPEND``), then ``fsync`` the file."""
        store = self._store
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        fd = os.open(store.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _drop_cut_short_line(fd)
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"{store.path}: wrote {written} of {len(line)} bytes of a label (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)

    def claims(self, now: float | None = None) -> dict[str, Claim]:
        """The claims that have not expired, by row id."""
        now = time.time() if now is None else now
        try:
            raw = json.loads(self._store.claims_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}  # claims are a courtesy between sessions: a lost claims file loses no label
        claims = {}
        for row_id, value in raw.items() if isinstance(raw, dict) else ():
            try:
                claim = Claim(
                    str(row_id), str(value["session"]), str(value["labeller"]), float(value["until"])
                )
            except (KeyError, TypeError, ValueError):
                continue
            if claim.until > now:
                claims[claim.row_id] = claim
        return claims

    def save_claims(self, claims: Mapping[str, Claim]) -> None:
        """Replace the claims file (written beside it, then renamed over it)."""
        path = self._store.claims_path
        staged = path.with_name(path.name + ".tmp")
        body = {
            c.row_id: {"session": c.session, "labeller": c.labeller, "until": c.until}
            for c in claims.values()
        }
        staged.write_text(json.dumps(body), encoding="utf-8")
        os.replace(staged, path)


def _drop_cut_short_line(fd: int, chunk: int = 65536) -> None:
    """Truncate the file after its last newline: a last line without one was never reported as saved."""
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return
    start = end
    while start > 0:
        start = max(0, start - chunk)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            os.ftruncate(fd, start + found + 1)
            return
        end = start
    os.ftruncate(fd, 0)


def _parse(raw: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"line {number} is not JSON ({exc})", source=str(path)) from None
    if not isinstance(value, dict):
        raise InputError(f"line {number} is not a JSON object", source=str(path))
    return value
