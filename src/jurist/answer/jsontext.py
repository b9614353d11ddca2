"""JSON text, the one owner of three small facts: what a bounded JSON string looks like as a regex, how
many UTF-8 bytes it can take, and how the first JSON object is found in a model's answer. The JSON answer
format (:mod:`jurist.answer.formats`) and the RAG steps' shapes (:mod:`jurist.judges.rag.schemas`) use them.
"""

from __future__ import annotations

import json
import re
from typing import Any

JSON_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/nt])'
"""One character of a JSON string: anything but a quote, a backslash or a control; or a short escape."""

UTF8_MAX = 4
"""Bytes per string character, worst case (a 4-byte UTF-8 character; an escape takes two)."""


def json_string_regex(min_chars: int, max_chars: int) -> str:
    """A quoted JSON string of ``min_chars`` to ``max_chars`` characters."""
    return f'"{JSON_CHAR}{{{min_chars},{max_chars}}}"'


def json_string_max_bytes(max_chars: int) -> int:
    """The most UTF-8 bytes a string of :func:`json_string_regex` takes, quotes included."""
    return max_chars * UTF8_MAX + 2


def first_json_object(text: str) -> Any:
    """The whole text as JSON if it parses, else the first value that starts at a ``{`` and parses; None
    when there is none (the caller checks that it got an object)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        decoder = json.JSONDecoder()
        for match in re.finditer(r"\{", text):
            try:
                return decoder.raw_decode(text, match.start())[0]
            except json.JSONDecodeError:
                continue
    return None
