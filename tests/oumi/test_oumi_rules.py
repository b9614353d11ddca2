"""Rule-based judges (Oumi's ``rule_judge_params``): the regex rule's results, row statuses, columns, config
errors, and that no model loads for them, alone or beside a model judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist import ConfigError, Engine, InputError, ScriptedBackend, SimpleJudge, load_judge_config
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.judges.judge import Judge

DATA = Path(__file__).parents[1] / "data" / "oumi"


def rule(name: str = "r", **config: Any) -> dict[str, Any]:
    rule_config = {"pattern": r"\d{3}-\d{4}", "input_field": "response", **config}
    return {
        "name": name,
        "judge_params": {"prompt_template": "{response}"},
        "rule_judge_params": {"rule_type": "regex", "input_fields": ["response"], "rule_config": rule_config},
    }


def no_model(config: InferenceConfig) -> Backend:
    raise AssertionError(f"a model was loaded for {config.model.model_name or 'the default model'}")


def run(config: Any, rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    table = Engine(config, backend_factory=no_model).run(rows)
    return {name: table.column(name).to_pylist() for name in table.column_names}


def test_oumis_phone_judge_matches_and_does_not_match_without_a_model() -> None:
    rows = [{"response": "Call 555-1234 today"}, {"response": "No number here"}, {"response": "5551234"}]
    out = run(DATA / "rule_based" / "regex_match_phone.yaml", rows)
    assert out["regex_match_phone.judgment"] == [True, False, False]
    assert out["regex_match_phone.judgment_score"] == [1.0, 0.0, 0.0]
    assert out["regex_match_phone.score"] == [1.0, 0.0, 0.0]
    assert out["regex_match_phone.raw"] == ["judgment: True", "judgment: False", "judgment: False"]
    assert out["regex_match_phone.status"] == ["ok"] * 3
    assert out["regex_match_phone.model"] == ["rule"] * 3
    assert out["regex_match_phone.error"] == [None] * 3


def test_oumis_no_error_keywords_judge_is_inverse_and_ignores_case() -> None:
    rows = [
        {"response": "All good."},
        {"response": "Traceback (most recent call last)"},
        {"response": "FAILED"},
    ]
    out = run(DATA / "rule_based" / "regex_no_error_keywords.yaml", rows)
    assert out["regex_no_error_keywords.judgment"] == [True, False, False]
    assert out["regex_no_error_keywords.score"] == [1.0, 0.0, 0.0]


def test_a_missing_or_null_field_is_missing_input_and_the_batch_goes_on() -> None:
    rows = [{"response": "555-0000"}, {"response": None}, {"other": "555-0000"}]
    out = run(rule(), rows)
    assert out["r.status"] == ["ok", "missing_input", "missing_input"]
    assert out["r.judgment"] == [True, None, None]
    assert out["r.score"] == [1.0, None, None]
    assert "'response'" in out["r.error"][1] and "row 1" in out["r.error"][1]


def test_every_input_field_is_required_not_only_the_matched_one() -> None:
    config = rule()
    config["rule_judge_params"]["input_fields"] = ["response", "request"]
    out = run(config, [{"response": "555-0000", "request": "q"}, {"response": "555-0000"}])
    assert out["r.status"] == ["ok", "missing_input"]
    assert "'request'" in out["r.error"][1]


def test_a_dataset_without_the_column_is_refused_before_judging(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"text": "555-1234"}) + "\n")
    with pytest.raises(InputError, match="'response'"):
        Engine(rule(), backend_factory=no_model).run_file(path, tmp_path / "out.parquet")


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("search", [True, True, False]), ("match", [True, False, False]), ("fullmatch", [True, False, False])],
)
def test_match_modes(mode: str, expected: list[bool]) -> None:
    rows = [{"response": "555-1234"}, {"response": "tel 555-1234"}, {"response": "tel"}]
    assert run(rule(match_mode=mode), rows)["r.judgment"] == expected


def test_fullmatch_needs_the_whole_text() -> None:
    assert run(rule(match_mode="fullmatch"), [{"response": "555-1234 "}])["r.judgment"] == [False]


def test_values_that_are_not_text_are_matched_as_written() -> None:
    rows = [{"response": 5551234}, {"response": ["555-1234"]}]
    out = run(rule(pattern=r"^\d+$", match_mode="search"), rows)
    assert out["r.judgment"] == [True, False]  # 5551234 -> "5551234"; a list -> its JSON text
    assert out["r.status"] == ["ok", "ok"]


def test_an_errored_target_is_not_judged() -> None:
    out = run(rule(), [{"response": "555-1234", "error": "timeout"}])
    assert out["r.status"] == ["target_error"] and "timeout" in out["r.error"][0]


def test_a_rule_judge_beside_a_model_judge_sends_only_the_models_requests() -> None:
    model_judge = {
        "name": "m",
        "judge_params": {"prompt_template": "Is {response} fine?", "include_explanation": False},
    }
    backend = ScriptedBackend([json.dumps({"judgment": "Yes"})], cycle=True)
    table = Engine([rule(), model_judge], backend).run([{"response": "555-1234"}, {"response": "none"}])
    assert len(backend.requests) == 2
    assert all("Is " in request.messages[-1].content for request in backend.requests)
    assert table["r.judgment"].to_pylist() == [True, False]
    assert table["m.judgment"].to_pylist() == [True, True]
    assert table["r.model"].to_pylist() == ["rule", "rule"]


def test_with_a_model_judge_only_that_judges_model_loads() -> None:
    loaded: list[str | None] = []

    def factory(config: InferenceConfig) -> Backend:
        loaded.append(config.model.model_name)
        return ScriptedBackend([json.dumps({"judgment": "No"})], cycle=True)

    model_judge = {
        "name": "m",
        "judge_params": {"prompt_template": "{response}"},
        "inference_config": {"model": {"model_name": "some/model"}},
    }
    table = Engine([rule(), model_judge], backend_factory=factory).run([{"response": "555-1234"}])
    assert loaded == ["some/model"]
    assert table["m.judgment"].to_pylist() == [False] and table["r.judgment"].to_pylist() == [True]


def test_the_rule_judge_is_a_rule_kind_with_its_own_columns() -> None:
    judge = Judge.from_config(rule())
    assert not judge.needs_model
    assert judge.required_fields == {"response"}
    suffixes = [c.suffix for c in judge.columns]
    assert suffixes[:3] == ["judgment", "judgment_score", "raw"]
    assert "score" in suffixes and "status" in suffixes
    assert judge.start({"response": "555-1234"}).requests == ()


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"rule_type": "exact_match"}, "rule_type 'exact_match' is unknown; rule types: regex"),
        ({"rule_config": {"pattern": "(unclosed"}}, "not a valid regular expression"),
        ({"rule_config": {"pattern": "x", "match_mode": "anywhere"}}, "match_mode 'anywhere'"),
        ({"rule_config": {"pattern": "x", "ignore_case": True}}, "rule_config.ignore_case: unknown key"),
        ({"rule_config": {"input_field": "response"}}, "rule_config.pattern"),
        ({"input_fields": []}, "input_fields"),
        ({"judgment_type": "ENUM", "judgment_scores": {"a": 1.0}}, "judgment_type must be BOOL"),
    ],
)
def test_bad_rule_configs_are_clear_errors(change: dict[str, Any], fragment: str) -> None:
    config = rule()
    config["rule_judge_params"] = {**config["rule_judge_params"], **change}
    with pytest.raises(ConfigError) as info:
        load_judge_config(config)
    assert fragment in str(info.value)


def test_a_rule_judge_is_not_also_another_kind() -> None:
    config = rule()
    config["reward_judge_params"] = {}
    with pytest.raises(ConfigError, match="either"):
        load_judge_config(config)
    config = rule()
    config["judge_params"]["scoring"] = "LOGPROBS"
    with pytest.raises(ConfigError, match="rule judge"):
        load_judge_config(config)


def test_oumis_python_call_for_a_rule_judge() -> None:
    outputs = SimpleJudge("regex-match-phone").judge([{"response": "555-1234"}, {"response": "none"}])
    assert [o.field_values for o in outputs] == [{"judgment": True}, {"judgment": False}]
    assert [o.field_scores for o in outputs] == [{"judgment": 1.0}, {"judgment": 0.0}]
    assert [o.raw for o in outputs] == ["judgment: True", "judgment: False"]
