"""Prompt templates: ``{name}`` placeholders (Oumi) and ``{{dotted.path}}`` variables (Mustache style).

Grammar, decided once here and used both to list a template's inputs and to render it:

* ``{name}``: ``name`` is an identifier; it is looked up in the row (a list or dict value renders as JSON).
* ``{{ path }}``: ``path`` is dotted (``input.expected_output``, ``messages.0.content``); it is looked up in
  the row's namespace (:func:`build_namespace`). A path that ends on an object renders as the literal
  ``{{path}}`` (an object has no single sensible string form) and is reported in ``RenderResult.notes``.
* Anything else is literal text, so JSON in a prompt (``{"judgment": "Yes"}``) survives untouched.

A placeholder whose value is absent or null is a per-row problem: :meth:`Template.render` raises
:class:`MissingValue` naming it, and the engine turns that into the row's ``missing_input`` status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"\{\{\s*(?P<path>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}"
    r"|(?<!\{)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}(?!\})"
)


class MissingValue(LookupError):
    """A placeholder has no value (absent key or null) in the row being rendered."""

    def __init__(self, placeholder: str) -> None:
        self.placeholder = placeholder
        super().__init__(placeholder)


@dataclass(frozen=True)
class Placeholder:
    """One placeholder: ``path`` is the lookup path, ``dotted`` tells ``{{a.b}}`` from ``{a}``."""

    path: tuple[str, ...]
    dotted: bool
    text: str

    @property
    def root(self) -> str:
        return self.path[0]


def _stringify(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


class Template:
    """A parsed template. Immutable; rendering never changes the row it is given."""

    def __init__(self, text: str) -> None:
        self.text = text
        parts: list[str | Placeholder] = []
        pos = 0
        for match in _TOKEN.finditer(text):
            if match.start() > pos:
                parts.append(text[pos : match.start()])
            if match.group("path") is not None:
                path = tuple(match.group("path").split("."))
                parts.append(Placeholder(path, True, match.group(0)))
            else:
                parts.append(Placeholder((match.group("name"),), False, match.group(0)))
            pos = match.end()
        if pos < len(text):
            parts.append(text[pos:])
        self._parts = tuple(parts)

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self._parts if isinstance(p, Placeholder))

    @property
    def names(self) -> set[str]:
        """Root names the template reads (``request`` for ``{request}``, ``input`` for ``{{input.x}}``)."""
        return {p.root for p in self.placeholders}

    def substitute(self, values: Mapping[str, str]) -> Template:
        """A new template with the ``{name}`` placeholders in ``values`` replaced (template_variables)."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, Placeholder) and not part.dotted and part.root in values:
                out.append(values[part.root])
            else:
                out.append(part if isinstance(part, str) else part.text)
        return Template("".join(out))

    def render(self, row: Mapping[str, Any], notes: list[str] | None = None) -> str:
        """Fill every placeholder from ``row``; raise :class:`MissingValue` for an absent or null one."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = lookup(row, part.path)
            if value is None:
                raise MissingValue(".".join(part.path))
            if part.dotted and isinstance(value, Mapping):
                if notes is not None:
                    notes.append(f"{part.text} names an object, not a value; left as literal text")
                out.append(part.text)
                continue
            out.append(_stringify(value))
        return "".join(out)

    def render_lenient(self, row: Mapping[str, Any]) -> str:
        """Like :meth:`render`, but absent values render as empty strings (for few-shot examples)."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                value = lookup(row, part.path)
                out.append("" if value is None else _stringify(value))
        return "".join(out)


class TextWithFields(str):
    """A string that also has named fields for dotted paths.

    A pairwise side is its response text for ``{response_a}`` and an evaluatorq side namespace for
    ``{{response_a.output.response}}``: ``lookup`` descends into ``fields`` when a path goes past it.
    """

    fields: Mapping[str, Any]

    def __new__(cls, text: str, fields: Mapping[str, Any]) -> TextWithFields:
        obj = super().__new__(cls, text)
        obj.fields = fields
        return obj


def lookup(data: Any, path: tuple[str, ...]) -> Any:
    """Follow ``path`` through dicts (by key) and lists (by index); None when any step is missing."""
    node = data
    for step in path:
        if isinstance(node, TextWithFields):
            node = node.fields
        if isinstance(node, Mapping):
            if step not in node:
                return None
            node = node[step]
        elif isinstance(node, list | tuple) and step.isdigit():
            index = int(step)
            if index >= len(node):
                return None
            node = node[index]
        else:
            return None
    return node


def placeholders_in(text: str) -> set[str]:
    """Root names of every placeholder in ``text``."""
    return Template(text).names


# ------------------------------------------------------------------------------ evaluatorq namespace

NAMESPACE_ROOTS = ("input", "output", "log")


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None:
            return value
    return None


def build_namespace(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row plus evaluatorq's ``input.*`` / ``output.*`` / ``log.*`` families, derived from columns.

    A row that already has an ``input``/``output``/``log`` value keeps it (an object, or a plain text column
    such as LLMBar's ``input``). Otherwise the families are built from
    conventional columns: ``messages`` (or ``all_messages``), ``expected_output`` (or ``reference``),
    ``system_instructions``, ``response``, ``tools_called``, ``output_messages`` and ``error``. Values a
    row does not have stay absent (and a template that needs one marks the row ``missing_input``), except
    the ones documented as empty-when-absent: ``expected_output``, ``system_instructions``, ``error``.
    """
    ns: dict[str, Any] = dict(row)
    messages = _first(row, "messages", "all_messages")
    expected = _first(row, "expected_output", "reference")
    response = row.get("response")
    if row.get("input") is None:
        inp: dict[str, Any] = {
            "expected_output": "" if expected is None else expected,
            "system_instructions": row.get("system_instructions") or "",
            "all_messages": messages if messages is not None else [],
        }
        ns["input"] = inp
    if row.get("output") is None:
        out: dict[str, Any] = {"error": row.get("error") or "", "tools_called": row.get("tools_called") or []}
        if response is not None:
            out["response"] = response
            out["messages"] = row.get("output_messages") or [{"role": "assistant", "content": response}]
        ns["output"] = out
    if row.get("log") is None:
        inp_ns = ns["input"] if isinstance(ns["input"], Mapping) else {}
        out_ns = ns["output"] if isinstance(ns["output"], Mapping) else {}
        log: dict[str, Any] = {
            "reference": inp_ns.get("expected_output", ""),
            "expected_output": inp_ns.get("expected_output", ""),
            "messages": inp_ns.get("all_messages", []),
        }
        last_input = _last_content(inp_ns.get("all_messages"))
        if last_input is None:
            last_input = _first(row, "question", "request", "prompt")
        if last_input is None and isinstance(row.get("input"), str):
            last_input = row["input"]
        if last_input is not None:
            log["input"] = last_input
        if "response" in out_ns:
            log["output"] = out_ns["response"]
        ns["log"] = log
    return ns


def _last_content(messages: Any) -> Any:
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if isinstance(last, Mapping):
            return last.get("content")
    return None
