"""Fixtures of the labelling tests: results written by scripted judges, `jurist label` servers started as
real processes, and one headless Chromium for the session (skipped, saying why, where it is absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from label_support import HOSTILE, MARKDOWN, Server

from browser import headless_chromium
from evidence_data import POINT, _yes_probability, run_pairwise, run_pointwise
from jurist import Engine, ScriptedBackend


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Result tables of scripted judges: ``point`` (80 BOOL rows, LOGPROBS), ``pair`` (30 pairs) and
    ``hostile`` (3 rows whose request is a script tag and whose response is Markdown and HTML)."""
    folder = tmp_path_factory.mktemp("label-results")
    point, _ = run_pointwise(folder, count=80)
    pair, _ = run_pairwise(folder, count=30)
    rows = folder / "hostile.jsonl"
    rows.write_text(
        "".join(json.dumps({"request": HOSTILE, "response": f"{MARKDOWN} {i}"}) + "\n" for i in range(3))
    )
    hostile = folder / "hostile.parquet"
    Engine(POINT, ScriptedBackend([], labels=_yes_probability)).run_file(rows, hostile)
    return {"point": point, "pair": pair, "hostile": hostile}


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """Servers a test starts (append to the list); stopped at its end."""
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium (selenium) for every browser test of the session."""
    driver = headless_chromium(tmp_path_factory.mktemp("chromium"), "--window-size=1280,860")
    try:
        yield driver
    finally:
        driver.quit()
