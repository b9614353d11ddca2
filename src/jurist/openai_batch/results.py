"""A judge run answered from a batch results file (``jurist judge dataset --from-batch-results FILE``).

:class:`BatchResults` is a backend that finds each request's answer in an OpenAI batch output file by its
``custom_id`` (:func:`jurist.openai_batch.bodies.custom_id`: the same judge config on the same rows renders
the same requests), so the answers go through jurist's parsing, scoring and Arrow output as a local engine's
would. Each file is indexed once (custom id -> byte offset; the lines themselves for a compressed file);
a request whose answer is missing, or whose line holds an error, gives its row an error status naming it.
Several files can be given, one per round of a judge that calls the model more than once per row
(:mod:`jurist.openai_batch.emit`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from jurist.errors import InputError
from jurist.io.formats import COMPRESSIONS, open_binary
from jurist.io.records import split_lines
from jurist.openai_batch.answers import completion_from_line
from jurist.openai_batch.bodies import EMIT_KINDS, custom_id
from jurist.records import Completion, ConstraintKind, GenerationRequest


class BatchResults:
    """Answers requests from one or more batch output files (see the module's docstring): a judge that
    needs several rounds of model calls per row (a reasoning phase, RAG metrics) gets one results file per
    round. A custom id answered in several files takes the first file's answer."""

    constraint_kinds: tuple[ConstraintKind, ...] = EMIT_KINDS

    def __init__(self, paths: Path | Sequence[Path]) -> None:
        self.paths: tuple[Path, ...] = (paths,) if isinstance(paths, Path) else tuple(paths)
        if not self.paths:
            raise InputError("no batch results file given")
        self._files = [_Indexed(path) for path in self.paths]
        self._model = next((f.model for f in self._files if f.model is not None), None)

    def __len__(self) -> int:
        return sum(len(f) for f in self._files)

    @property
    def model_id(self) -> str:
        """The model named in the first answered line."""
        return self._model or "batch-results"

    def find(self, requests: Sequence[GenerationRequest]) -> list[tuple[str, Completion | None]]:
        """Each request's custom id and its answer in the files (None: no file answers it)."""
        with contextlib.ExitStack() as stack:
            handles = [f.open(stack) for f in self._files]
            return [(key, self._answer(key, handles)) for key in map(custom_id, requests)]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        return [self._missing(key) if answer is None else answer for key, answer in self.find(requests)]

    def _answer(self, key: str, handles: Sequence[IO[bytes] | None]) -> Completion | None:
        for indexed, handle in zip(self._files, handles, strict=True):
            line = indexed.line(key, handle)
            if line is not None:
                return completion_from_line(line)
        return None

    def _missing(self, key: str) -> Completion:
        files = " or ".join(str(p) for p in self.paths)
        message = (
            f"no answer for custom_id {key} in {files}: the batch was emitted from another config or rows, "
            "or this request belongs to a later round (emit it with --emit-batch and these results)"
        )
        return Completion("", "error", error=message)

    def describe(self) -> dict[str, Any]:
        paths = [str(p) for p in self.paths]
        where = paths[0] if len(paths) == 1 else paths
        return {"engine": "batch results", "path": where, "model": self.model_id}

    def close(self) -> None:
        """Nothing to free: the files are opened per call."""


class _Indexed:
    """One batch output file, indexed once: custom id -> byte offset (the lines themselves for a compressed
    file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise InputError("no such file", source=str(path))
        self._compressed = COMPRESSIONS.get(path.suffix.lower())
        self._offsets: dict[str, int] = {}
        self._lines: dict[str, bytes] = {}
        self.model: str | None = None
        self._index()

    def _index(self) -> None:
        handle = open_binary(self.path, self._compressed, str(self.path))
        offset = 0
        try:
            for number, raw in enumerate(split_lines(handle.read), 1):
                start, offset = offset, offset + len(raw) + 1
                if not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                except ValueError as exc:
                    raise InputError(f"line {number} is not JSON: {exc}", source=str(self.path)) from None
                key = line.get("custom_id") if isinstance(line, dict) else None
                if not isinstance(key, str):
                    continue  # an error line for an unreadable input line: no request to answer
                if self.model is None:
                    self.model = ((line.get("response") or {}).get("body") or {}).get("model")
                if self._compressed:
                    self._lines.setdefault(key, raw)
                else:
                    self._offsets.setdefault(key, start)
        finally:
            handle.close()
        if not self._offsets and not self._lines:
            raise InputError(
                "holds no batch output lines (custom_id, response, error)", source=str(self.path)
            )

    def __len__(self) -> int:
        return len(self._offsets) + len(self._lines)

    def open(self, stack: contextlib.ExitStack) -> IO[bytes] | None:
        """A handle for :meth:`line` (None for a compressed file, whose lines are held)."""
        return None if self._compressed else stack.enter_context(self.path.open("rb"))

    def line(self, key: str, handle: IO[bytes] | None) -> dict[str, Any] | None:
        """The output line answering ``key`` (None: this file has none)."""
        if handle is None:
            raw = self._lines.get(key)
        else:
            offset = self._offsets.get(key)
            if offset is None:
                return None
            handle.seek(offset)
            raw = handle.readline()
        return None if raw is None else json.loads(raw)
