"""Several labellers at once on one labels file, through the HTTP API of real `jurist label` processes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
from label_support import Server, read_lines

from jurist.io.results import ResultTable
from jurist.labels.file import Strategy
from jurist.labels.sampling import SamplingPlan


def label_until_done(url: str, session: str, labeller: str, saved: list[str], errors: list[str]) -> None:
    """Take rows and label them (alternately Yes and No) until the queue says done."""
    with httpx.Client(base_url=url, timeout=30) as client:
        while True:
            offer = client.post("/api/next", json={"session": session, "labeller": labeller}).json()
            if offer.get("done"):
                return
            row_id = offer["row"]["row_id"]
            body = {
                "session": session,
                "labeller": labeller,
                "row_id": row_id,
                "label": "Yes" if len(saved) % 2 else "No",
            }
            answer = client.post("/api/label", json=body)
            if answer.status_code != 200 or not answer.json().get("saved"):
                errors.append(f"{labeller}: {answer.status_code} {answer.text}")
                return
            saved.append(row_id)


def test_four_sessions_on_two_servers_label_50_rows_once_each(
    results: dict[str, Path], servers: list[Server], tmp_path: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    for _ in range(2):  # two processes on one file
        servers.append(Server(results["point"], labels, "--budget", "50", "--seed", "3"))
    saved: dict[str, list[str]] = {}
    errors: list[str] = []
    threads = []
    for i in range(4):  # two sessions on each server
        name = f"labeller-{i}"
        saved[name] = []
        thread = threading.Thread(
            target=label_until_done, args=(servers[i % 2].url, f"session-{i}", name, saved[name], errors)
        )
        threads.append(thread)
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert all(len(rows) > 0 for rows in saved.values())  # everyone got rows

    lines = read_lines(labels)
    plan = SamplingPlan.build(ResultTable.open(results["point"]), "quality", Strategy.UNIFORM, 50, seed=3)
    expected = {d.row_id for d in plan.draws()}
    assert len(lines) == 50
    assert {line["row_id"] for line in lines} == expected
    assert sorted(r for rows in saved.values() for r in rows) == sorted(line["row_id"] for line in lines)
    by_labeller = {
        name: sorted(line["row_id"] for line in lines if line["labeller"] == name) for name in saved
    }
    assert by_labeller == {name: sorted(rows) for name, rows in saved.items()}
    assert labels.read_bytes().endswith(b"\n")

    progress = httpx.get(servers[0].url + "api/progress").json()
    assert progress["given"] == progress["budget"] == 50
    assert (
        progress["estimate"]["labelled"] == 50 and progress["estimate"]["low"] < progress["estimate"]["high"]
    )


def test_a_row_held_by_one_session_is_refused_to_another(
    results: dict[str, Path], servers: list[Server], tmp_path: Path
) -> None:
    server = Server(results["point"], tmp_path / "labels.jsonl", "--budget", "5")
    servers.append(server)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        first = client.post("/api/next", json={"session": "one", "labeller": "ann"}).json()
        second = client.post("/api/next", json={"session": "two", "labeller": "bo"}).json()
        assert first["row"]["row_id"] != second["row"]["row_id"]
        held = first["row"]["row_id"]
        theft: Any = client.post(
            "/api/label", json={"session": "two", "labeller": "bo", "row_id": held, "label": "Yes"}
        )
        assert theft.status_code == 409 and "being labelled by ann" in theft.json()["error"]
        bad = client.post(
            "/api/label", json={"session": "one", "labeller": "ann", "row_id": held, "label": "maybe"}
        )
        assert bad.status_code == 400 and "'maybe' is not one of judge 'quality'" in bad.json()["error"]
        assert "verdict" not in first  # blind: the judge's verdict comes only with the saved label
        saved = client.post(
            "/api/label", json={"session": "one", "labeller": "ann", "row_id": held, "label": "yes"}
        )
        assert saved.json()["saved"] and saved.json()["verdict"]["text"] in ("Yes", "No")
        again = client.post(
            "/api/label", json={"session": "one", "labeller": "ann", "row_id": held, "label": "No"}
        )
        assert again.status_code == 409 and "labelled already" in again.json()["error"]
        page = client.get("/")
        assert "default-src 'none'" in page.headers["content-security-policy"]
    assert [line["label"] for line in read_lines(tmp_path / "labels.jsonl")] == ["Yes"]
