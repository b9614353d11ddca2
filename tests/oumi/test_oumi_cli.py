"""The command line as an Oumi user runs it (real subprocesses, no model): ``--output`` left out prints the
results as a table, aliases and Oumi's files work, ``jurist list`` names each judge's kind."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_server import ChatServer, chat_server, completion

DATA = Path(__file__).parents[1] / "data" / "oumi"
ROWS = [
    {"request": "Give me a phone number.", "response": "Call 555-1234."},
    {"request": "Any number?", "response": "Sorry, an error occurred."},
]


def jurist(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=180, cwd=cwd, env=env
    )


def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def verdict(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    yes = "555" in body["messages"][-1]["content"]
    return 200, completion(json.dumps({"explanation": "looked at it", "judgment": "Yes" if yes else "No"}))


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    with chat_server(verdict) as srv:
        yield srv


def test_without_output_the_results_are_a_table_and_nothing_is_written(tmp_path: Path) -> None:
    data = rows_file(tmp_path)
    result = jurist(
        "judge",
        "dataset",
        "-c",
        "regex-match-phone",
        "-c",
        "regex-no-error-keywords",
        "-i",
        str(data),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "== regex_match_phone: overall score 50.00%" in out
    assert "== regex_no_error_keywords: overall score 50.00%" in out
    header = next(line for line in out.splitlines() if line.startswith("row "))
    assert header.split() == ["row", "judgment", "score", "explanation", "status"]
    lines = [line.split() for line in out.splitlines() if line.startswith(("0 ", "1 "))]
    assert lines[:2] == [["0", "True", "1.0", "N/A", "ok"], ["1", "False", "0.0", "N/A", "ok"]]
    assert lines[2:] == [["0", "True", "1.0", "N/A", "ok"], ["1", "False", "0.0", "N/A", "ok"]]
    assert "not saved" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]


def test_the_table_of_a_model_judge_with_explanations_and_raw_answers(
    server: ChatServer, tmp_path: Path
) -> None:
    data = rows_file(tmp_path)
    result = jurist(
        "judge", "dataset", "-c", "truthfulness", "-i", str(data), "--raw",
        "--inference_config.engine", "REMOTE_VLLM", "--inference_config.model.model_name", "m",
        "--inference_config.remote_params.api_url", server.url,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "== truthfulness: overall score 50.00%" in result.stdout
    assert "looked at it" in result.stdout and '{"explanation": "looked at it"' in result.stdout
    assert result.stdout.splitlines()[1].split() == [
        "row",
        "judgment",
        "score",
        "explanation",
        "status",
        "raw",
    ]


def test_a_row_without_a_score_leaves_the_overall_score_out(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"response": "555-1234"}) + "\n" + json.dumps({"response": None}) + "\n")
    result = jurist("judge", "dataset", "-c", "regex-match-phone", "-i", str(data))
    assert "overall score: n/a" in result.stdout
    assert "missing_input" in result.stdout


def test_options_that_need_an_output_file_say_so(tmp_path: Path) -> None:
    result = jurist(
        "judge", "dataset", "-c", "regex-match-phone", "-i", str(rows_file(tmp_path)), "--keep", "x"
    )
    assert result.returncode == 2 and "need --output" in result.stderr


def test_an_oumi_file_with_an_output_file_as_before(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    config = DATA / "rule_based" / "regex_no_error_keywords.yaml"
    result = jurist("judge", "dataset", "-c", str(config), "-i", str(rows_file(tmp_path)), "-o", str(out))
    assert result.returncode == 0, result.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["regex_no_error_keywords.judgment"] for r in written] == [True, False]


def test_list_names_each_kind() -> None:
    result = jurist("list")
    assert result.returncode == 0, result.stderr
    kinds = {
        line.split()[0]: line.split()[1] for line in result.stdout.splitlines() if "/" in line.split()[0]
    }
    assert kinds["pairwise/preference"] == "pairwise"
    assert kinds["reward/skywork"] == "reward"
    assert kinds["rule_based/regex_match_phone"] == "rule"
    assert kinds["rubric/doc_qa"] == "rubric"
    assert kinds["generic/truthfulness"] == "BOOL" and kinds["graded/truthfulness"] == "ENUM"
    assert kinds["code/security"] == "BOOL"
    assert "regex-match-phone (rule_based/regex_match_phone)" in result.stdout


def test_validate_and_render_explain_a_rule_judge(tmp_path: Path) -> None:
    result = jurist("validate", "regex-match-phone")
    assert result.returncode == 0, result.stderr
    assert (
        "rule judge" in result.stdout
        and "no model" in result.stdout
        and "reads fields: response" in result.stdout
    )
    result = jurist(
        "render",
        "-c",
        "oumi://configs/projects/judges/rule_based/regex_match_phone.yaml",
        "-i",
        str(rows_file(tmp_path)),
    )
    assert result.returncode == 0, result.stderr
    assert "judgment: True" in result.stdout and "judgment: False" in result.stdout


def test_validate_reports_oumi_keys_it_ignores(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(
        "judge_params:\n  prompt_template: '{request}'\n"
        "inference_config:\n  model:\n    model_name: m\n    attn_implementation: sdpa\n"
    )
    result = jurist("validate", str(path))
    assert result.returncode == 0, result.stderr
    assert (
        "inference_config.model.attn_implementation is an Oumi setting jurist does not use" in result.stdout
    )
