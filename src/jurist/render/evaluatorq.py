"""evaluatorq's view of a row, value by value: the conversation it shows a judge, the agent's answer, its
tool calls and transcript, the expected output as text, and how a ``{{path}}`` value becomes prompt text.

These follow evaluatorq 1.82's jury (``llm_jury`` / ``llm_jury_pairwise``) so that the ``{{input.*}}``,
``{{output.*}}`` and ``{{log.*}}`` variables render byte for byte as there (tests/parity checks them against
the installed package):

* input messages keep only ``role`` and ``content``; content parts are flattened to their text, one part a
  line; a null content is ``""``; media parts become ``[image]``-style markers; other structured content is
  compact JSON;
* an output is its text (a string, a static ``{"response": ..., "tool_calls": [...]}`` object, an
  OpenResponses ``{"object": "response", "output": [...]}`` object, a dumped ``AgentResponse``
  ``{"output": [output_text, function_call, reasoning items]}``); its tool calls are
  ``{"name", "arguments" (an object), "result", "id"}``; its transcript lists text, tool-call turns and
  reasoning items;
* an expected output that is not text is indented JSON (as evaluatorq's ``output_to_text``);
* a list or object value renders as JSON indented by two spaces (ASCII-escaped, as ``json.dumps`` does by
  default), ``True``/``False``/numbers as Python writes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.config.templates import plain_json

TEXT_PARTS = frozenset({"text", "input_text", "output_text", "summary_text", "refusal"})
REASONING_PARTS = frozenset({"reasoning", "reasoning_content", "thinking"})
MEDIA_PARTS = {
    "image": "image",
    "image_url": "image",
    "input_image": "image",
    "file": "file",
    "input_file": "file",
    "audio": "audio",
    "input_audio": "audio",
    "output_audio": "audio",
    "video": "video",
    "input_video": "video",
}
UNKNOWN_ARGUMENTS_TEXT = "arguments unavailable"
AGENT_ITEMS = frozenset({"output_text", "function_call", "reasoning"})


def _compact(value: Any) -> str:
    if isinstance(value, Mapping):
        return json.dumps(dict(value), default=str)
    if isinstance(value, list | tuple):
        return json.dumps(list(value), default=str)
    return "" if value is None else str(value)


def _media(part: Any) -> str | None:
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if isinstance(kind, str) and kind in MEDIA_PARTS:
        return MEDIA_PARTS[kind]
    url = part.get("image_url")
    shaped = (
        bool(url)
        if isinstance(url, str)
        else isinstance(url, Mapping) and any(isinstance(url.get(k), str) and url[k] for k in ("url", "data"))
    )
    return "image" if kind is None and shaped else None


def _is_part(part: Any) -> bool:
    if isinstance(part, str):
        return True
    kind = part.get("type") if isinstance(part, Mapping) else None
    known = isinstance(kind, str) and (kind in TEXT_PARTS or kind in REASONING_PARTS or kind in MEDIA_PARTS)
    return known or _media(part) is not None


def _part_texts(part: Any) -> list[str]:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if isinstance(kind, str) and kind in REASONING_PARTS:
        return []
    if isinstance(kind, str) and kind in TEXT_PARTS and isinstance(part, Mapping):
        keys = ("refusal", "text", "content") if kind == "refusal" else ("text", "content")
        return [next((part[k] for k in keys if isinstance(part.get(k), str)), "")]
    media = _media(part)
    if media is not None:
        return [f"[{media}]"]
    return [_compact(part)]


def content_text(content: Any) -> str:
    """A message's content as text: content parts flattened (one part a line), null as ``""``."""
    if content is None:
        return ""
    if isinstance(content, list | tuple):
        if not all(_is_part(p) for p in content if p is not None):
            return _compact(content)
        return "\n".join(text for p in content if p is not None for text in _part_texts(p))
    return "\n".join(_part_texts(content))


def clean_messages(messages: Sequence[Any]) -> list[dict[str, str]]:
    """Chat messages as a judge sees them: only ``role`` (default ``user``) and flattened ``content``."""
    out = []
    for message in messages:
        if isinstance(message, Mapping):
            out.append(
                {
                    "role": str(message.get("role", "user")),
                    "content": content_text(message.get("content", "")),
                }
            )
        else:
            out.append({"role": "user", "content": content_text(message)})
    return out


def inputs_messages(inputs: Mapping[str, Any]) -> list[dict[str, str]]:
    """A data point's ``inputs`` as messages: its ``messages``, its ``input`` as one user message, or the
    whole object as indented JSON in one user message."""
    if isinstance(inputs.get("messages"), list):
        return clean_messages(inputs["messages"])
    if "input" in inputs:
        return [{"role": "user", "content": content_text(inputs["input"])}]
    return [{"role": "user", "content": json.dumps(plain_json(inputs), indent=2, default=str)}]


def text_of(value: Any) -> str:
    """A value as evaluatorq shows an expected output: text as it is, null as ``""``, a chat transcript as
    its messages' text, anything structured as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get("object") == "response":
        return "".join(text for kind, text, _ in output_items(value) if kind == "text")
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(plain_json(value), indent=2, default=str)
    return str(value)


Item = tuple[str, str, Mapping[str, Any]]  # (text | tool | reasoning, its text, a tool call's fields)


def tool_item(call: Mapping[str, Any]) -> Item:
    """One tool call (``{"name", "arguments", ...}`` or OpenAI's ``{"function": {...}}``) as an item."""
    fn = call.get("function", call)
    fn = fn if isinstance(fn, Mapping) else {}
    raw = fn.get("arguments", "{}")
    arguments = raw if isinstance(raw, str) else json.dumps(raw or {})
    ident = str(call.get("id", "") or call.get("call_id", "") or "")
    return (
        "tool",
        "",
        {"id": ident, "name": str(fn.get("name", "")), "arguments": arguments, "result": call.get("result")},
    )


def _response_items(output: Sequence[Any]) -> list[Item]:
    """An OpenResponses object's items: one text per output_text (or refusal) part, each function call
    with the result of its ``function_call_output``; reasoning items are left out, as evaluatorq does."""
    results = {
        e.get("call_id"): e.get("output")
        for e in output
        if isinstance(e, Mapping) and e.get("type") == "function_call_output"
    }
    items: list[Item] = []
    for entry in output:
        kind = entry.get("type") if isinstance(entry, Mapping) else None
        if kind == "message":
            for part in entry.get("content") or []:
                ptype = part.get("type") if isinstance(part, Mapping) else None
                text = part.get("text") if ptype == "output_text" else part.get("refusal") if ptype else None
                if ptype in ("output_text", "refusal") and text:
                    items.append(("text", str(text), {}))
        elif kind == "function_call":
            call = {**entry, "result": results.get(entry.get("call_id"), entry.get("result"))}
            items.append(tool_item(call))  # its id is the item's (then the call's)
    return items


def _agent_items(output: Sequence[Any]) -> list[Item]:
    """The items of a dumped evaluatorq ``AgentResponse``: ``output_text``, ``function_call``,
    ``reasoning``."""
    items: list[Item] = []
    for entry in output:
        kind = entry.get("type") if isinstance(entry, Mapping) else None
        if kind == "output_text":
            items.append(("text", str(entry.get("text", "")), {}))
        elif kind == "function_call":
            items.append(tool_item(entry))
        elif kind == "reasoning":
            items.append(("reasoning", str(entry.get("text", "")), {}))
    return items


def _is_agent_response(output: Mapping[str, Any]) -> bool:
    listed = output.get("output")
    return (
        isinstance(listed, list)
        and "response" not in output
        and all(isinstance(e, Mapping) and e.get("type") in AGENT_ITEMS for e in listed)
    )


def output_items(output: Any) -> list[Item]:
    """An agent's output as its items: a string is one text; a static ``{"response", "tool_calls"}`` object
    its text and calls; an OpenResponses object its items; another value its text."""
    if output is None:
        return []
    if isinstance(output, Mapping) and output.get("object") == "response":
        return _response_items(output.get("output") or [])
    if isinstance(output, Mapping) and _is_agent_response(output):
        return _agent_items(output["output"])
    if isinstance(output, str):
        return [("text", output, {})] if output else []
    items: list[Item] = []
    if isinstance(output, Mapping):
        text = output.get("response", "")
        if text:
            items.append(("text", str(text), {}))
        items.extend(tool_item(call) for call in output.get("tool_calls") or [] if isinstance(call, Mapping))
    elif output:
        items.append(("text", str(output), {}))
    return items or [("text", text_of(output), {})]


def _arguments(call: Mapping[str, Any]) -> Any:
    raw = call["arguments"]
    if raw == "":
        return UNKNOWN_ARGUMENTS_TEXT
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def answer_parts(items: Sequence[Item]) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """(response text, tool calls, transcript) of an output's items, as evaluatorq's namespace holds them."""
    response = "".join(text for kind, text, _ in items if kind == "text")
    tools = [
        {"name": c["name"], "arguments": _arguments(c), "result": c["result"], "id": c["id"]}
        for kind, _, c in items
        if kind == "tool"
    ]
    transcript: list[dict[str, Any]] = []
    for kind, text, c in items:
        if kind == "text":
            transcript.append({"role": "assistant", "content": text})
        elif kind == "reasoning":
            transcript.append({"role": "assistant", "content": text, "type": "reasoning"})
        else:
            function = {"name": c["name"], "arguments": _arguments(c)}
            call = {"id": c["id"], "type": "function", "function": function}
            transcript.append(
                {"role": "assistant", "content": "", "tool_calls": [call], "result": c["result"]}
            )
    return response, tools, transcript
