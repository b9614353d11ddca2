"""Reading vLLM's results: a finished request's output as a :class:`~jurist.records.Completion`, and
the engine's prefix-cache counters. Attributes of vLLM's outputs only; its arguments are named in
:mod:`jurist.backends.vllm.backend`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jurist.backends.local.chat import clean_text
from jurist.records import Completion, GenerationRequest


def completion_from(output: Any, request: GenerationRequest) -> Completion:
    """A finished ``RequestOutput`` as a :class:`Completion` (with per-token log-probabilities when the
    request asked for them)."""
    choice = output.outputs[0]
    reason = choice.finish_reason
    finish = "length" if reason == "length" else "stop" if reason in ("stop", None) else "error"
    token_logprobs = None
    tokens = None
    if request.logprobs is not None and choice.logprobs is not None:
        token_logprobs = tuple(
            {clean_text(lp.decoded_token or ""): float(lp.logprob) for lp in step.values()}
            for step in choice.logprobs
        )
        tokens = tuple(
            clean_text(step[token_id].decoded_token or "")
            for token_id, step in zip(choice.token_ids, choice.logprobs, strict=False)
        )
    return Completion(
        clean_text(choice.text),
        finish,  # type: ignore[arg-type]
        prompt_tokens=len(output.prompt_token_ids or ()),
        completion_tokens=len(choice.token_ids),
        cached_tokens=getattr(output, "num_cached_tokens", None),
        error=None if finish != "error" else f"engine finished the request with {reason!r}",
        token_logprobs=token_logprobs,
        tokens=tokens,
    )


def prefix_cache_stats(metrics: Iterable[Any]) -> dict[str, float]:
    """Prefix-cache queries and hits (in tokens) from the engine's metrics."""
    totals = {"queries": 0.0, "hits": 0.0}
    for metric in metrics:
        if metric.name == "vllm:prefix_cache_queries":
            totals["queries"] += float(getattr(metric, "value", 0.0))
        elif metric.name == "vllm:prefix_cache_hits":
            totals["hits"] += float(getattr(metric, "value", 0.0))
    return totals
