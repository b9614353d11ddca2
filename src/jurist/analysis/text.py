"""Figures as text, for the terminal tables of ``jurist estimate`` / ``audit`` and for ``jurist report``'s
page: a number to a few digits, and an estimate with its interval (``0.715 [0.684, 0.746]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def number_text(value: Any, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals; ``n/a`` for None."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def interval_text(d: Mapping[str, Any] | None, key: str = "estimate", digits: int = 3) -> str:
    """``d[key]`` with ``d``'s ``low`` and ``high`` in brackets (the value alone without them; ``n/a``
    without a value)."""
    if not d or d.get(key) is None:
        return "n/a"
    if d.get("low") is None:
        return number_text(d[key], digits)
    low, high = number_text(d["low"], digits), number_text(d["high"], digits)
    return f"{number_text(d[key], digits)} [{low}, {high}]"
