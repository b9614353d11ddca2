"""Prompt templates: ``{name}`` placeholders (Oumi) and ``{{dotted.path}}`` variables (Mustache style).

Grammar, decided once here and used both to list a template's inputs and to render it:

* ``{name}``: ``name`` is an identifier; it is looked up in the row (a list or dict value renders as JSON).
* ``{{ path }}``: ``path`` is dotted, with evaluatorq's list indices (``input.all_messages[0].content``,
  ``[-1]`` for the last; jurist also reads ``messages.0.content``); it is looked up in the row's namespace
  (:func:`jurist.render.namespace.build_namespace`) and rendered as evaluatorq renders it
  (:func:`format_value`, evaluatorq's layout: a list or object as indented JSON, ``True``/``False``).
  Any other ``{{...}}`` (spaces inside, an unsupported index form such as ``[ 0]`` or ``["a"]``) stays
  literal text; :attr:`Template.unread` lists those that look like a path, so a judge can warn once.
* The bare evaluatorq objects ``{{input}}``, ``{{output}}``, ``{{log}}``, ``{{response_a}}`` and
  ``{{response_b}}`` always stay literal text (:data:`BARE_OBJECTS`; evaluatorq removed them) and are not
  read from the row: a judge lists them in :attr:`Template.literals` and warns once.
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
    r"\{\{\s*(?P<path>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+|\[-?\d+\])*)\s*\}\}"
    r"|(?<!\{)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}(?!\})"
)
_STEP = re.compile(r"\.?([A-Za-z0-9_]+)|(\[-?\d+\])")
_CURLY = re.compile(r"\{\{(.*?)\}\}")
_PATHLIKE = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_.]*[\[\]]")


BARE_OBJECTS = frozenset({"input", "output", "log", "response_a", "response_b"})
"""Names that, written bare as ``{{name}}``, stay literal text: they name objects, not values."""


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

    @property
    def literal(self) -> bool:
        """A bare ``{{input}}``-style object name: rendered as its own text, never looked up."""
        return self.dotted and len(self.path) == 1 and self.path[0] in BARE_OBJECTS


def _stringify(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


_TEXT, _OBJECT, _NAME, _DOTTED = range(4)
"""How a compiled template part renders: literal text, a bare object name kept as text, a ``{name}`` (one
step, rendered as text) and a ``{{path}}`` (looked up, rendered as :func:`format_value`)."""


def _step(part: str | Placeholder) -> tuple[int, str, tuple[str, ...]]:
    """A template part compiled for rendering: (kind, text, path)."""
    if isinstance(part, str):
        return _TEXT, part, ()
    if part.literal:
        return _OBJECT, part.text, part.path
    return (_DOTTED if part.dotted else _NAME), part.text, part.path


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
                path = tuple(a or b for a, b in _STEP.findall(match.group("path")))
                parts.append(Placeholder(path, True, match.group(0)))
            else:
                parts.append(Placeholder((match.group("name"),), False, match.group(0)))
            pos = match.end()
        if pos < len(text):
            parts.append(text[pos:])
        self._parts = tuple(parts)
        # compiled once for rendering: each part's kind, its text and its path
        self._plan = tuple(_step(part) for part in parts)
        self._static = text if not any(isinstance(p, Placeholder) for p in parts) else None

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self._parts if isinstance(p, Placeholder))

    @property
    def unread(self) -> tuple[str, ...]:
        """``{{...}}`` texts that look like an indexed path but are not one this grammar reads (they stay
        literal, as in evaluatorq)."""
        literal = "".join(p for p in self._parts if isinstance(p, str))
        return tuple(
            dict.fromkeys(m.group(0) for m in _CURLY.finditer(literal) if _PATHLIKE.match(m.group(1)))
        )

    @property
    def names(self) -> set[str]:
        """Root names the template reads (``request`` for ``{request}``, ``input`` for ``{{input.x}}``);
        bare literal objects (``{{input}}``) are not read."""
        return {p.root for p in self.placeholders if not p.literal}

    @property
    def literals(self) -> tuple[str, ...]:
        """The bare object placeholders (``{{input}}``...) that stay literal text, in order, once each."""
        return tuple(dict.fromkeys(p.text for p in self.placeholders if p.literal))

    def substitute(self, values: Mapping[str, str]) -> Template:
        """A new template with the single-name placeholders in ``values`` replaced (template_variables):
        ``{name}`` and ``{{name}}`` alike; dotted paths are left for the row."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, Placeholder) and len(part.path) == 1 and part.root in values:
                out.append(values[part.root])
            else:
                out.append(part if isinstance(part, str) else part.text)
        return Template("".join(out))

    def render(self, row: Mapping[str, Any], notes: list[str] | None = None) -> str:
        """Fill every placeholder from ``row``; raise :class:`MissingValue` for an absent or null one."""
        if self._static is not None:
            return self._static
        out: list[str] = []
        plain = type(row) is dict  # a one-name path is then the row's own value: no lookup needed
        for kind, text, path in self._plan:
            if kind == _TEXT:
                out.append(text)
                continue
            if kind == _OBJECT:
                if notes is not None:
                    notes.append(f"{text} names an object, not a value; left as literal text")
                out.append(text)
                continue
            value = row.get(path[0]) if plain and kind == _NAME else lookup(row, path)
            if isinstance(value, ValueWithFields):
                value = value.value
            if value is None:
                raise MissingValue(dotted_name(path))
            out.append(format_value(value) if kind == _DOTTED else _stringify(value))
        return "".join(out)

    def render_lenient(self, row: Mapping[str, Any]) -> str:
        """Like :meth:`render`, but absent values render as empty strings (for few-shot examples)."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            elif part.literal:
                out.append(part.text)
            else:
                value = lookup(row, part.path)
                if isinstance(value, ValueWithFields):
                    value = value.value
                if value is None:
                    out.append("")
                else:
                    out.append(format_value(value) if part.dotted else _stringify(value))
        return "".join(out)


class ValueWithFields:
    """A column value that is neither text nor an object (a number, a list) and also has named fields: the
    Oumi form ``{output}`` renders the value, a dotted path ``{{output.response}}`` descends into
    ``fields``."""

    __slots__ = ("fields", "value")

    def __init__(self, value: Any, fields: Mapping[str, Any]) -> None:
        self.value = value
        self.fields = fields


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


def dotted_name(path: tuple[str, ...]) -> str:
    """A path as written: ``messages[0].content``."""
    return "".join(step if step.startswith("[") or i == 0 else "." + step for i, step in enumerate(path))


def lookup(data: Any, path: tuple[str, ...]) -> Any:
    """Follow ``path`` through dicts (by key) and lists (by ``[i]`` index, negative from the end, or a
    ``.i`` step); None when any step is missing."""
    node = data
    for step in path:
        if isinstance(node, TextWithFields | ValueWithFields):
            node = node.fields
        if step.startswith("["):
            if not isinstance(node, list | tuple):
                return None
            index = int(step[1:-1])
            if not -len(node) <= index < len(node):
                return None
            node = node[index]
        elif isinstance(node, Mapping):
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


def format_value(value: Any) -> str:
    """A ``{{path}}`` value as prompt text: lists and objects as 2-space indented JSON, text as it is,
    anything else as Python's ``str``."""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(plain_json(value), indent=2, default=str)
    if isinstance(value, str):
        return value
    return str(value)


def plain_json(value: Any) -> Any:
    """Mappings and sequences as plain dicts and lists, for ``json.dumps``."""
    if isinstance(value, Mapping):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value
