"""Mixed OpenAI batch input files for the batch benchmarks, built from LLMBar's instructions.

Line kinds, in a fixed cycle: plain chat; a judge prompt with a ``json_schema`` response format; a
``json_object`` response format; a short answer with ``logprobs`` / ``top_logprobs``. With ``bad=True`` the
file also holds lines that must each come back as an error: every 500th line is not JSON, lines 250,
1,250, 2,250... reuse the line before's custom_id, and every other 700th line asks for
``/v1/completions``. Written line by line, so a million-line file never sits in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import llmbar_records

VERDICT = {
    "type": "object",
    "properties": {"explanation": {"type": "string", "maxLength": 40}, "judgment": {"type": "boolean"}},
    "required": ["explanation", "judgment"],
    "additionalProperties": False,
}
KINDS = ("plain", "schema", "object", "logprobs")


def body(kind: str, instruction: str, output: str, max_tokens: int) -> dict[str, Any]:
    if kind == "plain":
        messages = [{"role": "user", "content": f"Answer in one short sentence: {instruction}"}]
        return {"model": "gpt-4o-mini", "messages": messages, "max_tokens": max_tokens, "temperature": 0}
    if kind == "schema":
        messages = [
            {"role": "system", "content": "You judge whether a response follows the instruction."},
            {"role": "user", "content": f"Instruction: {instruction}\nResponse: {output}"},
        ]
        form = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT}}
        return {
            "model": "gpt-4o-mini",
            "messages": messages,
            "max_completion_tokens": 3 * max_tokens,
            "temperature": 0,
            "response_format": form,
        }
    if kind == "object":
        messages = [
            {"role": "user", "content": f"Reply with a JSON object naming the topic of: {instruction}"}
        ]
        return {
            "model": "gpt-4o-mini",
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
    messages = [{"role": "user", "content": f"Is this response helpful? Say yes or no.\n{output}"}]
    return {
        "model": "gpt-4o-mini",
        "messages": messages,
        "max_tokens": 2,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 3,
    }


def lines(n: int, *, bad: bool = True, max_tokens: int = 12, text_chars: int = 300) -> Iterator[str]:
    """``n`` input lines as JSON text (see the module's docstring)."""
    records = llmbar_records(10**9)
    for i in range(n):
        number = i + 1
        if bad and number % 500 == 0:
            yield f'{{"custom_id": "broken-{number}", "method": "POST", "url": '
            continue
        record = records[i % len(records)]
        kind = KINDS[i % len(KINDS)]
        custom_id = f"req-{number:07d}"
        if bad and number % 1000 == 250:
            custom_id = f"req-{number - 1:07d}"  # the line before's id again
        line: dict[str, Any] = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions"}
        if bad and number % 700 == 0:
            line["url"] = "/v1/completions"
        line["body"] = body(kind, record["input"][:text_chars], record["output_1"][:text_chars], max_tokens)
        yield json.dumps(line)


def write_file(path: Path, n: int, **options: Any) -> Path:
    """Write ``n`` lines to ``path``."""
    with path.open("w", encoding="utf-8") as handle:
        for text in lines(n, **options):
            handle.write(text + "\n")
    return path


def expected_errors(n: int) -> dict[str, int]:
    """How many lines of a file with bad lines come back as each error code."""
    duplicates = (n + 750) // 1000  # lines 250, 1250, ...
    return {
        "invalid_json": n // 500,
        "duplicate_custom_id": duplicates,
        "unsupported_url": n // 700 - n // 3500,
    }
