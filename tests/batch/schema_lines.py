"""Batch files of JSON-schema answers for the tests and the benchmark of bounded schemas: the 12 lines of
the well-formed-answers issue (a verdict and a 1-5 score, ``max_tokens`` 40) and a 400-line mixed file
(six bounded schemas, one with an unbounded string, one recursive, ``json_object``, plain chat and
log-probability lines), and a check of the answers against each line's schema with ``jsonschema``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"enum": ["good", "bad"]},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["verdict", "score"],
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "verdict": VERDICT,
    "probability": {
        "type": "object",
        "properties": {"p": {"type": "number", "minimum": 0, "maximum": 1}, "pass": {"type": "boolean"}},
        "required": ["p", "pass"],
    },
    "rubric": {
        "type": "object",
        "properties": {
            "clear": {"type": "integer", "minimum": 1, "maximum": 10},
            "right": {"type": "integer", "minimum": 1, "maximum": 10},
            "grade": {"enum": ["poor", "fair", "good"]},
        },
        "required": ["clear", "right", "grade"],
    },
    "tags": {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"enum": ["math", "code", "chat"]},
                "minItems": 1,
                "maxItems": 3,
            }
        },
        "required": ["tags"],
    },
    "short": {
        "type": "object",
        "properties": {"why": {"type": "string", "maxLength": 8}, "ok": {"type": "boolean"}},
        "required": ["why", "ok"],
    },
    "nullable": {
        "$defs": {"score": {"type": ["integer", "null"], "minimum": 0, "maximum": 100}},
        "type": "object",
        "properties": {
            "score": {"$ref": "#/$defs/score"},
            "side": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]},
        },
        "required": ["score", "side"],
    },
    "open": {
        "type": "object",
        "properties": {"explanation": {"type": "string"}, "judgment": {"type": "boolean"}},
        "required": ["explanation", "judgment"],
    },
    "tree": {
        "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
        "$ref": "#/$defs/node",
    },
}
BOUNDED = ("verdict", "probability", "rubric", "tags", "short", "nullable")
CYCLE = [*BOUNDED * 7, "object", "plain", "logprobs", "verdict", "rubric", "probability"]  # 48 lines


def line(custom_id: str, kind: str, text: str) -> dict[str, Any]:
    """One chat line of ``kind``: a schema's name, ``object``, ``plain`` or ``logprobs``."""
    body: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": text}],
        "max_tokens": 40,
    }
    if kind in SCHEMAS:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": kind, "schema": SCHEMAS[kind]},
        }
    elif kind == "object":
        body["response_format"] = {"type": "json_object"}
    elif kind == "logprobs":
        body |= {"logprobs": True, "top_logprobs": 2, "max_tokens": 3}
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


def issue_lines() -> list[dict[str, Any]]:
    """The 12 verdict lines."""
    return [line(f"v{i}", "verdict", f"Judge answer {i}: is it good? Score it 1-5.") for i in range(12)]


def mixed_lines(n: int = 400) -> list[dict[str, Any]]:
    """``n`` lines cycling through :data:`CYCLE`, with 4 ``open`` and 4 ``tree`` lines spread among them."""
    kinds = [CYCLE[i % len(CYCLE)] for i in range(n)]
    for i, at in enumerate(range(n // 16, n, n // 8)):
        kinds[at] = "open" if i % 2 == 0 else "tree"
    return [
        line(f"m{i}-{kind}", kind, f"Row {i}: judge the answer '{i * 7 % 13}'.")
        for i, kind in enumerate(kinds)
    ]


def write(path: Path, lines: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def check_answers(source: Path, output: Path) -> dict[str, Any]:
    """Each output line against its input line: per kind, the lines, those that finished, and those whose
    answer parsed and met the line's schema. Raises on an answer that finished yet breaks its schema."""
    inputs = {x["custom_id"]: x for x in map(json.loads, source.read_text().splitlines())}
    counts: dict[str, dict[str, int]] = {}
    for raw in output.read_text().splitlines():
        out = json.loads(raw)
        body = inputs[out["custom_id"]]["body"]
        kind = out["custom_id"].split("-")[-1] if "-" in out["custom_id"] else "verdict"
        entry = counts.setdefault(kind, {"lines": 0, "finished": 0, "valid": 0, "errors": 0})
        entry["lines"] += 1
        if out["error"] is not None:
            entry["errors"] += 1
            continue
        choice = out["response"]["body"]["choices"][0]
        if choice["finish_reason"] != "stop":
            continue
        entry["finished"] += 1
        form = body.get("response_format")
        if form is None:
            continue
        answer = json.loads(choice["message"]["content"])
        if form["type"] == "json_object":
            assert isinstance(answer, dict), choice["message"]["content"]
        else:
            jsonschema.validate(answer, form["json_schema"]["schema"])
        entry["valid"] += 1
    return counts
