"""Oumi's Python API pages run as written (with jurist's imports): ``JudgeConfig.from_path`` and the
programmatic override, ``SimpleJudge(config)``; and an unparseable answer's warning naming the likely
cause."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jurist import Completion, JudgeConfig, ScriptedBackend, SimpleJudge
from jurist.config.types import ResponseFormat

ROW = {"request": "What is the capital of France?", "response": "Paris"}


def test_the_seed_pages_programmatic_override_runs_as_written() -> None:
    # Oumi's page: "Programmatic Override", with jurist's imports in place of oumi's
    judge_config = JudgeConfig.from_path("generic/truthfulness")
    judge_config.judge_params.response_format = "XML"  # type: ignore[assignment]
    judge = SimpleJudge(judge_config)

    assert judge_config.judge_params.response_format is ResponseFormat.XML  # the assignment is validated
    assert judge.compiled.config.source == "generic/truthfulness"
    assert "<judgment>" in judge.compiled.render(ROW)[0].content  # the XML format's instructions
    judge.close()  # nothing was loaded: the model loads on the first judge() call


def test_the_overridden_judge_reads_xml_answers() -> None:
    judge_config = JudgeConfig.from_path("generic/truthfulness")
    judge_config.judge_params.response_format = "XML"  # type: ignore[assignment]
    backend = ScriptedBackend(["<explanation>Correct.</explanation><judgment>Yes</judgment>"])
    output = SimpleJudge(judge_config, backend).judge([ROW])[0]
    assert (output.status, output.field_values["judgment"]) == ("ok", True)


def test_from_path_reads_files_and_oumi_paths_and_refuses_bad_values(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "judge_params:\n  prompt_template: 'Is {response} right?'\n  judgment_type: BOOL\n", encoding="utf-8"
    )
    assert JudgeConfig.from_path(path).source == str(path)
    assert (
        JudgeConfig.from_path("oumi://configs/projects/judges/generic/truthfulness.yaml").name
        == "truthfulness"
    )
    config = JudgeConfig.from_path(path, {"judge_params.include_explanation": True})
    assert config.judge_params.include_explanation is True
    with pytest.raises(ValueError, match="response_format"):
        config.judge_params.response_format = "YAML"  # type: ignore[assignment]


def test_unparseable_answers_log_one_warning_naming_the_likely_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = [
        Completion('{"explanation": "The answer is cor', "length"),
        Completion('{"explanation": "cut', "length"),
        "I think it is fine.",
        '{"explanation": "no verdict"}',
        '{"explanation": "ok", "judgment": "Yes"}',
    ]
    judge = SimpleJudge(
        "generic/truthfulness",
        ScriptedBackend(answers),
        overrides={"judge_params.use_guided_decoding": False},
    )
    with caplog.at_level(logging.WARNING, logger="jurist"):
        outputs = judge.judge([ROW] * 5)
    assert [o.status for o in outputs] == ["truncated", "truncated", "parse_error", "parse_error", "ok"]
    assert all(o.field_values.get("judgment") is None for o in outputs[:4])
    warnings = [r.getMessage() for r in caplog.records if "could not be parsed" in r.getMessage()]
    assert len(warnings) == 1
    assert "judge truthfulness: 4 of 5 row(s) could not be parsed" in warnings[0]
    assert "2 row(s): cut off at max_new_tokens" in warnings[0]
    assert "1 row(s): no JSON object" in warnings[0]
    assert "1 row(s): a field missing" in warnings[0]


def test_no_warning_when_every_answer_parses(caplog: pytest.LogCaptureFixture) -> None:
    judge = SimpleJudge("generic/truthfulness", ScriptedBackend(['{"explanation": "ok", "judgment": "Yes"}']))
    with caplog.at_level(logging.WARNING, logger="jurist"):
        judge.judge([ROW])
    assert not [r for r in caplog.records if "could not be parsed" in r.getMessage()]
