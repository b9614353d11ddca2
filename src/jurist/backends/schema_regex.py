"""A JSON schema as a regular expression with no free whitespace, where the regex can hold it exactly.

vLLM's grammar backends let a model put any amount of whitespace between a JSON answer's tokens, so a weak
or random model can spend its whole token budget on newlines and tabs and never finish. outlines-core
compiles a schema into a regex with no whitespace at all (``whitespace_pattern=""``): keys in the schema's
order, strings, enums, ``maxLength``, ``maxItems``, formats. It ignores some keywords that restrict the
values, though, and the regex would then let through answers the schema forbids. :func:`compile_schema`
walks the schema first:

* numeric bounds (``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, draft 4 or later)
  on integers, and on numbers whose bounds are whole numbers, become exact regexes of this module (the
  subschema is swapped for a placeholder string that outlines-core keeps verbatim, then replaced);
* a keyword the regex cannot hold exactly (``multipleOf``, ``uniqueItems``, ``patternProperties``,
  ``minProperties``, ``oneOf``, ``not``, a recursive ``$ref``, a ``required`` name with no property, ...)
  makes the whole schema fall back to the engine's grammar backend, with the reason;
* the parts whose length the schema leaves open (a string with no ``maxLength``, an array with no
  ``maxItems``, an unbounded number, an object of any keys, any value) are named in ``unbounded``.

The regex accepts a subset of what the schema accepts (no whitespace; keys in order; numbers without
exponents; a bounded number's fraction to at most :data:`FRACTION_DIGITS` digits), never more.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jurist.records import Constraint, ConstraintKind

FRACTION_DIGITS = 6
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "strict",
        "name",
    }
)
NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
ALLOWED = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "integer": set(NUMERIC_BOUNDS),
    "number": set(NUMERIC_BOUNDS),
    "boolean": set(),
    "null": set(),
    "array": {"items", "prefixItems", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
}
BOUNDED_FORMATS = frozenset({"date", "date-time", "uuid"})
OPEN_FORMATS = frozenset({"time", "email", "uri"})
OPEN_QUANTIFIER = re.compile(r"(?<!\\)[*+]|\{\d*,\}")
PLACEHOLDER = "jurist0number0{}0"


class Inexact(Exception):
    """The schema holds something the regex cannot express exactly (the message says what, and where)."""


@dataclass(frozen=True)
class SchemaRegex:
    """How a JSON schema is enforced: ``regex`` (full match, no free whitespace) when it expresses the
    schema exactly, else None with ``fallback`` saying why; ``unbounded`` names the parts whose length the
    schema leaves open (``$`` is the answer itself, ``$.key``, ``$.list[]``)."""

    regex: str | None
    fallback: str | None = None
    unbounded: tuple[str, ...] = ()


def compile_schema(schema: Mapping[str, Any]) -> SchemaRegex:
    """The whitespace-free regex of ``schema`` (see the module), or why there is none."""
    walk = _Walk(schema)
    try:
        rewritten = walk.node(schema, "$", ())
        regex = _outlines_regex(rewritten)
        for name, number_regex in walk.numbers.items():
            literal = f'"{name}"'
            if literal not in regex:
                raise Inexact("outlines-core did not keep a bounded number's placeholder")
            regex = regex.replace(literal, f"({number_regex})")
    except Inexact as exc:
        return SchemaRegex(None, str(exc), tuple(dict.fromkeys(walk.unbounded)))
    return SchemaRegex(regex, None, tuple(dict.fromkeys(walk.unbounded)))


def schema_constraint(
    schema: Mapping[str, Any], kinds: tuple[ConstraintKind, ...]
) -> tuple[Constraint, SchemaRegex]:
    """The constraint an engine accepting ``kinds`` gets for ``schema``: the exact whitespace-free regex
    where it has one and the engine takes regexes, else the schema itself (its grammar backend)."""
    compiled = compile_schema(schema)
    if compiled.regex is not None and "regex" in kinds:
        return Constraint(regex=compiled.regex), compiled
    if compiled.regex is not None:
        compiled = SchemaRegex(None, "the engine takes no regex", compiled.unbounded)
    return Constraint(json_schema=schema), compiled


@dataclass
class SchemaConstraints:
    """:func:`schema_constraint`, compiled once per distinct schema and set of engine kinds."""

    _cache: dict[str, tuple[Constraint, SchemaRegex]] = field(default_factory=dict)

    def __call__(
        self, schema: Mapping[str, Any], kinds: tuple[ConstraintKind, ...]
    ) -> tuple[Constraint, SchemaRegex]:
        key = json.dumps([schema, kinds], sort_keys=True, default=str)
        if key not in self._cache:
            self._cache[key] = schema_constraint(schema, kinds)
        return self._cache[key]


def _outlines_regex(schema: Any) -> str:
    from outlines_core.json_schema import build_regex_from_schema  # type: ignore[import-untyped]

    try:
        regex: str = build_regex_from_schema(json.dumps(schema), "")
    except Exception as exc:  # outlines-core raises ValueError or its own error types
        raise Inexact(f"outlines-core: {' '.join(str(exc).split())[:200]}") from None
    return regex


class _Walk:
    """One pass over a schema: inlines local ``$ref``s, swaps bounded numbers for placeholders, refuses
    what the regex cannot hold, and collects the unbounded parts."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.numbers: dict[str, str] = {}
        self.unbounded: list[str] = []

    def node(self, node: Any, path: str, refs: tuple[str, ...]) -> Any:
        if node is True or node == {}:
            self.unbounded.append(f"{path} (any value)")
            return {}
        if not isinstance(node, Mapping):
            raise Inexact(f"{path}: a schema must be an object or true, not {json.dumps(node)[:40]}")
        keys = set(node) - ANNOTATIONS
        if "$ref" in node:
            return self._ref(node, keys, path, refs)
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            if not isinstance(values, list) or not values:
                raise Inexact(f"{path}.enum: not a non-empty list")
            return {"enum": values}
        for combinator in ("anyOf", "allOf"):
            if combinator in node:
                return self._combined(node, combinator, keys, path, refs)
        kind = node.get("type")
        if kind is None:
            kind = "object" if "properties" in node else None
        if isinstance(kind, list):
            unknown = [t for t in kind if t not in ALLOWED]
            if unknown or not kind:
                raise Inexact(f"{path}.type: {kind!r} is not a list of known types")
            allowed = set().union(*(ALLOWED[t] for t in kind))
            self._only(keys - {"type"}, allowed, path, f"a {' or '.join(kind)}")
            options = [{k: v for k, v in node.items() if k in ALLOWED[t]} | {"type": t} for t in kind]
            return self.node({"anyOf": options}, path, refs)
        if kind is None:
            self._only(keys, set(), path, "a schema with no type")
            self.unbounded.append(f"{path} (any value)")
            return {}
        if kind not in ALLOWED:
            raise Inexact(f"{path}.type: unknown type {kind!r}")
        self._only(keys - {"type"}, ALLOWED[kind], path, f"a {kind}")
        return getattr(self, f"_{kind}")(node, path, refs)

    def _only(self, keys: set[str], allowed: set[str], path: str, what: str) -> None:
        extra = sorted(keys - allowed)
        if extra:
            raise Inexact(f"{path}: {', '.join(extra)} on {what} cannot be held by a regex exactly")

    def _ref(self, node: Mapping[str, Any], keys: set[str], path: str, refs: tuple[str, ...]) -> Any:
        self._only(keys, {"$ref"}, path, "a $ref")
        ref = node["$ref"]
        if ref in refs:
            raise Inexact(f"{path}: recursive $ref {ref!r}")
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Inexact(f"{path}: $ref {ref!r} is not local to the schema")
        target: Any = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise Inexact(f"{path}: $ref {ref!r} names nothing in the schema")
            target = target[part]
        return self.node(target, path, (*refs, ref))

    def _combined(
        self, node: Mapping[str, Any], combinator: str, keys: set[str], path: str, refs: tuple[str, ...]
    ) -> Any:
        self._only(keys, {combinator}, path, f"an {combinator}")
        options = node[combinator]
        if not isinstance(options, list) or not options:
            raise Inexact(f"{path}.{combinator}: not a non-empty list")
        if combinator == "allOf":
            if len(options) != 1:
                raise Inexact(f"{path}.allOf: more than one schema to meet at once")
            return self.node(options[0], path, refs)
        return {"anyOf": [self.node(option, path, refs) for option in options]}

    def _string(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        given = {k for k in ("minLength", "maxLength", "pattern", "format") if k in node}
        if len(given - {"minLength", "maxLength"}) and len(given) > 1:
            raise Inexact(f"{path}: {' and '.join(sorted(given))} together on a string")
        form = node.get("format")
        if form is not None and form not in BOUNDED_FORMATS | OPEN_FORMATS:
            raise Inexact(f"{path}.format: {form!r} is not a format the regex holds")
        pattern = node.get("pattern")
        bounded = (
            "maxLength" in node
            or form in BOUNDED_FORMATS
            or (pattern is not None and not OPEN_QUANTIFIER.search(str(pattern)))
        )
        if not bounded:
            self.unbounded.append(f"{path} (a string with no maxLength)")
        return dict(node)

    def _integer(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        return self._number(node, path, refs, integer=True)

    def _number(
        self, node: Mapping[str, Any], path: str, refs: tuple[str, ...], integer: bool = False
    ) -> Any:
        low, low_open, high, high_open = _bounds(node, path)
        if low is None and high is None:
            self.unbounded.append(f"{path} (a number with no bounds)")
            return {"type": "integer" if integer else "number"}
        if low is None or high is None:
            self.unbounded.append(f"{path} (a number bounded on one side)")
        if integer:
            lo = None if low is None else math.floor(low) + 1 if low_open or low != int(low) else int(low)
            hi = (
                None if high is None else math.ceil(high) - 1 if high_open or high != int(high) else int(high)
            )
            if lo is not None and hi is not None and lo > hi:
                raise Inexact(f"{path}: no integer meets the bounds")
            regex = integer_regex(lo, hi)
        else:
            if any(b is not None and b != int(b) for b in (low, high)):
                raise Inexact(f"{path}: a number bounded by a fraction cannot be held by a regex exactly")
            regex = number_regex(
                None if low is None else int(low), low_open, None if high is None else int(high), high_open
            )
        if not regex:
            raise Inexact(f"{path}: no number meets the bounds")
        name = PLACEHOLDER.format(len(self.numbers))
        self.numbers[name] = regex
        return {"const": name}

    def _boolean(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        return {"type": "boolean"}

    def _null(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        return {"type": "null"}

    def _array(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        out: dict[str, Any] = {"type": "array"}
        prefix = node.get("prefixItems")
        if prefix is not None:
            out["prefixItems"] = [self.node(item, f"{path}[{i}]", refs) for i, item in enumerate(prefix)]
            if node.get("items", False) is not False or {"minItems", "maxItems"} & set(node):
                raise Inexact(f"{path}: prefixItems with more items or item counts")
            return out
        out["items"] = self.node(node.get("items", True), f"{path}[]", refs)
        for key in ("minItems", "maxItems"):
            if key in node:
                out[key] = node[key]
        if "maxItems" not in node:
            self.unbounded.append(f"{path} (an array with no maxItems)")
        return out

    def _object(self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]) -> Any:
        properties = node.get("properties")
        required = list(node.get("required") or ())
        if not properties:
            if required:
                raise Inexact(f"{path}.required: names keys with no properties")
            extra = node.get("additionalProperties", True)
            if extra is False:
                return {"type": "object", "properties": {}}
            self.unbounded.append(f"{path} (an object of any keys)")
            if extra is True or extra == {}:
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self.node(extra, f"{path}.*", refs)}
        missing = [name for name in required if name not in properties]
        if missing:
            raise Inexact(f"{path}.required: {', '.join(missing)} not among the properties")
        return {
            "type": "object",
            "properties": {name: self.node(sub, f"{path}.{name}", refs) for name, sub in properties.items()},
            "required": required,
        }


def _bounds(node: Mapping[str, Any], path: str) -> tuple[float | None, bool, float | None, bool]:
    """(low, low is open, high, high is open) of a numeric schema, drafts 4 to 2020-12."""
    low, high = node.get("minimum"), node.get("maximum")
    low_open = high_open = False
    for key, value in node.items():
        if key in NUMERIC_BOUNDS and not isinstance(value, (bool, int, float)):
            raise Inexact(f"{path}.{key}: not a number")
    exclusive_low, exclusive_high = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if isinstance(exclusive_low, bool):
        low_open = exclusive_low and low is not None
    elif exclusive_low is not None and (low is None or exclusive_low >= low):
        low, low_open = exclusive_low, True
    if isinstance(exclusive_high, bool):
        high_open = exclusive_high and high is not None
    elif exclusive_high is not None and (high is None or exclusive_high <= high):
        high, high_open = exclusive_high, True
    return low, low_open, high, high_open


def integer_regex(low: int | None, high: int | None) -> str:
    """A regex for the JSON integers from ``low`` to ``high`` inclusive (None: unbounded that side)."""
    parts = []
    if high is None or high >= 0:
        parts += _magnitudes(max(low, 0) if low is not None else 0, high)
    if low is None or low < 0:
        first = max(1, -high) if high is not None and high < 0 else 1
        parts += ["-" + p for p in _magnitudes(first, None if low is None else -low)]
    return "|".join(parts)


def _magnitudes(low: int, high: int | None) -> list[str]:
    """Regexes for the unsigned integers ``low`` to ``high`` (None: no end), without leading zeros."""
    if high is not None and low > high:
        return []
    out = []
    digits = len(str(low))
    while high is None or low <= high:
        top = 10**digits - 1
        if high is not None and high <= top:
            out += _same_length(str(low), str(high))
            break
        out += _same_length(str(low), str(top))
        low, digits = top + 1, digits + 1
        if high is None:
            out.append(f"[1-9][0-9]{{{digits - 1},}}")
            break
    return out


def _same_length(low: str, high: str) -> list[str]:
    """Regexes for the integers from ``low`` to ``high``, both written with the same number of digits."""
    if len(low) == 1:
        return [low if low == high else f"[{low}-{high}]"]
    if low[0] == high[0]:
        return [low[0] + _group(_same_length(low[1:], high[1:]))]
    n = len(low) - 1
    out = []
    first, last = int(low[0]), int(high[0])
    if low[1:] != "0" * n:
        out.append(low[0] + _group(_same_length(low[1:], "9" * n)))
        first += 1
    if high[1:] != "9" * n:
        out_last = high[0] + _group(_same_length("0" * n, high[1:]))
        last -= 1
    else:
        out_last = None
    if first <= last:
        out.append((str(first) if first == last else f"[{first}-{last}]") + f"[0-9]{{{n}}}")
    if out_last is not None:
        out.append(out_last)
    return out


def _group(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "(" + "|".join(parts) + ")"


def number_regex(low: int | None, low_open: bool, high: int | None, high_open: bool) -> str:
    """A regex for JSON numbers (no exponent, at most :data:`FRACTION_DIGITS` fraction digits) between
    whole-number bounds, each inclusive or open (None: unbounded that side)."""
    fraction = f"(\\.[0-9]{{1,{FRACTION_DIGITS}}})?"
    nonzero = f"\\.[0-9]{{0,{FRACTION_DIGITS - 1}}}[1-9]"
    zeros = f"(\\.0{{1,{FRACTION_DIGITS}}})?"

    def side(a: int, a_open: bool, b: int | None, b_open: bool) -> list[str]:
        """Magnitudes m with a <= m <= b (each end open or not), 0 <= a."""
        if b is not None and (a > b or (a == b and (a_open or b_open))):
            return []
        if b is not None and a == b:
            return [f"{a}{zeros}"]
        out = [f"{a}{nonzero}" if a_open else f"{a}{fraction}"]
        middle = _magnitudes(a + 1, None if b is None else b - 1)
        if middle:
            out.append(_group(middle) + fraction)
        if b is not None and not b_open:
            out.append(f"{b}{zeros}")
        return out

    parts = []
    if high is None or high > 0 or (high == 0 and not high_open):
        start, start_open = (0, False) if low is None or low < 0 else (low, low_open)
        parts += side(start, start_open, high, high_open)
    if low is None or low < 0:
        if high is not None and high < 0:
            end, end_open = -high, high_open
        else:
            end, end_open = 0, True  # zero is written without a sign
        near, near_open = end, end_open
        magnitudes = side(near, near_open, None if low is None else -low, low_open)
        parts += ["-" + p for p in magnitudes]
    return "|".join(parts)
