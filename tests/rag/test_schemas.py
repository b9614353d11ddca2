"""The step shapes: their regexes admit exactly the well-formed answers, within their byte bounds; their
readers take what unconstrained models write and enforce the one-entry-per-index rule."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from jurist.judges.rag.formulas import Scored, average_precision, fraction, rating_score, statement_f1
from jurist.judges.rag.schemas import InvalidAnswer, Rating, Statements, Verdicts, extract_object

WIDE = "😀"  # four UTF-8 bytes: the widest character


def full(regex: str, text: str) -> bool:
    return re.fullmatch(regex, text) is not None


def test_statements_regex_admits_zero_to_max_items_of_bounded_length() -> None:
    schema = Statements(3, 10)
    regex = schema.regex()
    assert full(regex, '{"statements": []}')
    assert full(regex, '{"statements": ["a", "b \\"q\\" c", "0123456789"]}')
    assert not full(regex, '{"statements": ["a", "b", "c", "d"]}')  # too many
    assert not full(regex, '{"statements": ["01234567890"]}')  # too long
    assert not full(regex, '{"statements": [""]}')  # empty statement
    assert not full(regex, '{"statements":["a"]}')  # separators are fixed
    longest = json.dumps({"statements": [WIDE * 10] * 3}, ensure_ascii=False)
    assert full(regex, longest) and len(longest.encode()) <= schema.max_bytes()


def test_verdicts_regex_fixes_one_entry_per_index_in_order() -> None:
    schema = Verdicts(3, 8)
    regex = schema.regex()
    entries = [
        {"index": i, "reason": "r", "verdict": v}
        for i, v in zip((1, 2, 3), ("Yes", "No", "Yes"), strict=True)
    ]
    assert full(regex, json.dumps({"verdicts": entries}))
    swapped = [entries[1], entries[0], entries[2]]
    assert not full(regex, json.dumps({"verdicts": swapped}))
    assert not full(regex, json.dumps({"verdicts": entries[:2]}))
    assert not full(regex, json.dumps({"verdicts": [*entries, {**entries[0], "index": 4}]}))
    assert not full(regex, json.dumps({"verdicts": [{**entries[0], "verdict": "Maybe"}, *entries[1:]]}))
    longest = json.dumps(
        {"verdicts": [{"index": i, "reason": WIDE * 8, "verdict": "Yes"} for i in (1, 2, 3)]},
        ensure_ascii=False,
    )
    assert full(regex, longest) and len(longest.encode()) <= schema.max_bytes()


def test_verdicts_without_reasons() -> None:
    schema = Verdicts(12, 0)
    text = json.dumps({"verdicts": [{"index": i, "verdict": "No"} for i in range(1, 13)]})
    assert full(schema.regex(), text) and len(text) <= schema.max_bytes()
    assert "reason" not in schema.json_schema()["properties"]["verdicts"]["items"]["properties"]


@pytest.mark.parametrize("scale", [2, 5, 10, 100])
def test_rating_regex_admits_exactly_1_to_scale(scale: int) -> None:
    schema = Rating(scale, 20)
    regex = schema.regex()
    for n in range(0, scale + 3):
        text = json.dumps({"reason": "x", "score": n})
        assert full(regex, text) == (1 <= n <= scale), n
    longest = json.dumps({"reason": WIDE * 20, "score": scale}, ensure_ascii=False)
    assert full(regex, longest) and len(longest.encode()) <= schema.max_bytes()


def test_json_schemas_bound_every_list_and_string() -> None:
    statements = Statements(4, 50).json_schema()["properties"]["statements"]
    assert statements["maxItems"] == 4 and statements["items"]["maxLength"] == 50
    verdicts = Verdicts(3, 9).json_schema()["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (3, 3)
    assert verdicts["items"]["properties"]["index"] == {"type": "integer", "minimum": 1, "maximum": 3}
    assert Rating(7, 0).json_schema()["properties"] == {
        "score": {"type": "integer", "minimum": 1, "maximum": 7}
    }


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 4, "reason": "direct"}',  # the seed's key order
        'Sure! Here it is: {"reason": "direct", "score": "4"} Hope it helps.',
        '```json\n{"score": 4.0}\n```',
    ],
)
def test_rating_reader_takes_what_unconstrained_models_write(text: str) -> None:
    rating, _reason = Rating(5, 100).read(extract_object(text))
    assert rating == 4


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        ([{"index": 1, "verdict": "Yes"}], "no entry for index 2"),
        ([{"index": 1, "verdict": "Yes"}, {"index": 1, "verdict": "No"}], "index 1 appears more than once"),
        ([{"index": 1, "verdict": "Yes"}, {"index": 3, "verdict": "No"}], "index 3 is out of range 1-2"),
        ([{"index": "x", "verdict": "Yes"}, {"index": 2, "verdict": "No"}], "is not an integer"),
        ([{"index": 1, "verdict": "Perhaps"}, {"index": 2, "verdict": "No"}], "is not Yes or No"),
        ([{"index": 1}, {"index": 2, "verdict": "No"}], "lacks its index or its verdict"),
        ("Yes, No", "no list of verdicts"),
    ],
)
def test_verdict_reader_enforces_one_entry_per_index(verdicts: Any, message: str) -> None:
    with pytest.raises(InvalidAnswer, match=message):
        Verdicts(2, 10).read({"verdicts": verdicts})


def test_verdict_reader_accepts_booleans_and_any_case() -> None:
    read = Verdicts(3, 10).read(
        {
            "verdicts": [
                {"index": "2", "verdict": True},
                {"index": 1, "verdict": "no"},
                {"index": 3, "verdict": "YES"},
            ]
        }
    )
    assert read == (False, True, True)


def test_statement_reader_drops_blank_statements_and_rejects_non_text() -> None:
    assert Statements(4, 50).read({"statements": [" a ", "", "  ", "b"]}) == ("a", "b")
    with pytest.raises(InvalidAnswer, match="not a string"):
        Statements(4, 50).read({"statements": ["a", 3]})
    with pytest.raises(InvalidAnswer, match="no JSON object"):
        extract_object("[1, 2]")


def test_formulas_and_their_undefined_cases() -> None:
    assert statement_f1(2, 1, 1) == Scored(2 / 3)
    assert statement_f1(0, 0, 0).score is None
    assert statement_f1(0, 3, 0) == Scored(0.0)
    assert rating_score(4, 5) == Scored(0.75)
    assert average_precision([False, True]) == Scored(0.5)
    assert average_precision([]).score is None
    assert fraction(0, 0, "why").undefined == "why"
    with pytest.raises(ValueError):
        rating_score(6, 5)
    with pytest.raises(ValueError):
        fraction(3, 2, "x")
    with pytest.raises(ValueError):
        Scored(None)
