"""jurist's built-ins that share a name with Oumi's judges behave as Oumi's (judgment type, response format,
explanation, placeholders, template variables, rule settings); Oumi's CLI aliases and ``oumi://`` paths
resolve to them; jurist's richer judges stay available under ``graded/``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jurist import ConfigError, Engine, ScriptedBackend, load_judge_config
from jurist.config.loading import OUMI_ALIASES, list_builtin_judges
from jurist.config.types import JudgmentType
from jurist.judges.judge import Judge

DATA = Path(__file__).parents[1] / "data" / "oumi"
SHARED = sorted(
    p.relative_to(DATA).with_suffix("").as_posix()
    for p in DATA.rglob("*.yaml")
    if not p.relative_to(DATA).as_posix().startswith("inference/")
)


def test_every_oumi_judge_has_a_builtin_of_the_same_name() -> None:
    assert set(SHARED) <= set(list_builtin_judges())


@pytest.mark.parametrize("name", SHARED)
def test_the_builtin_behaves_as_oumis_judge(name: str) -> None:
    ours = Judge(load_judge_config(name))
    oumi = Judge(load_judge_config(DATA / f"{name}.yaml"))
    assert ours.name == oumi.name
    assert ours.required_fields == oumi.required_fields
    assert type(ours.kind) is type(oumi.kind)
    mine, theirs = ours.config, oumi.config
    if theirs.rule_judge_params is not None:
        assert mine.rule_judge_params is not None
        assert mine.rule_judge_params.rule_type == theirs.rule_judge_params.rule_type
        assert mine.rule_judge_params.regex == theirs.rule_judge_params.regex
        assert mine.rule_judge_params.input_fields == theirs.rule_judge_params.input_fields
        assert mine.rule_judge_params.response_format == theirs.rule_judge_params.response_format
        return
    for key in ("judgment_type", "judgment_scores", "response_format", "include_explanation"):
        assert getattr(mine.judge_params, key) == getattr(theirs.judge_params, key), key
    assert mine.judge_params.template_variables == theirs.judge_params.template_variables
    assert [f.name for f in ours.spec.fields] == [f.name for f in oumi.spec.fields]
    assert ours.spec.regex() == oumi.spec.regex()  # the same answer shape, so the same constraint
    assert (mine.judge_params.system_instruction is None) == (theirs.judge_params.system_instruction is None)
    # jurist's built-ins run locally; Oumi's call gpt-4o
    assert mine.inference_config.engine.value == "VLLM" and mine.inference_config.model.model_name is None


def test_format_compliance_reads_only_the_response_and_takes_oumis_variables() -> None:
    config = load_judge_config(
        "generic/format_compliance",
        {
            "judge_params.template_variables.response_format": "XML",
            "judge_params.template_variables.response_keys": "<a>",
        },
    )
    messages = Judge(config).render({"response": "<a>1</a>"})
    assert "XML" in messages[0].content and "<a>" in messages[0].content
    assert "None" in messages[0].content  # the rules left unset say None, as in Oumi
    assert "<a>1</a>" in messages[-1].content


def test_truthfulness_answers_yes_or_no_as_in_oumi() -> None:
    backend = ScriptedBackend(['{"explanation": "fine", "judgment": "Yes"}'], cycle=True)
    table = Engine("truthfulness", backend).run([{"request": "2+2?", "response": "4"}])
    assert table["truthfulness.judgment"].to_pylist() == [True]
    assert table["truthfulness.score"].to_pylist() == [1.0]


def test_the_graded_judges_keep_jurists_richer_versions() -> None:
    truthfulness = load_judge_config("graded/truthfulness")
    assert truthfulness.judge_params.judgment_type is JudgmentType.ENUM
    assert list(truthfulness.judge_params.judgment_scores or {}) == ["Yes", "Unsure", "No"]
    assert len(truthfulness.judge_params.examples) == 2
    assert "allowed_topics" in load_judge_config("graded/topic_adherence").judge_params.template_variables
    assert Judge(load_judge_config("graded/format_compliance")).required_fields == {"request", "response"}
    for name in ("instruction_following", "safety"):
        assert load_judge_config(f"graded/{name}").judge_params.prompt_template


@pytest.mark.parametrize(("alias", "builtin"), sorted(OUMI_ALIASES.items()))
def test_oumis_cli_aliases_name_the_builtins(alias: str, builtin: str) -> None:
    by_alias = load_judge_config(alias)
    assert by_alias.model_dump() == load_judge_config(builtin).model_dump()
    assert by_alias.source == alias


def test_oumis_aliases_are_the_ones_oumi_documents() -> None:
    assert set(OUMI_ALIASES) == {
        "format-compliance",
        "instruction-following",
        "topic-adherence",
        "truthfulness",
        "safety",
        "regex-match-phone",
        "regex-no-error-keywords",
    }


@pytest.mark.parametrize("name", SHARED)
def test_oumi_paths_resolve_to_the_builtins(name: str) -> None:
    config = load_judge_config(f"oumi://configs/projects/judges/{name}.yaml")
    assert config.model_dump() == load_judge_config(name).model_dump()


def test_an_oumi_path_outside_its_judges_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="Oumi's judge configs only"):
        load_judge_config("oumi://configs/recipes/llama3_1/inference/8b_infer.yaml")
    with pytest.raises(ConfigError, match="no built-in judge of that name"):
        load_judge_config("oumi://configs/projects/judges/generic/nope.yaml")


def test_a_local_file_wins_over_an_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("safety").write_text(yaml.safe_dump({"judge_params": {"prompt_template": "{x}"}}))
    assert Judge(load_judge_config("safety")).required_fields == {"x"}


def test_code_judges_read_the_task_and_the_code() -> None:
    for aspect in ("code_quality", "correctness", "maintainability", "performance", "security"):
        judge = Judge(load_judge_config(f"code/{aspect}"))
        messages = judge.render({"request": "Sort a list.", "response": "sorted(xs)"})
        assert "Sort a list." in messages[-1].content and "sorted(xs)" in messages[-1].content
        assert judge.config.judge_params.judgment_type is JudgmentType.BOOL
