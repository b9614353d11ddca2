"""A JSON schema as a regex with no free whitespace (:mod:`jurist.backends.schema_regex`), checked against
independent computations: integer and number bounds against exact arithmetic over every candidate, and
every answer the regex accepts against the ``jsonschema`` package's validator."""

from __future__ import annotations

import itertools
import json
import random
import re
from fractions import Fraction
from typing import Any

import jsonschema
import pytest

from jurist.backends.schema_regex import (
    FRACTION_DIGITS,
    SchemaConstraints,
    compile_schema,
    integer_regex,
    number_regex,
    schema_constraint,
)

VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["good", "bad"]},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["verdict", "score"],
}


def _bounds(rng: random.Random, span: int) -> tuple[int | None, int | None]:
    """A random (low, high) within +-span, low <= high, each side None (unbounded) half the time."""
    low = rng.choice([None, rng.randint(-span, span)])
    high = rng.choice([None, rng.randint(-span, span)])
    if low is not None and high is not None and low > high:
        low, high = high, low
    return low, high


def test_integer_bounds_match_exact_arithmetic_for_every_candidate() -> None:
    rng = random.Random(0)
    for _ in range(400):
        low, high = _bounds(rng, 1500)
        pattern = re.compile(integer_regex(low, high))
        for value in range(-2100, 2100):
            inside = (low is None or value >= low) and (high is None or value <= high)
            assert bool(pattern.fullmatch(str(value))) == inside, (low, high, value)
        for text in ("-0", "01", "007", "-01", "", "+1", "1.0"):
            assert not pattern.fullmatch(text), (low, high, text)


def test_number_bounds_accept_nothing_outside_and_every_plain_decimal_inside() -> None:
    rng = random.Random(1)
    for _ in range(400):
        low, high = _bounds(rng, 12)
        low_open, high_open = rng.random() < 0.5, rng.random() < 0.5
        text = number_regex(low, low_open, high, high_open)
        pattern = re.compile(text) if text else None
        for _ in range(200):
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, FRACTION_DIGITS)))
            fraction = rng.choice(["", "." + digits])
            candidate = f"{rng.choice(['', '-'])}{rng.randint(0, 15)}{fraction}"
            value = Fraction(candidate)
            above = low is None or (value > low if low_open else value >= low)
            below = high is None or (value < high if high_open else value <= high)
            accepted = bool(pattern and pattern.fullmatch(candidate))
            assert not accepted or (above and below), (low, low_open, high, high_open, candidate)
            plain = not candidate.startswith("-0") and not (fraction and candidate.endswith("0"))
            if above and below and plain and not (candidate.startswith("-") and value == 0):
                assert accepted, (low, low_open, high, high_open, candidate, text)


def _instances(schema: dict[str, Any]) -> list[str]:
    """Candidate answers: the values of each property's pool in every combination, compact and in order,
    with keys left out and a few broken forms."""
    pools: dict[str, list[Any]] = {
        "integer": [-3, 0, 1, 3, 5, 6, 17, 101],
        "number": [-1, -0.5, 0, 0.25, 0.999999, 1, 1.5, 7],
        "string": ["", "a", "good", "bad", "abcdef", "x" * 12, 'q"uote', "2026-12-01", "2026-13-01"],
        "boolean": [True, False],
        "null": [None],
        "array": [[], [1], [1, 2], [1, 2, 3], ["a"], [True, False, True]],
    }
    names = list(schema["properties"])
    options = []
    for name in names:
        sub = schema["properties"][name]
        kinds = sub.get("type", list(pools))
        kinds = kinds if isinstance(kinds, list) else [kinds]
        values = [v for kind in kinds for v in pools[kind]] + list(sub.get("enum", []))
        options.append([*values, "<absent>"])
    out = []
    for combination in itertools.product(*options):
        body = {n: v for n, v in zip(names, combination, strict=True) if v != "<absent>"}
        out.append(json.dumps(body, separators=(",", ":")))
    out += [json.dumps(dict(reversed(list(json.loads(out[0]).items()))), separators=(",", ":"))]
    out += ['{ "verdict": "good", "score": 1 }', "{}", "[]", "null"]
    return out


SCHEMAS = [
    VERDICT,
    {
        "type": "object",
        "properties": {
            "p": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "why": {"type": "string", "maxLength": 5},
            "ok": {"type": "boolean"},
        },
        "required": ["p"],
    },
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 6},
            "tags": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
            "day": {"type": "string", "format": "date"},
        },
        "required": ["n", "tags"],
    },
    {
        "$defs": {"score": {"type": "integer", "minimum": 0, "maximum": 100}},
        "type": "object",
        "properties": {
            "score": {"$ref": "#/$defs/score"},
            "label": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]},
        },
        "required": ["score", "label"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=["verdict", "probability", "counts", "refs"])
def test_every_answer_the_regex_accepts_meets_the_schema(schema: dict[str, Any]) -> None:
    compiled = compile_schema(schema)
    assert compiled.regex is not None, compiled.fallback
    pattern = re.compile(compiled.regex)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    accepted = 0
    for text in _instances(schema):
        if pattern.fullmatch(text):
            accepted += 1
            validator.validate(json.loads(text))  # raises on an answer the schema forbids
        elif text.startswith("{") and " " not in text:
            if not validator.is_valid(json.loads(text)):
                continue
            keys = list(json.loads(text))
            in_order = keys == [k for k in schema["properties"] if k in keys]
            assert not in_order, f"a compact, ordered, valid answer was refused: {text}"
    assert accepted > 0
    assert not pattern.fullmatch('{ "verdict": "good", "score": 1 }')


def test_the_verdict_schema_is_bounded_and_its_integer_range_exact() -> None:
    compiled = compile_schema(VERDICT)
    assert compiled.regex == r'\{"verdict":("good"|"bad"),"score":([1-5])\}'
    assert compiled.unbounded == () and compiled.fallback is None


def test_open_parts_are_named() -> None:
    schema = {
        "type": "object",
        "properties": {
            "explanation": {"type": "string"},
            "points": {"type": "array", "items": {"type": "string", "maxLength": 3}},
            "weight": {"type": "number"},
            "at_least": {"type": "integer", "minimum": 2},
            "extra": {"type": "object"},
        },
    }
    compiled = compile_schema(schema)
    assert compiled.regex is not None
    assert compiled.unbounded == (
        "$.explanation (a string with no maxLength)",
        "$.points (an array with no maxItems)",
        "$.weight (a number with no bounds)",
        "$.at_least (a number bounded on one side)",
        "$.extra (an object of any keys)",
    )
    assert re.fullmatch(compiled.regex, '{"at_least":2}') and not re.fullmatch(
        compiled.regex, '{"at_least":1}'
    )


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {
                "$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}},
                "$ref": "#/$defs/n",
            },
            "$.c: recursive $ref '#/$defs/n'",
        ),
        ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, "$: patternProperties"),
        ({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}}, "$.n: multipleOf"),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "$: uniqueItems"),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "$: oneOf"),
        (
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "b"]},
            "$.required: b not among the properties",
        ),
        (
            {"type": "object", "properties": {"p": {"type": "number", "maximum": 0.5}}},
            "$.p: a number bounded by a fraction",
        ),
        ({"type": "string", "format": "hostname"}, "$.format: 'hostname'"),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}},
            "$.a: $ref 'https://example.com/a.json'",
        ),
    ],
)
def test_what_the_regex_cannot_hold_falls_back_with_its_reason(schema: dict[str, Any], reason: str) -> None:
    compiled = compile_schema(schema)
    assert compiled.regex is None
    assert compiled.fallback is not None and compiled.fallback.startswith(reason), compiled.fallback
    constraint, _ = schema_constraint(schema, ("regex", "choice", "json_schema"))
    assert constraint.json_schema == schema and constraint.regex is None


def test_an_engine_without_regexes_gets_the_schema_and_the_cache_compiles_once() -> None:
    constraint, compiled = schema_constraint(VERDICT, ("json_schema",))
    assert constraint.json_schema == VERDICT and compiled.fallback == "the engine takes no regex"
    cache = SchemaConstraints()
    first = cache(VERDICT, ("regex", "json_schema"))
    assert cache(json.loads(json.dumps(VERDICT)), ("regex", "json_schema")) is first
    assert first[0].regex is not None


def test_any_json_object_is_an_object_without_free_whitespace() -> None:
    compiled = compile_schema({"type": "object"})
    assert compiled.regex is not None and compiled.unbounded == ("$ (an object of any keys)",)
    pattern = re.compile(compiled.regex)
    assert pattern.fullmatch('{"a":[1,{"b":null}],"c":"d"}')
    assert not pattern.fullmatch('{"a": 1}') and not pattern.fullmatch("[1]")
