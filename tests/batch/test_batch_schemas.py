"""Batch lines with a JSON schema on the real vLLM CPU engine and the tiny random-weight model: each
schema decoded under its regex with no free whitespace, so answers finish inside ``max_tokens`` 40 and
every finished answer meets its schema (checked with ``jsonschema``); a schema no regex holds goes to the
grammar backend, counted with its reason in the run's summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schema_lines import BOUNDED, check_answers, issue_lines, mixed_lines, write
from typer.testing import CliRunner

from jurist.cli import app

pytestmark = pytest.mark.engine


def _run(tiny_model_dir: Path, source: Path, output: Path) -> dict[str, object]:
    model = str(tiny_model_dir)
    args = ["batch", str(source), "-o", str(output), "-q", "--model-map", f"gpt-4o-mini={model}"]
    result = CliRunner().invoke(app, [*args, "--engine-param", "gpu_memory_utilization=0.15"])
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(output.with_name(output.name + ".meta.json").read_text())[
        "summary"
    ]
    return summary


def test_schema_answers_finish_and_meet_their_schemas(tiny_model_dir: Path, tmp_path: Path) -> None:
    twelve = write(tmp_path / "twelve.jsonl", issue_lines())
    summary = _run(tiny_model_dir, twelve, tmp_path / "twelve.out.jsonl")
    counts = check_answers(
        twelve, tmp_path / "twelve.out.jsonl"
    )  # raises on an answer that breaks its schema
    assert counts["verdict"] == {"lines": 12, "finished": 12, "valid": 12, "errors": 0}
    assert summary["response_formats"] == {"regex": 12, "grammar": 0, "fallbacks": {}, "unbounded": {}}

    source = write(tmp_path / "mixed.jsonl", mixed_lines(400))
    summary = _run(tiny_model_dir, source, tmp_path / "mixed.out.jsonl")
    counts = check_answers(source, tmp_path / "mixed.out.jsonl")
    assert sum(c["lines"] for c in counts.values()) == 400
    assert all(c["errors"] == 0 for c in counts.values()), counts
    schema_kinds = [*BOUNDED, "open", "tree"]
    lines = sum(counts[k]["lines"] for k in schema_kinds)
    finished = sum(counts[k]["finished"] for k in schema_kinds)
    assert finished >= 0.95 * lines, counts
    assert all(counts[k]["finished"] == counts[k]["lines"] for k in BOUNDED), counts
    formats = summary["response_formats"]
    assert isinstance(formats, dict)
    assert formats["regex"] == lines - 4 + counts["object"]["lines"] and formats["grammar"] == 4
    assert formats["fallbacks"] == {"$.child: recursive $ref '#/$defs/node'": 4}
    assert formats["unbounded"] == {
        "$.explanation (a string with no maxLength)": 4,
        "$ (an object of any keys)": counts["object"]["lines"],
    }
