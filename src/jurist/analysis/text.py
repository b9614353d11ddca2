"""Figures as text, for the terminal tables of ``jurist estimate`` / ``audit`` / ``agree`` / ``probe fit``
and for ``jurist report``'s page: a number to a few digits, an estimate with its interval
(``0.715 [0.684, 0.746]``), a share in percent with its interval (``65.0 % [43.3, 81.9] %``), the baselines
(:mod:`jurist.stats.baselines`) and the position prior (:mod:`jurist.stats.position`)."""

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


def percent_text(value: float | None) -> str:
    """A share in percent to one decimal (``65.0 %``); ``n/a`` for None."""
    return "n/a" if value is None else f"{100 * value:.1f} %"


def percent_interval_text(share: Mapping[str, Any]) -> str:
    """A share's interval (:meth:`jurist.stats.share.Share.as_dict`) in percent (``[43.3, 81.9] %``);
    ``n/a`` without one."""
    low = share.get("low")
    return "n/a" if low is None else f"[{100 * low:.1f}, {100 * share['high']:.1f}] %"


def share_text(share: Mapping[str, Any]) -> str:
    """A share's dict in percent with its interval (``65.0 % [43.3, 81.9] %``; the share alone without)."""
    if share.get("estimate") is None or share.get("low") is None:
        return percent_text(share.get("estimate"))
    return f"{percent_text(share['estimate'])} {percent_interval_text(share)}"


BEATEN_WORDS = {
    "yes": "beaten",
    "no": "NOT beaten",
    "unclear": "below the judge, inside its 95 % interval",
}


def format_baselines(report: Mapping[str, Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """Lines for :func:`jurist.stats.baselines.compare_to_baselines`' report: one per baseline, and a
    warning line naming the ones the judge does not beat."""
    lines = []
    for name, entry in report.items():
        word = BEATEN_WORDS.get(str(entry.get("beaten")), "n/a")
        lines.append(f"{indent}baseline {name} ({entry['rule']}): {share_text(entry)}: {word}")
    unbeaten = [name for name, entry in report.items() if entry.get("beaten") == "no"]
    if unbeaten:
        lines.append(f"{indent}warning: the judge does not beat {', '.join(unbeaten)} on these rows")
    return lines


def format_prior(prior: Mapping[str, Any]) -> str:
    """A position prior (:func:`jurist.stats.position.position_prior`) as one line of text."""
    low, high = prior.get("low"), prior.get("high")
    bounds = "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"
    even = prior["first_shown_probability"]
    return (
        f"position prior {prior['mean_log_odds']:+.2f} log-odds for the first-shown answer{bounds} over "
        f"{prior['rows']} rows (an even pair gets {even:.2f} for the answer shown first; 0 is no bias)"
    )
