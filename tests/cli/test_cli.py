"""The command line, run as a real subprocess (no model needed for these commands)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROWS = [
    {"request": "What is the capital of France?", "response": "Paris."},
    {"request": "How many legs does a spider have?", "response": "Six."},
    {"request": "Name a prime number.", "response": None},
]


def jurist(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=120
    )


def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_list_shows_every_builtin() -> None:
    result = jurist("list")
    assert result.returncode == 0, result.stderr
    for name in [
        "generic/truthfulness",
        "generic/instruction_following",
        "generic/safety",
        "generic/topic_adherence",
        "generic/format_compliance",
        "graded/truthfulness",
        "graded/format_compliance",
        "code/security",
        "rule_based/regex_match_phone",
        "doc_qa/relevance",
        "doc_qa/groundedness",
        "doc_qa/completeness",
        "rubric/response_quality",
        "rubric/doc_qa",
    ]:
        assert name in result.stdout


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("pairwise/preference", "pairwise"),
        ("rubric/response_quality", "rubric"),
        ("reward/skywork", "reward"),
        ("rag/faithfulness", "rag"),
        ("jury/pointwise", "BOOL"),
    ],
)
def test_list_names_each_kind(name: str, kind: str) -> None:
    line = next(line for line in jurist("list").stdout.splitlines() if line.startswith(name + " "))
    assert line.split()[1] == kind


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rag/faithfulness", ["rag judge", "RAG metric faithfulness", "steps:"]),
        ("reward/skywork", ["reward judge", "no text generated", "one output: the reward"]),
    ],
)
def test_validate_describes_judges_that_do_not_answer_in_fields(name: str, expected: list[str]) -> None:
    result = jurist("validate", name)
    assert result.returncode == 0, result.stderr
    for text in expected:
        assert text in result.stdout
    assert "constraint (regex)" not in result.stdout


def test_validate_explains_a_config() -> None:
    result = jurist("validate", "rubric/response_quality")
    assert result.returncode == 0, result.stderr
    assert "rubric judge" in result.stdout and "aggregation WEIGHTED_MEAN" in result.stdout
    assert "constraint (regex)" in result.stdout


def test_validate_reports_bad_yaml_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("judge_params:\n  prompt_template: 'x'\n   response_format: JSON\n")
    result = jurist("validate", str(bad))
    assert result.returncode == 2
    assert str(bad) in result.stderr and "line 3" in result.stderr


def test_validate_reports_unknown_key_and_allowed_keys(tmp_path: Path) -> None:
    bad = tmp_path / "typo.yaml"
    bad.write_text("judge_params:\n  prompt_template: '{x}'\n  judgement_type: BOOL\n")
    result = jurist("validate", str(bad))
    assert result.returncode == 2
    assert "judge_params.judgement_type: unknown key" in result.stderr
    assert "judgment_type" in result.stderr and str(bad) in result.stderr


def test_render_prints_prompts_schema_and_row_statuses(tmp_path: Path) -> None:
    result = jurist(
        "render", "--config", "generic/truthfulness", "--input", str(dataset(tmp_path)), "--limit", "3"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "=== judge truthfulness" in out and "output schema:" in out
    assert "What is the capital of France?" in out and "[system]" in out and "[user]" in out
    assert "[missing_input]" in out and "response" in out


def test_render_with_override(tmp_path: Path) -> None:
    result = jurist(
        "render",
        "-c",
        "generic/safety",
        "-i",
        str(dataset(tmp_path)),
        "--limit",
        "1",
        "--judge_params.response_format",
        "XML",
    )
    assert result.returncode == 0, result.stderr
    assert "<judgment>(?:Yes|No)</judgment>" in result.stdout


def test_judge_dataset_fails_up_front_on_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"request": "q"}) + "\n")
    result = jurist(
        "judge", "dataset", "-c", "generic/truthfulness", "-i", str(path), "-o", str(tmp_path / "o.parquet")
    )
    assert result.returncode == 2
    assert "'response'" in result.stderr and str(path) in result.stderr
    assert not (tmp_path / "o.parquet").exists()


def test_unknown_engine_is_a_clear_error(tmp_path: Path) -> None:
    result = jurist("validate", "generic/safety", "--inference_config.engine", "TGI")
    assert result.returncode == 2
    assert (
        "inference_config.engine" in result.stderr and "VLLM" in result.stderr and "NATIVE" in result.stderr
    )


@pytest.mark.parametrize(
    "command",
    [
        ("probe", "fit", "-c", "generic/safety", "--label-column", "y", "-o", "head.json"),
        ("bench", "-c", "generic/safety", "-o", "bench"),
        ("judge", "dataset", "-c", "generic/safety", "-o", "out.parquet"),
    ],
)
def test_an_unknown_option_is_one_line_on_every_command(tmp_path: Path, command: tuple[str, ...]) -> None:
    """An option a command does not have reads as a config override, which names it in one line (exit 2),
    before any input is read or model loads; never a traceback."""
    result = jurist(*command, "-i", str(dataset(tmp_path)), "--max-costs", "0.4")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: unknown option --max-costs; overrides are dotted, e.g. --judge_params.max-costs"
    ]


def test_empty_input_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    result = jurist("render", "-c", "generic/safety", "-i", str(path))
    assert result.returncode == 2 and str(path) in result.stderr and "empty" in result.stderr
