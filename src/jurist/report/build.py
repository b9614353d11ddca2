"""``jurist report``: collect the data, draw, render and write the page atomically."""

from __future__ import annotations

import os
from pathlib import Path

from jurist.report.data import ReportOptions, collect
from jurist.report.page import render

__all__ = ["ReportOptions", "write_report"]


def write_report(results: str | Path, output: Path, options: ReportOptions | None = None) -> int:
    """Write the HTML report of ``results`` to ``output``; returns its size in bytes."""
    html = render(collect(results, options or ReportOptions())).encode("utf-8")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    partial.write_bytes(html)
    os.replace(partial, output)
    return len(html)
