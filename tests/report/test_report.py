"""``jurist report``: the HTML parsed and checked everywhere, and opened in headless Chromium where it is."""

from __future__ import annotations

import base64
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import headless_chromium
from evidence_data import run_pairwise, run_pointwise
from jurist.labels.source import LabelSource
from jurist.report.build import ReportOptions, write_report

LLMBAR = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "llmbar_evidence"


class Page(HTMLParser):
    """What a report holds: tags, image sources, links, scripts, headings and table rows."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.scripts = 0
        self.links: list[str] = []
        self.headings: list[str] = []
        self.rows = 0
        self._heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append(values)
        elif tag == "script":
            self.scripts += 1
        elif tag in ("link", "a") and (values.get("href") or "").startswith(("http", "//")):
            self.links.append(values["href"] or "")
        elif tag in ("h2", "h3"):
            self._heading = True
            self.headings.append("")
        elif tag == "tr":
            self.rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3"):
            self._heading = False

    def handle_data(self, data: str) -> None:
        if self._heading:
            self.headings[-1] += data


def png_size(uri: str) -> tuple[int, int]:
    """Width and height from the embedded PNG's header (after checking its signature)."""
    prefix = "data:image/png;base64,"
    assert uri.startswith(prefix)
    data = base64.b64decode(uri[len(prefix) :], validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def check_page(path: Path, judges: list[str], figures: int) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    assert page.scripts == 0 and page.links == []
    assert len(page.images) >= figures
    for image in page.images:
        width, height = png_size(image["src"] or "")
        assert width > 100 and height > 100
        assert image["alt"]
    for section in ("Provenance", "Throughput", "Audit"):
        assert section in page.headings
    for judge in judges:
        assert any(h.startswith(f"Judge {judge}") for h in page.headings)
    return page


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("report")
    point, point_labels = run_pointwise(folder, count=90, labelled=45)
    pair, pair_labels = run_pairwise(folder, count=40)
    out = {}
    for name, results, labels in (("point", point, point_labels), ("pair", pair, pair_labels)):
        out[name] = folder / f"{name}.html"
        write_report(results, out[name], ReportOptions(labels=LabelSource(labels), worst=15))
    out["plain"] = folder / "plain.html"
    write_report(point, out["plain"], ReportOptions())
    if (LLMBAR / "pointwise.parquet").is_file():
        out["llmbar"] = folder / "llmbar.html"
        labels = ReportOptions(labels=LabelSource(LLMBAR / "pointwise_labels.jsonl", id_column="id"))
        write_report(LLMBAR / "pointwise.parquet", out["llmbar"], labels)
    return out


def test_the_pointwise_report_holds_its_sections_figures_and_rows(reports: dict[str, Path]) -> None:
    # scores, reliability, length, estimate
    page = check_page(reports["point"], ["quality"], figures=4)
    assert "Mean label, corrected (PPI++)" in page.headings
    assert any(h.startswith("The 15 rows") for h in page.headings)
    text = reports["point"].read_text()
    assert "labels only" in text and "first-shown" not in text


def test_the_pairwise_report_shows_position(reports: dict[str, Path]) -> None:
    check_page(reports["pair"], ["pref"], figures=4)  # scores, reliability, length, position (+ estimate)
    assert "first-shown answer wins" in reports["pair"].read_text()


def test_a_report_without_labels_has_no_estimate(reports: dict[str, Path]) -> None:
    page = check_page(reports["plain"], ["quality"], figures=3)  # scores, confidence, length
    assert "Mean label, corrected (PPI++)" not in page.headings


def test_the_llmbar_report_is_checked_when_its_results_are_here(reports: dict[str, Path]) -> None:
    if "llmbar" not in reports:
        pytest.skip(f"no LLMBar results in {LLMBAR} (benchmarks/llmbar_evidence.py writes them)")
    check_page(reports["llmbar"], ["instruction_following"], figures=4)


def test_the_reports_render_in_headless_chromium(reports: dict[str, Path], tmp_path: Path) -> None:
    driver = headless_chromium(tmp_path / "profile")
    try:
        for name, path in reports.items():
            driver.get(path.as_uri())
            images = driver.execute_script(
                "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);"
            )
            assert images, name
            assert all(done and width > 0 and height > 0 for done, width, height in images), (name, images)
            errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
            assert errors == [], (name, errors)
            assert driver.execute_script("return document.title").startswith("jurist report")
    finally:
        driver.quit()
