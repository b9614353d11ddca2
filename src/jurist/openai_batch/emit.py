"""A judge run's requests as an OpenAI batch input file (``jurist judge dataset --emit-batch FILE``).

Each rendered request becomes one ``/v1/chat/completions`` line (:mod:`jurist.openai_batch.bodies`): the
messages, ``max_tokens``, the sampling settings OpenAI's API has, and the judge's JSON schema as
``response_format`` (the emitter enforces JSON schemas only, as engine OPENAI does: an XML answer goes
unconstrained and is parsed as usual). Identical requests are written once.

A judge that calls the model more than once per row (a reasoning phase, then the answer; RAG metrics)
is emitted one round at a time: the first ``--emit-batch`` writes the first round; given that round's
results (``--from-batch-results``, :class:`~jurist.openai_batch.results.BatchResults`), the next
``--emit-batch`` answers the requests they hold and writes the requests that follow from those answers, and
so on, until every request is answered and ``--from-batch-results`` with every round's results writes the
table. LOGPROBS scoring and reward models need a local engine: :func:`jurist.launch.refuse` refuses to emit
them."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.engine.core import Engine
from jurist.engine.spec import RunSpec
from jurist.openai_batch.bodies import EMIT_KINDS, custom_id, request_body
from jurist.openai_batch.reading import SeenIds
from jurist.openai_batch.results import BatchResults
from jurist.openai_batch.shapes import CHAT_URL
from jurist.records import Completion, GenerationRequest


class BatchEmitter:
    """A backend that writes each distinct request as a batch input line instead of answering it (its
    answer is an ``error`` saying where the request went), except a request that ``earlier`` (the results of
    the rounds before) answers: that gets its answer. ``close`` moves the finished file into place."""

    constraint_kinds = EMIT_KINDS

    def __init__(self, path: Path, model: str, earlier: BatchResults | None = None) -> None:
        self.path = path
        self._model = model
        self._earlier = earlier
        self.answered = 0
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
        if self._earlier is not None:
            found = self._earlier.find(requests)
        else:
            found = [(custom_id(r), None) for r in requests]
        out: list[Completion] = []
        for request, (key, answer) in zip(requests, found, strict=True):
            self.requests += 1
            if answer is not None:
                self.answered += 1
                out.append(answer)
                continue
            out.append(Completion("", "error", error=message))
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
        return out

    def describe(self) -> dict[str, Any]:
        return {"engine": "batch file", "path": str(self.path)}

    def abandon(self) -> None:
        """Drop the file being written (the run failed)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        self._partial.unlink(missing_ok=True)

    def close(self) -> None:
        """Move the finished file into place; with no line written (the results given answer every
        request) no file is made."""
        if self._stream is None:
            return
        if not self.lines:
            self.abandon()
            return
        self._stream.close()
        self._stream = None
        os.replace(self._partial, self.path)


@dataclass(frozen=True)
class Emitted:
    """What ``--emit-batch`` wrote: the file, the rows read, the requests rendered, how many of them the
    earlier rounds' results answered (``answered``), and the lines written (identical requests share a
    line); ``results`` names the results files given."""

    path: Path
    rows: int
    requests: int
    lines: int
    answered: int = 0
    results: tuple[Path, ...] = ()

    def text(self) -> str:
        given = " ".join(f"--from-batch-results {p}" for p in self.results)
        if not self.lines and not self.results:
            return f"{self.rows} rows -> no model requests: nothing to emit ({self.path} not written)"
        if not self.lines:
            return (
                f"{self.rows} rows -> {self.requests} requests, every one answered by the results given: "
                f"nothing left to emit ({self.path} not written); judge with {given} to write the results"
            )
        head = f"{self.rows} rows -> {self.requests} requests"
        if self.answered:
            head += f" ({self.answered} answered by the results given, {self.requests - self.answered} not)"
        after = (
            f"{given} --from-batch-results RESULTS-OF-{self.path.name}"
            if self.results
            else "--from-batch-results"
        )
        return (
            f"{head} -> {self.lines} batch lines in {self.path}; run them (OpenAI's Batch API or "
            f"`jurist batch`), then judge again with {after}"
        )


def emit_batch(spec: RunSpec, path: Path, *, model: str | None = None) -> Emitted:
    """Write the requests a run of ``spec`` would send as an OpenAI batch file at ``path`` (``.jsonl``, also
    ``.gz`` / ``.zst``), but for those the spec's ``answers`` (the earlier rounds' results) answer.
    ``model`` is each line's ``body.model`` (default: the first judge's model name)."""
    if model is None:
        model = spec.judges[0].inference_config.model.model_name or "default"
    earlier = BatchResults(spec.answers) if spec.answers else None
    emitter = BatchEmitter(path, model, earlier)
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
    return Emitted(path, rows, emitter.requests, emitter.lines, emitter.answered, spec.answers)
