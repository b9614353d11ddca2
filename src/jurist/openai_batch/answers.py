"""Answers <-> OpenAI's output shapes: a :class:`~jurist.records.Completion` as a chat completion body
(usage counts, per-token log-probabilities), an output line for a response or an error, and back: a
results line's body as a :class:`Completion` (for reading hosted batch results into a judge run).

Ids are derived from the run and the line, so a resumed run writes the same ids as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.backends.remote.openai import completion_of
from jurist.records import Completion, GenerationRequest

TOO_LONG_CODE = "context_length_exceeded"
ENGINE_ERROR_CODE = "engine_error"


def line_ids(run: str, line: int) -> tuple[str, str]:
    """The output line's ``id`` and its response's ``request_id``, fixed by the run and the line number."""
    digest = hashlib.sha256(f"{run}:{line}".encode()).hexdigest()
    return f"batch_req_{digest[:24]}", f"req_{digest[24:48]}"


def error_line(run: str, line: int, custom_id: str | None, code: str, message: str) -> dict[str, Any]:
    """An output line for a request that was not answered."""
    return {
        "id": line_ids(run, line)[0],
        "custom_id": custom_id,
        "response": None,
        "error": {"code": code, "message": message},
    }


def response_line(run: str, line: int, custom_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """An output line for an answered request (status 200)."""
    line_id, request_id = line_ids(run, line)
    return {
        "id": line_id,
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": request_id, "body": dict(body)},
        "error": None,
    }


def completion_error(completion: Completion) -> tuple[str, str] | None:
    """(code, message) when the engine did not answer, else None."""
    if completion.finish_reason == "too_long":
        return TOO_LONG_CODE, completion.error or "the prompt is longer than the model's context"
    if completion.finish_reason == "error":
        return ENGINE_ERROR_CODE, completion.error or "the engine failed on this request"
    return None


def _token(text: str, logprob: float) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode("utf-8"))}


def logprobs_content(completion: Completion, top: int) -> list[dict[str, Any]]:
    """OpenAI's ``choices[0].logprobs.content``: per generated token its log-probability and the ``top``
    most likely alternatives."""
    out = []
    steps = completion.token_logprobs or ()
    for text, step in zip(completion.tokens or (), steps, strict=False):
        ranked = sorted(step.items(), key=lambda item: -item[1])
        chosen = step.get(text, ranked[0][1] if ranked else 0.0)
        entry = _token(text, float(chosen))
        entry["top_logprobs"] = [_token(t, float(lp)) for t, lp in ranked[:top]]
        out.append(entry)
    return out


def chat_body(
    completion: Completion, request: GenerationRequest, model: str, completion_id: str, created: int
) -> dict[str, Any]:
    """A chat completion body for an answered request."""
    logprobs = None
    if request.logprobs is not None:
        logprobs = {"content": logprobs_content(completion, request.logprobs), "refusal": None}
    usage: dict[str, Any] = {
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.prompt_tokens + completion.completion_tokens,
    }
    if completion.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": completion.cached_tokens}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion.text, "refusal": None},
                "logprobs": logprobs,
                "finish_reason": "length" if completion.finish_reason == "length" else "stop",
            }
        ],
        "usage": usage,
    }


def embedding_body(vectors: Sequence[Sequence[float]], prompt_tokens: int, model: str) -> dict[str, Any]:
    """An embeddings answer body."""
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": [float(v) for v in vector]}
            for i, vector in enumerate(vectors)
        ],
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def completion_from_line(line: Mapping[str, Any]) -> Completion:
    """A batch output line (OpenAI's, vLLM's or jurist's) as the :class:`Completion` a judge reads: the text,
    finish reason, usage and log-probabilities; an error line or a non-200 response is an ``error``
    completion with the server's message."""
    error = line.get("error")
    response = line.get("response") or {}
    if error:
        code = error.get("code") if isinstance(error, Mapping) else None
        message = error.get("message") if isinstance(error, Mapping) else error
        finish = "too_long" if code == TOO_LONG_CODE else "error"
        return Completion("", finish, error=f"batch result: {code or 'error'}: {message}")  # type: ignore[arg-type]
    status = response.get("status_code")
    body = response.get("body") or {}
    if status != 200:
        detail = json.dumps(body.get("error") or body)[:300]
        return Completion("", "error", error=f"batch result: HTTP {status}: {detail}")
    return completion_of(body, "batch result: unexpected body")
