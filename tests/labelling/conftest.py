"""Fixtures of the labelling tests: results written by scripted judges, `jurist label` servers started as
real processes, and one headless Chromium for the session (skipped, saying why, where it is absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from label_support import CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS, HOSTILE, MARKDOWN, Server

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
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.skip(
            f"no browser: {CHROMIUM} and {CHROMEDRIVER} come from Debian's chromium and chromium-driver "
            "(scripts/setup.sh installs them where apt can)"
        )
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (the dev extra has it)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        *CHROMIUM_FLAGS,
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
        "--window-size=1280,860",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
