"""The report's HTML (the template ``page.html.j2`` beside this module): one page, styles inline, figures as
data URIs, no script and nothing fetched."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from jurist.errors import JuristError


def _num(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(d: Mapping[str, Any] | None, key: str = "estimate", digits: int = 3) -> str:
    if not d or d.get(key) is None:
        return "n/a"
    if d.get("low") is None:
        return _num(d[key], digits)
    return f"{_num(d[key], digits)} [{_num(d['low'], digits)}, {_num(d['high'], digits)}]"


def render(data: Mapping[str, Any]) -> str:
    """The page for :func:`jurist.report.data.collect`'s data."""
    try:
        import jinja2
    except ImportError as exc:
        raise JuristError("jurist report renders with jinja2: pip install 'jurist[report]'") from exc
    source = resources.files("jurist.report").joinpath("page.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True)
    template = env.from_string(source)
    return template.render(data=data, num=_num, ci=_ci, pct=lambda c: f"{round(100 * c)} %")
