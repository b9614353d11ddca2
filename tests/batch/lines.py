"""Batch input lines for the tests: one of each kind jurist batch meets, and a scripted model that answers
each request in the shape it asks for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.records import Completion, GenerationRequest

SCHEMA = {
    "type": "object",
    "properties": {"explanation": {"type": "string"}, "judgment": {"type": "boolean"}},
    "required": ["explanation", "judgment"],
}


def chat(custom_id: str, text: str, **body: Any) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}], **body},
    }


def mixed_lines() -> list[dict[str, Any] | str]:
    """Plain chat, a JSON schema, a JSON object, log-probabilities, and lines that must each become an error
    (in order: bad JSON, duplicate id, unserved url, embeddings without a model, n=2, an image part)."""
    return [
        chat("plain", "Say hello.", max_tokens=8, temperature=0),
        chat(
            "schema",
            "Is water wet?",
            max_completion_tokens=40,
            response_format={"type": "json_schema", "json_schema": {"name": "j", "schema": SCHEMA}},
        ),
        chat("object", "Give a JSON object.", max_tokens=20, response_format={"type": "json_object"}),
        chat("logprobs", "Yes or no?", max_tokens=3, logprobs=True, top_logprobs=2),
        '{"custom_id": "broken", "method": "POST", ',
        chat("plain", "A second line with the first line's id."),
        {"custom_id": "legacy", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}},
        {
            "custom_id": "embed",
            "method": "POST",
            "url": "/v1/embeddings",
            "body": {"input": "x", "model": "e"},
        },
        chat("two", "Two choices please.", n=2),
        {
            "custom_id": "image",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
        },
    ]


EXPECTED_ERRORS = {
    4: "invalid_json",
    5: "duplicate_custom_id",
    6: "unsupported_url",
    7: "unsupported_url",
    8: "unsupported_parameter",
    9: "unsupported_parameter",
}


def write_lines(path: Path, lines: Sequence[dict[str, Any] | str]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def answer(request: GenerationRequest) -> Completion:
    """A scripted model: JSON for a JSON constraint, per-token log-probabilities when asked for."""
    prompt = sum(len(m.content) for m in request.messages)
    constraint = request.constraint
    if constraint is not None and (
        constraint.json_schema is not None or (constraint.regex or "")[:2] == r"\{"
    ):
        text = json.dumps({"explanation": "scripted", "judgment": True})
    else:
        text = "yes" if request.logprobs is not None else f"echo {request.messages[-1].content}"
    tokens = tuple(text[i : i + 2] for i in range(0, len(text), 2))
    logprobs = None
    if request.logprobs is not None:
        logprobs = tuple({token: -0.25, "no": -1.5, "maybe": -2.0} for token in tokens)
    return Completion(
        text,
        "stop",
        prompt_tokens=prompt,
        completion_tokens=len(tokens),
        token_logprobs=logprobs,
        tokens=tokens if logprobs else None,
    )
