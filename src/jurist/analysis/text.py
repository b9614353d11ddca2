"""Figures as text, for the terminal tables of ``jurist estimate`` / ``audit`` and for ``jurist report``'s
page: a number to a few digits, an estimate with its interval (``0.715 [0.684, 0.746]``), and a share in
percent with its interval (``65.0 % [43.3, 81.9] %``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def percent_text(value: float | None) -> str:
    """A share in percent to one decimal (``65.0 %``); ``n/a`` for None."""
    return "n/a" if value is None else f"{100 * value:.1f} %"


def percent_interval_text(bounds: Sequence[float] | None) -> str:
    """An interval of shares in percent (``[43.3, 81.9] %``); ``n/a`` for None."""
    return "n/a" if bounds is None else f"[{100 * bounds[0]:.1f}, {100 * bounds[1]:.1f}] %"


def percent_with_interval(value: float | None, bounds: Sequence[float] | None) -> str:
    """A share in percent and its interval (``65.0 % [43.3, 81.9] %``; the share alone without bounds)."""
    if value is None or bounds is None:
        return percent_text(value)
    return f"{percent_text(value)} {percent_interval_text(bounds)}"
