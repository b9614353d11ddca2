"""A judge run answered from a batch results file (``jurist judge dataset --from-batch-results FILE``).

:class:`BatchResults` is a backend that finds each request's answer in an OpenAI batch output file by its
``custom_id`` (:func:`jurist.batch.emit.custom_id`: the same judge config on the same rows renders the same
requests), so the answers go through jurist's parsing, scoring and Arrow output as a local engine's would.
The file is indexed once (custom id -> byte offset; the lines themselves for a compressed file); a request
whose answer is missing, or whose line holds an error, gives its row an error status naming it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from jurist.batch.answers import completion_from_line
from jurist.batch.emit import EMIT_KINDS, custom_id
from jurist.errors import InputError
from jurist.io.formats import COMPRESSIONS, open_binary
from jurist.io.records import split_lines
from jurist.records import Completion, ConstraintKind, GenerationRequest


class BatchResults:
    """Answers requests from a batch output file (see the module's docstring)."""

    constraint_kinds: tuple[ConstraintKind, ...] = EMIT_KINDS

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise InputError("no such file", source=str(path))
        self._compressed = COMPRESSIONS.get(path.suffix.lower())
        self._offsets: dict[str, int] = {}
        self._lines: dict[str, bytes] = {}
        self._model: str | None = None
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
                if self._model is None:
                    self._model = ((line.get("response") or {}).get("body") or {}).get("model")
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

    @property
    def model_id(self) -> str:
        """The model named in the first answered line."""
        return self._model or "batch-results"

    def _line(self, key: str, handle: IO[bytes] | None) -> dict[str, Any] | None:
        if handle is None:
            raw = self._lines.get(key)
        else:
            offset = self._offsets.get(key)
            if offset is None:
                return None
            handle.seek(offset)
            raw = handle.readline()
        return None if raw is None else json.loads(raw)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        with contextlib.ExitStack() as stack:
            handle = None if self._compressed else stack.enter_context(self.path.open("rb"))
            return [self._answer(request, handle) for request in requests]

    def _answer(self, request: GenerationRequest, handle: IO[bytes] | None) -> Completion:
        key = custom_id(request)
        line = self._line(key, handle)
        if line is None:
            message = (
                f"no answer for custom_id {key} in {self.path}: the batch was emitted from another "
                "config or rows (emit it again with --emit-batch)"
            )
            return Completion("", "error", error=message)
        return completion_from_line(line)

    def describe(self) -> dict[str, Any]:
        return {"engine": "batch results", "path": str(self.path), "model": self.model_id}

    def close(self) -> None:
        """Nothing to free: the file is opened per call."""
