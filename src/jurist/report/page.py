"""The report's HTML (the template ``page.html.j2`` beside this module): one page, styles inline, figures as
data URIs, no script and nothing fetched."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from jurist.analysis.text import interval_text as _ci
from jurist.analysis.text import number_text as _num
from jurist.errors import JuristError


def render(data: Mapping[str, Any]) -> str:
    """The page for :func:`jurist.report.data.collect`'s data."""
    try:
        import jinja2
    except ImportError as exc:
        raise JuristError("jurist report renders with jinja2: pip install 'jurist[report]'") from exc
    source = resources.files("jurist.report").joinpath("page.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True)
    template = env.from_string(source)
    from jurist.analysis.compare import verdict_text

    return template.render(
        data=data, num=_num, ci=_ci, pct=lambda c: f"{round(100 * c)} %", verdict=verdict_text
    )
