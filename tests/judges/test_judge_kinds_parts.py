"""A judge kind builds only the parts it uses: a rule judge sends no prompt and builds none."""

from __future__ import annotations

from jurist import Engine
from jurist.judges.judge import Judge, kind_for
from jurist.judges.rule import RuleJudge

RULE = {
    "name": "has_digit",
    "judge_params": {"prompt_template": "{response}"},
    "rule_judge_params": {
        "rule_type": "regex",
        "input_fields": ["response"],
        "rule_config": {"pattern": r"\d", "input_field": "response"},
    },
}


def test_a_rule_judge_builds_no_prompt_spec_or_reader() -> None:
    judge = Judge.from_config(RULE)
    assert kind_for(judge.config) is RuleJudge
    table = Engine(judge).run([{"response": "a1"}, {"response": "none"}])
    assert table.column("has_digit.judgment").to_pylist() == [True, False]
    built = set(vars(judge.parts))
    assert not built & {"prompt", "spec", "reader", "scorer", "prompt_hash", "schema_hash"}
