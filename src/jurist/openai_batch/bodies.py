"""A judge's request as a batch input line's body, and its ``custom_id``.

The body holds OpenAI's chat-completion fields (:func:`~jurist.backends.remote.openai.chat_body`), the
judge's JSON schema as ``response_format``, and, for a request whose assistant turn starts with given text
(a thinking judge's ``prefix``), that text as a last assistant message with vLLM's
``continue_final_message: true`` and ``add_generation_prompt: false``, which ``jurist batch`` and
``vllm run-batch`` honour (OpenAI's own Batch API has no such field). The ``custom_id`` is a hash of the
body without the model, so the same judge config on the same rows finds its answers again in the results
file, whatever their order, and identical requests share one line.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from jurist.backends.remote.openai import chat_body
from jurist.records import ConstraintKind, GenerationRequest

EMIT_KINDS: tuple[ConstraintKind, ...] = ("json_schema",)


def request_body(request: GenerationRequest, model: str) -> dict[str, Any]:
    """The chat completion body of a request (see the module)."""
    body = chat_body(request, model)
    if request.prefix:
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
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
