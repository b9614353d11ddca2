"""``jurist batch``: run an OpenAI batch input file on local engines, resumably.

Lines are read one by one (:mod:`jurist.openai_batch.reading`) and grouped in chunks of ``chunk_size`` lines.
A backend that streams (vLLM) is kept full across chunks: it takes requests from the next chunks while
earlier ones decode; any other backend answers one chunk per call. Finished chunks are committed in input
order (:mod:`jurist.openai_batch.store`), so a rerun after a crash or ``kill -9`` starts after the last
committed line and sends none of the committed lines' requests again. The chat model loads only when the
first line that needs it comes; embedding lines go to a pooling model (:class:`Embedder`) when the run has
one."""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from jurist.backends.base import Backend, StreamingBackend, describe
from jurist.engine.dispatch import generate
from jurist.engine.metadata import environment, now
from jurist.engine.progress import Progress
from jurist.engine.window import MAX_OPEN_CHUNKS, RequestWindow
from jurist.errors import InputError
from jurist.io.parts import OutputError
from jurist.openai_batch import answers
from jurist.openai_batch.reading import BatchInput, Line, SeenIds
from jurist.openai_batch.requests import EmbeddingRequest, Served
from jurist.openai_batch.store import check_batch_output, commit, finish, open_store
from jurist.records import Completion, GenerationRequest

DEFAULT_CHUNK_SIZE = 1024
OutputRow = tuple[int, str | None, dict[str, Any]]


class Embedder(Protocol):
    """A pooling model: one vector and the prompt's token count per text."""

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[tuple[list[float], int]]: ...

    def close(self) -> None: ...


@dataclass
class BatchSummary:
    """What a batch run did: lines written (``resumed_from`` of them by an earlier run), how many were
    answered (``cut`` of them ended by their token bound), the error codes, tokens, requests sent to the
    chat model, seconds (``load_seconds`` of them loading models), and how the lines' ``response_format``
    schemas were enforced: ``formats`` counts ``regex`` (no free whitespace) and ``grammar`` (the engine's
    grammar backend, each line's reason in ``fallbacks``), ``unbounded`` the schema parts left open."""

    output: str
    lines: int = 0
    answered: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sent: int = 0
    resumed_from: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    complete: bool = False
    cut: int = 0
    formats: Counter[str] = field(default_factory=Counter)
    fallbacks: Counter[str] = field(default_factory=Counter)
    unbounded: Counter[str] = field(default_factory=Counter)

    def count_format(self, line: Line) -> None:
        """Count how ``line``'s response format was enforced (nothing for a line without one)."""
        if line.schema is None:
            return
        self.formats["regex" if line.schema.regex is not None else "grammar"] += 1
        if line.schema.fallback is not None:
            self.fallbacks[line.schema.fallback] += 1
        self.unbounded.update(line.schema.unbounded)

    def as_dict(self) -> dict[str, Any]:
        done = self.lines - self.resumed_from
        return {
            "output": self.output,
            "lines": self.lines,
            "answered": self.answered,
            "errors": dict(self.errors),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "requests_sent": self.sent,
            "resumed_from": self.resumed_from,
            "seconds": round(self.seconds, 3),
            "load_seconds": round(self.load_seconds, 3),
            "lines_per_second": round(done / self.seconds, 3) if self.seconds else None,
            "lines_per_second_loaded": round(done / running, 3)
            if (running := self.seconds - self.load_seconds) > 0
            else None,
            "complete": self.complete,
            "cut_by_max_tokens": self.cut,
            "response_formats": {
                "regex": self.formats["regex"],
                "grammar": self.formats["grammar"],
                "fallbacks": dict(self.fallbacks),
                "unbounded": dict(self.unbounded),
            },
        }

    def text(self) -> str:
        if self.complete:
            return f"{self.output} already holds the finished results of this batch ({self.lines} lines)"
        data = self.as_dict()
        errors = ", ".join(f"{k} {v}" for k, v in self.errors.most_common()) or "none"
        lines = [
            f"{self.lines} lines -> {self.output} in {self.seconds:.1f} s ({self.load_seconds:.1f} s "
            f"loading; {data['lines_per_second_loaded'] or 0:.2f} lines/s once loaded): "
            f"{self.answered} answered; errors: {errors}",
            f"  tokens: {self.prompt_tokens} prompt, {self.completion_tokens} completion; "
            f"{self.sent} requests sent to the model",
        ]
        if self.cut:
            lines.append(f"  {self.cut} answers ended at their token bound (finish_reason length)")
        if self.formats:
            lines.append(
                f"  response_format: {self.formats['regex']} lines under a regex with no free whitespace, "
                f"{self.formats['grammar']} under the engine's grammar backend"
            )
            lines += [f"    grammar backend, {n} lines: {why}" for why, n in self.fallbacks.most_common(5)]
            lines += [f"    left unbounded, {n} lines: {part}" for part, n in self.unbounded.most_common(5)]
        if self.resumed_from:
            lines.append(f"  resumed after {self.resumed_from} lines committed by an earlier run")
        return "\n".join(lines)


@dataclass
class _Open:
    """A chunk in flight: its lines, the answers so far, and how many are missing."""

    lines: list[Line]
    completions: dict[int, Completion] = field(default_factory=dict)
    pending: int = 0


class _Feed:
    """Gives a streaming backend the chat requests of the next chunks (a
    :class:`~jurist.engine.window.RequestWindow`) and hands back each chunk once all its answers are in, in
    input order."""

    def __init__(self, chunks: Iterator[list[Line]], max_open: int) -> None:
        self._chunks = chunks
        self._window: RequestWindow[_Open, tuple[_Open, int]] = RequestWindow(max_open)
        self.exhausted = False

    def _open_next(self) -> bool:
        lines = None if self.exhausted else next(self._chunks, None)
        if lines is None:
            self.exhausted = True
            return False
        state = _Open(lines)
        chat = [
            (i, line.request) for i, line in enumerate(lines) if isinstance(line.request, GenerationRequest)
        ]
        state.pending = len(chat)
        self._window.open.append(state)
        self._window.put(((state, i), request) for i, request in chat)
        return True

    def take(self, n: int) -> list[tuple[int, GenerationRequest]]:
        return self._window.take(n, self._open_next)

    def answer(self, key: int, completion: Completion) -> None:
        state, index = self._window.slot(key)
        state.completions[index] = completion
        state.pending -= 1

    def finished(self) -> Iterator[_Open]:
        return self._window.finished(lambda state: state.pending == 0)

    @property
    def idle(self) -> bool:
        return self.exhausted and not self._window.open


class BatchRun:
    """Runs batch files: ``chat`` makes the chat backend (called once, when a line first needs it);
    ``embedder`` makes the pooling model (None: embedding lines are refused); ``served`` says which models
    and constraints the run serves."""

    def __init__(
        self,
        chat: Callable[[], Backend],
        served: Served,
        *,
        embedder: Callable[[], Embedder] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        max_open: int = MAX_OPEN_CHUNKS,
        options: dict[str, Any] | None = None,
    ) -> None:
        if chunk_size < 1:
            raise InputError(f"chunk size must be at least 1, got {chunk_size}")
        self._chat_factory = chat
        self._embed_factory = embedder
        self.served = served
        self.chunk_size = chunk_size
        self.max_open = max_open
        self.options = dict(options or {})
        self._chat: Backend | None = None
        self._embedder: Embedder | None = None
        self.load_seconds = 0.0

    # ----------------------------------------------------------------------------------- engines
    @property
    def chat(self) -> Backend:
        if self._chat is None:
            started = time.perf_counter()
            self._chat = self._chat_factory()
            self.load_seconds += time.perf_counter() - started
        return self._chat

    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is None and self._embed_factory is not None:
            started = time.perf_counter()
            self._embedder = self._embed_factory()
            self.load_seconds += time.perf_counter() - started
        return self._embedder

    def close(self) -> None:
        """Close the engines this run loaded."""
        for engine in (self._chat, self._embedder):
            if engine is not None:
                engine.close()
        self._chat = self._embedder = None

    # --------------------------------------------------------------------------------------- run
    def fingerprint(self, source: BatchInput) -> str:
        payload = {"input": source.identity(), "options": self.options}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]

    def run(
        self, input_name: str, output: Path, *, overwrite: bool = False, progress: IO[str] | None = None
    ) -> BatchSummary:
        """Run every line of ``input_name`` (a file or ``-``) into ``output`` (``.jsonl``), resuming a run of
        the same input and options that was interrupted; the summary."""
        source = BatchInput(input_name)
        run_id = self.fingerprint(source)
        plan = check_batch_output(output, run_id, overwrite=overwrite)
        summary = BatchSummary(output=str(output))
        if plan.action == "complete":
            metadata = json.loads(output.with_name(output.name + ".meta.json").read_text())
            summary.complete, summary.lines = True, int(metadata.get("rows") or 0)
            return summary
        if plan.action == "resume" and not source.replayable:
            raise OutputError(
                "holds partial results, and stdin cannot be read again to resume; pass --overwrite",
                source=str(output),
            )
        metadata = {
            "kind": "batch",
            "input": source.source,
            "options": self.options,
            "environment": environment(),
            "started": now(),
        }
        store = open_store(output, run_id, metadata)
        summary.resumed_from = summary.lines = store.rows
        seen = SeenIds()
        lines = source.lines(self.served, seen)
        for _ in itertools.islice(lines, store.rows):  # committed already: their ids count as seen
            pass
        meter = Progress(source.total() if progress else None, stream=progress, initial=store.rows)
        started, loaded = time.perf_counter(), self.load_seconds
        try:
            for rows in self.answered(_chunks(lines, self.chunk_size), run_id, summary):
                commit(store, rows)
                summary.lines += len(rows)
                meter.advance("ok" if row[2]["error"] is None else row[2]["error"]["code"] for row in rows)
        finally:
            meter.close()
        summary.seconds = time.perf_counter() - started
        summary.load_seconds = self.load_seconds - loaded
        models = {"chat": describe(self._chat)} if self._chat is not None else {}
        if self._embedder is not None:
            models["embeddings"] = {"model": self._embedder.model_id}
        finish(store, {"finished": now(), "rows": store.rows, "models": models, "summary": summary.as_dict()})
        return summary

    def answered(
        self, chunks: Iterator[list[Line]], run_id: str, summary: BatchSummary
    ) -> Iterator[list[OutputRow]]:
        """Each chunk's output lines, in input order."""
        for state in self._states(chunks, summary):
            yield self._rows(state, run_id, summary)

    def _states(self, chunks: Iterator[list[Line]], summary: BatchSummary) -> Iterator[_Open]:
        first = next(chunks, None)
        while first is not None and not any(isinstance(line.request, GenerationRequest) for line in first):
            yield _Open(first)  # nothing for the chat model yet: do not load it
            first = next(chunks, None)
        if first is None:
            return
        rest = itertools.chain([first], chunks)
        backend = self.chat
        if isinstance(backend, StreamingBackend):
            feed = _Feed(rest, self.max_open)
            while not feed.idle:
                for key, completion in backend.stream(feed):
                    summary.sent += 1
                    feed.answer(key, completion)
                    yield from feed.finished()
                yield from feed.finished()
            return
        for lines in rest:
            state = _Open(lines)
            chat = [i for i, line in enumerate(lines) if isinstance(line.request, GenerationRequest)]
            requests = [lines[i].request for i in chat]
            summary.sent += len(requests)
            for index, completion in zip(chat, generate(backend, requests), strict=True):  # type: ignore[arg-type]
                state.completions[index] = completion
            yield state

    def _rows(self, state: _Open, run_id: str, summary: BatchSummary) -> list[OutputRow]:
        vectors = self._embeddings(state.lines, run_id)
        rows: list[OutputRow] = []
        created = int(time.time())
        model = self._chat.model_id if self._chat is not None else ""
        for index, line in enumerate(state.lines):
            number, custom_id = line.number, line.custom_id
            if line.refused is not None:
                output = answers.error_line(run_id, number, custom_id, *line.refused)
            elif isinstance(line.request, GenerationRequest):
                completion = state.completions[index]
                summary.count_format(line)
                summary.cut += completion.finish_reason == "length"
                problem = answers.completion_error(completion)
                if problem is not None:
                    output = answers.error_line(run_id, number, custom_id, *problem)
                else:
                    summary.prompt_tokens += completion.prompt_tokens
                    summary.completion_tokens += completion.completion_tokens
                    request_id = answers.line_ids(run_id, number)[1]
                    body = answers.chat_body(
                        completion, line.request, model, "chatcmpl-" + request_id[4:], created
                    )
                    output = answers.response_line(run_id, number, custom_id or "", body)
            else:
                output = vectors[index]
            if output["error"] is None:
                summary.answered += 1
            else:
                summary.errors[output["error"]["code"]] += 1
            rows.append((number, custom_id, output))
        return rows

    def _embeddings(self, lines: list[Line], run_id: str) -> dict[int, dict[str, Any]]:
        """The output lines of a chunk's embedding requests, by position in the chunk: one call for the
        chunk, then line by line when it fails, so only the lines that fail alone get an error."""
        wanted = [(i, x) for i, x in enumerate(lines) if isinstance(x.request, EmbeddingRequest)]
        embedder = self.embedder if wanted else None
        if embedder is None:
            return {}
        texts = [list(x.request.texts) for _, x in wanted]  # type: ignore[union-attr]
        try:
            flat = embedder.embed([t for group in texts for t in group])
            results = []
            for group in texts:
                results.append(flat[: len(group)])
                flat = flat[len(group) :]
        except Exception:  # find the lines that fail on their own
            results = []
            for group in texts:
                try:
                    results.append(embedder.embed(group))
                except Exception as exc:
                    results.append(f"{type(exc).__name__}: {exc}")  # type: ignore[arg-type]
        out: dict[int, dict[str, Any]] = {}
        for (index, line), result in zip(wanted, results, strict=True):
            custom_id = line.custom_id or ""
            if isinstance(result, str):
                message = f"line {line.number}: {result}"
                out[index] = answers.error_line(run_id, line.number, custom_id, "engine_error", message)
                continue
            tokens = sum(t for _, t in result)
            body = answers.embedding_body([v for v, _ in result], tokens, embedder.model_id)
            out[index] = answers.response_line(run_id, line.number, custom_id, body)
        return out


def _chunks(lines: Iterator[Line], size: int) -> Iterator[list[Line]]:
    while chunk := list(itertools.islice(lines, size)):
        yield chunk
