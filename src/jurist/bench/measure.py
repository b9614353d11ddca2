"""Measuring one judge on one backend: a timed run over rows, and what it did.

:class:`Timed` wraps a backend as the engine sees it and records each answer's tokens, its prefix-cache
hits and, when the backend streams, each request's latency (from the moment the engine handed it over to
the moment its answer came back; a backend that answers whole batches has no per-request latency).
:class:`PeakMemory` samples the resident memory of this process and its children (data-parallel workers,
engine processes) and, where ``nvidia-smi`` sees GPUs, their used memory.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurist.backends.base import Backend, Forwarding, RequestFeed, StreamingBackend, call
from jurist.judges.outputs import JudgeOutput
from jurist.judges.reasoning import REASONING_CUT, REASONING_TOKENS
from jurist.records import (
    Answer,
    Completion,
    ConstraintKind,
    GenerationRequest,
    Request,
)

NOT_SENT = ("missing_input", "bad_input", "target_error")


@dataclass
class Record:
    """What the backend answered during one measurement."""

    latencies: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cached_known: bool = False

    def add(self, completion: Answer) -> None:
        self.prompt_tokens += completion.prompt_tokens
        cached = getattr(completion, "cached_tokens", None)
        if cached is not None:
            self.cached_known = True
            self.cached_tokens += cached

    @classmethod
    def merged(cls, records: Sequence[Record]) -> Record:
        """One record of several backends' (a cascade's stages) over one run."""
        return cls(
            [latency for r in records for latency in r.latencies],
            sum(r.prompt_tokens for r in records),
            sum(r.cached_tokens for r in records),
            any(r.cached_known for r in records),
        )


class Timed(Forwarding):
    """A backend as the engine sees it, recording what it answers (see the module's docstring)."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.record = Record()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def constraint_kinds(self) -> tuple[ConstraintKind, ...]:
        return self.inner.constraint_kinds

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        completions = self.inner.generate(requests)
        for completion in completions:
            self.record.add(completion)
        return completions

    def forward(self, kind: type[Request], requests: Sequence[Request]) -> list[Answer]:
        answers = call(self.inner, kind, requests)  # a backend without the method: errors, 0 tokens each
        for answer in answers:
            self.record.add(answer)
        return answers

    def describe(self) -> dict[str, Any]:
        method = getattr(self.inner, "describe", None)
        return dict(method()) if callable(method) else {}

    def close(self) -> None:  # the runner closes the real backend when it is done with the model
        pass


class _TimedFeed:
    def __init__(self, feed: RequestFeed, taken: dict[int, float]) -> None:
        self.feed, self.taken = feed, taken

    def take(self, n: int) -> list[tuple[int, GenerationRequest]]:
        items = self.feed.take(n)
        now = time.perf_counter()
        for key, _ in items:
            self.taken[key] = now
        return items


class TimedStreaming(Timed):
    """:class:`Timed` for a streaming backend: also each request's latency."""

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]:
        taken: dict[int, float] = {}
        inner: StreamingBackend = self.inner  # type: ignore[assignment]
        for key, completion in inner.stream(_TimedFeed(feed, taken)):
            started = taken.pop(key, None)
            if started is not None:
                self.record.latencies.append(time.perf_counter() - started)
            self.record.add(completion)
            yield key, completion


def timed(backend: Backend) -> Timed:
    return TimedStreaming(backend) if isinstance(backend, StreamingBackend) else Timed(backend)


# ------------------------------------------------------------------------------------------- memory


def query_gpus(*fields: str, timeout: float = 30) -> list[list[str]]:
    """``nvidia-smi --query-gpu``: one row of the ``fields`` per visible GPU (none without ``nvidia-smi``, or
    when it fails); the first field may hold commas (a GPU's name)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        done = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [line.rsplit(",", len(fields) - 1) for line in done.stdout.splitlines() if line.strip()]
    return [[cell.strip() for cell in row] for row in rows if len(row) == len(fields)]


def gpu_memory_used_mb() -> float | None:
    """Memory used on the visible GPUs, in MiB, summed (None without ``nvidia-smi`` or GPUs)."""
    try:
        values = [float(used) for (used,) in query_gpus("memory.used", timeout=10)]
    except ValueError:
        return None
    return sum(values) if values else None


def rss_mb() -> float:
    """Resident memory of this process and its children, in MiB."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with the bench extra
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    process = psutil.Process(os.getpid())
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return float(total) / 2**20


class PeakMemory:
    """Samples memory in a thread while the ``with`` block runs; ``rss_mb`` and ``gpu_mb`` are the peaks."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.rss_mb = 0.0
        self.gpu_mb: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._gpu = shutil.which("nvidia-smi") is not None

    def _sample(self, with_gpu: bool) -> None:
        self.rss_mb = max(self.rss_mb, rss_mb())
        if with_gpu:
            used = gpu_memory_used_mb()
            if used is not None:
                self.gpu_mb = used if self.gpu_mb is None else max(self.gpu_mb, used)

    def _run(self) -> None:
        ticks = 0
        while not self._stop.wait(self.interval):
            ticks += 1
            self._sample(self._gpu and ticks % 5 == 0)

    def __enter__(self) -> PeakMemory:
        self._sample(self._gpu)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(self._gpu)


# ------------------------------------------------------------------------------------------ metrics


def percentile(values: Sequence[float], share: float) -> float | None:
    """The ``share`` quantile (nearest rank) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(share * len(ordered)))) - 1]


@dataclass(frozen=True)
class Counts:
    """What one run judged: its rows, the outputs sent to a model (``judged``) and those ``ok``, the rows
    with a usable verdict (``valid``), prompt and output tokens, the outputs by status, and for judges
    that think first the outputs with a reasoning, its tokens and the outputs whose reasoning the budget
    cut."""

    rows: int
    judged: int
    ok: int
    valid: int
    prompt_tokens: int
    output_tokens: int
    statuses: dict[str, int]
    reasoned: int = 0
    reasoning_tokens: int = 0
    reasoning_cut: int = 0


def count_outputs(outputs: Mapping[str, Sequence[JudgeOutput]], *, labels_only: bool = False) -> Counts:
    """:class:`Counts` of one run's outputs (every judge's): a valid row is ``ok`` with every field set;
    with ``labels_only`` (LOGPROBS scoring and reward models, where nothing is decoded and explanations
    stay empty) it is ``ok`` with a score."""
    outs = [o for judge in outputs.values() for o in judge]
    sent = [o for o in outs if o.status not in NOT_SENT]
    ok = [o for o in sent if o.ok]
    valid = sum(
        (o.score is not None) if labels_only else all(v is not None for v in o.field_values.values())
        for o in ok
    )
    statuses: dict[str, int] = {}
    for o in outs:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    thought = [o for o in sent if o.extras.get(REASONING_TOKENS) is not None]
    return Counts(
        rows=len(next(iter(outputs.values()), ())),
        judged=len(sent),
        ok=len(ok),
        valid=valid,
        prompt_tokens=sum(o.prompt_tokens or 0 for o in outs),
        output_tokens=sum(o.completion_tokens or 0 for o in outs),
        statuses=statuses,
        reasoned=len(thought),
        reasoning_tokens=sum(o.extras[REASONING_TOKENS] for o in thought),
        reasoning_cut=sum(bool(o.extras.get(REASONING_CUT)) for o in thought),
    )


def figures(
    counts: Counts,
    seconds: float,
    record: Record,
    cache: tuple[Mapping[str, float], Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """What one timed run did: throughput in rows and tokens, parse rate, valid rows, cache hits, latency
    (``cache``: the engine's prefix-cache counters before and after the run, where it has them)."""
    hit_rate = None
    if cache is not None:
        queries = cache[1]["queries"] - cache[0]["queries"]
        hit_rate = (cache[1]["hits"] - cache[0]["hits"]) / queries if queries else None
    elif record.cached_known and record.prompt_tokens:
        hit_rate = record.cached_tokens / record.prompt_tokens
    per_second = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    thinking = (
        {
            "reasoning_tokens_per_judgment": round(counts.reasoning_tokens / counts.reasoned, 1),
            "reasoning_cut_share": round(counts.reasoning_cut / counts.reasoned, 4),
        }
        if counts.reasoned
        else {}
    )
    return {
        "rows": counts.rows,
        "seconds": round(seconds, 3),
        "rows_per_s": round(per_second(counts.rows), 3),
        "prompt_tokens": counts.prompt_tokens,
        "output_tokens": counts.output_tokens,
        "prompt_tokens_per_s": round(per_second(counts.prompt_tokens), 1),
        "output_tokens_per_s": round(per_second(counts.output_tokens), 1),
        "judged": counts.judged,
        "parse_rate": round(counts.ok / counts.judged, 4) if counts.judged else None,
        "valid_rows": counts.valid,
        "valid_rows_per_s": round(per_second(counts.valid), 3),
        "statuses": dict(counts.statuses),
        "prefix_cache_hit_rate": None if hit_rate is None else round(hit_rate, 4),
        "latency_p50_s": _round(percentile(record.latencies, 0.5)),
        "latency_p95_s": _round(percentile(record.latencies, 0.95)),
        **thinking,
    }


def metrics(
    outputs: Mapping[str, Sequence[JudgeOutput]],
    seconds: float,
    record: Record,
    cache: tuple[Mapping[str, float], Mapping[str, float]] | None = None,
    *,
    labels_only: bool = False,
) -> dict[str, Any]:
    """:func:`figures` of one timed run's outputs (:func:`count_outputs`)."""
    return figures(count_outputs(outputs, labels_only=labels_only), seconds, record, cache)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
