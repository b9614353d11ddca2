"""Debian's headless Chromium through selenium, started offline: the HTML report's and the labelling page's
browser tests share it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# a machine with no network: no background fetches, no updates, no sync
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def headless_chromium(profile: Path, *flags: str) -> Any:
    """A selenium driver of headless Chromium with its profile in ``profile`` and the browser's console
    log kept; the test is skipped, saying how to install them, where the browser or selenium is absent."""
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
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", *flags):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
