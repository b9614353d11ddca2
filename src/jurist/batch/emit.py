"""A judge run's requests as an OpenAI batch input file (``jurist judge dataset --emit-batch FILE``).

Each rendered request becomes one ``/v1/chat/completions`` line: the messages, ``max_tokens``, the sampling
settings OpenAI's API has, and the judge's JSON schema as ``response_format`` (the emitter enforces JSON
schemas only, as engine OPENAI does: an XML answer goes unconstrained and is parsed as usual). Its
``custom_id`` is a hash of the body without the model (:func:`custom_id`), so the same judge config on the
same rows finds its answers again in the results file (:mod:`jurist.batch.results`), whatever their order,
and identical requests are written once.

Only a judge's first round of requests can be emitted: a kind that needs several model calls per row (RAG
metrics) gets its later rounds' requests from the answers to the first. LOGPROBS scoring and reward
models need a local engine; their rows are not emitted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.backends.remote.openai import chat_body
from jurist.batch.reading import SeenIds
from jurist.batch.shapes import CHAT_URL
from jurist.engine.core import Engine
from jurist.engine.spec import RunSpec
from jurist.records import Completion, ConstraintKind, GenerationRequest

EMIT_KINDS: tuple[ConstraintKind, ...] = ("json_schema",)


def request_body(request: GenerationRequest, model: str) -> dict[str, Any]:
    """The chat completion body of a request (OpenAI's fields only)."""
    body = chat_body(request, model)
    if request.logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = min(request.logprobs, 20)
    if request.constraint is not None and request.constraint.json_schema is not None:
        schema = {"name": "judgment", "strict": True, "schema": dict(request.constraint.json_schema)}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    return body


def custom_id(request: GenerationRequest) -> str:
    """The request's id in a batch file: a hash of its body without the model."""
    body = request_body(request, "")
    del body["model"]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"jurist-{digest[:32]}"


class BatchEmitter:
    """A backend that writes each distinct request as a batch input line instead of answering it (its
    answer is an ``error`` saying where the request went). ``close`` moves the finished file into place."""

    constraint_kinds = EMIT_KINDS

    def __init__(self, path: Path, model: str) -> None:
        self.path = path
        self._model = model
        self._partial = path.with_name(f".{path.name}.partial")
        self._stream: Any = pa.output_stream(str(self._partial), compression="detect")
        self._seen = SeenIds()
        self.requests = 0
        self.lines = 0

    @property
    def model_id(self) -> str:
        return self._model

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        message = f"sent to the batch file {self.path}; run it, then judge with --from-batch-results"
        for request in requests:
            self.requests += 1
            key = custom_id(request)
            if key in self._seen:
                continue
            self._seen.add(key)
            line = {
                "custom_id": key,
                "method": "POST",
                "url": CHAT_URL,
                "body": request_body(request, self._model),
            }
            self._stream.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
            self.lines += 1
        return [Completion("", "error", error=message) for _ in requests]

    def describe(self) -> dict[str, Any]:
        return {"engine": "batch file", "path": str(self.path)}

    def abandon(self) -> None:
        """Drop the file being written (the run failed)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        self._partial.unlink(missing_ok=True)

    def close(self) -> None:
        if self._stream is None:
            return
        self._stream.close()
        self._stream = None
        os.replace(self._partial, self.path)


@dataclass(frozen=True)
class Emitted:
    """What ``--emit-batch`` wrote: the file, the rows read, the requests rendered and the lines written
    (identical requests share a line)."""

    path: Path
    rows: int
    requests: int
    lines: int

    def text(self) -> str:
        return (
            f"{self.rows} rows -> {self.requests} requests -> {self.lines} batch lines in {self.path}; "
            "run them (OpenAI's Batch API or `jurist batch`), then judge again with --from-batch-results"
        )


def emit_batch(spec: RunSpec, path: Path, *, model: str | None = None) -> Emitted:
    """Write the requests a run of ``spec`` would send as an OpenAI batch file at ``path`` (``.jsonl``, also
    ``.gz`` / ``.zst``). ``model`` is each line's ``body.model`` (default: the first judge's model name)."""
    if model is None:
        model = spec.judges[0].inference_config.model.model_name or "default"
    emitter = BatchEmitter(path, model)
    engine = Engine.from_spec(spec, emitter)
    source = spec.rows.open(engine.id_column)
    engine.check_columns(source)
    rows = 0
    try:
        for chunk, _, _ in engine.judged(source):
            rows += chunk.num_rows
    except BaseException:
        emitter.abandon()
        raise
    emitter.close()
    return Emitted(path, rows, emitter.requests, emitter.lines)
