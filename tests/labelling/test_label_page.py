"""The labelling page in headless Chromium, served by a real `jurist label` process: labelling by keyboard
through a kill -9 and a restart, hostile input shown as text, and the guide's screenshot."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from label_support import HOSTILE, Server, read_lines

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "guide" / "img" / "labelling.png"


def wait_for(driver: Any, script: str, timeout: float = 15) -> Any:
    """Poll a JavaScript expression until it is truthy; its value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(f"return {script}")
    )


def at_position(driver: Any, position: int) -> None:
    """Wait until the page shows the row at ``position`` of the plan and is ready for the next key."""
    wait_for(
        driver,
        f"document.getElementById('row').dataset.position === '{position}' && !document.body.dataset.busy",
    )


def press(driver: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def browser_errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def test_ten_rows_by_keyboard_survive_a_kill_and_the_page_continues_at_row_11(
    browser: Any, results: dict[str, Path], servers: list[Server], tmp_path: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    first = Server(results["point"], labels, "--budget", "30", "--labeller", "ann")
    servers.append(first)
    browser.get(first.url)
    at_position(browser, 0)
    assert browser.find_element("id", "estimate").text == "estimate: needs 2 more labels"
    given = []
    for i in range(10):
        key = "yn"[i % 3 == 0]
        press(browser, key)
        given.append("No" if key == "n" else "Yes")
        at_position(browser, i + 1)
    assert "10 of 30 labelled" in browser.find_element("id", "progress").text
    assert browser.find_element("id", "estimate").text.startswith("corrected estimate ")
    first.kill()

    lines = read_lines(labels)
    assert [line["label"] for line in lines] == given
    assert [line["position"] for line in lines] == list(range(10))
    assert {line["labeller"] for line in lines} == {"ann"}
    assert len({line["row_id"] for line in lines}) == 10
    assert all(
        line["probability"] == pytest.approx(30 / 80) and line["strategy"] == "uniform" for line in lines
    )

    again = Server(results["point"], labels, "--budget", "30", port=first.port)
    servers.append(again)
    browser.refresh()
    at_position(browser, 10)
    assert browser.find_element("id", "position").text.startswith("Row 11 of 30")
    assert "10 of 30 labelled" in browser.find_element("id", "progress").text
    # undo withdraws the tenth label by appending a line; the page goes back to row 10
    press(browser, "u")
    at_position(browser, 9)
    withdrawn = read_lines(labels)[-1]
    assert withdrawn["row_id"] == lines[-1]["row_id"] and withdrawn["label"] is None and withdrawn["undo"]
    assert browser_errors(browser) == []


def test_hostile_input_shows_as_text_and_runs_nothing(
    browser: Any, results: dict[str, Path], servers: list[Server], tmp_path: Path
) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    server = Server(results["hostile"], tmp_path / "labels.jsonl", "--budget", "3", "--labeller", "bo")
    servers.append(server)
    browser.get(server.url)
    at_position(browser, 0)
    fields = browser.find_element("id", "fields")
    assert HOSTILE in fields.text
    assert "**bold** <img src=x onerror=alert(2)> [a link](http://example.com)" in fields.text
    assert (
        browser.find_elements("css selector", "#fields script, #fields img, #fields a, #fields strong") == []
    )
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert  # noqa: B018 (the property raises when no alert is open)
    press(browser, "y")
    at_position(browser, 1)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert  # noqa: B018
    assert browser_errors(browser) == []


def test_the_guide_screenshot_of_a_pairwise_row(
    browser: Any, results: dict[str, Path], servers: list[Server], tmp_path: Path
) -> None:
    server = Server(results["pair"], tmp_path / "labels.jsonl", "--budget", "20", "--labeller", "ann")
    servers.append(server)
    browser.get(server.url)
    at_position(browser, 0)
    assert [b.text for b in browser.find_elements("css selector", "#choices button .text")] == [
        "A is better",
        "B is better",
        "Tie",
    ]
    for i, key in enumerate("abt"):
        press(browser, key)
        at_position(browser, i + 1)
    assert len(browser.find_elements("css selector", "#pair .side pre")) == 2
    target = SCREENSHOT if os.environ.get("JURIST_UPDATE_SCREENSHOTS") == "1" else tmp_path / "labelling.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(target))
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 1000 and height >= 600
    assert [line["label"] for line in read_lines(tmp_path / "labels.jsonl")] == ["a", "b", "tie"]
