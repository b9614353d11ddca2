"""RAG judge configs: the built-ins, the ``rag_judge_params`` section's checks, rows with bad inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurist import ConfigError, Engine, InputError, ScriptedBackend, list_builtin_judges, load_judge_config
from jurist.judges.judge import Judge
from jurist.judges.rag.kind import RagJudge

METRICS = [
    "answer_correctness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "faithfulness",
    "criteria_score",
]


def rag_config(**params: Any) -> dict[str, Any]:
    return {
        "name": "custom",
        "judge_params": {"prompt_template": "{contexts}\n{question}\n{answer}"},
        "rag_judge_params": {"metric": "faithfulness", **params},
    }


def test_every_metric_is_a_builtin_rag_judge() -> None:
    assert [n for n in list_builtin_judges() if n.startswith("rag/")] == sorted(f"rag/{m}" for m in METRICS)
    for metric in METRICS:
        judge = Judge.from_config(f"rag/{metric}")
        assert isinstance(judge.kind, RagJudge) and judge.name == metric
        assert judge.config.is_rag and judge.config.warnings == []
        suffixes = [c.suffix for c in judge.columns]
        assert suffixes[-8:] == [
            "score",
            "status",
            "error",
            "prompt_tokens",
            "completion_tokens",
            "model",
            "prompt_hash",
            "schema_hash",
        ]
        assert {"undefined", "raw"} <= set(suffixes)


def test_the_builtins_share_their_system_message() -> None:
    systems = {load_judge_config(f"rag/{m}").judge_params.system_instruction for m in METRICS}
    assert len(systems) == 1


def test_prompt_and_schema_hashes_follow_the_steps_not_the_unused_pointwise_spec() -> None:
    base = Judge.from_config(rag_config())
    assert base.prompt_hash == Judge.from_config(rag_config()).prompt_hash
    assert base.prompt_hash != Judge.from_config(rag_config(metric="answer_relevance")).prompt_hash
    assert base.schema_hash != Judge.from_config(rag_config(max_statements=3)).schema_hash
    assert base.prompt_hash == Judge.from_config(rag_config(max_statements=3)).prompt_hash


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (rag_config(metric="bleu"), "unknown metric 'bleu'; known: answer_correctness"),
        (rag_config(max_statement=3), "rag_judge_params.max_statement: unknown key; allowed keys: metric"),
        (rag_config(scale=10), "scale belongs to metric criteria_score, not faithfulness"),
        (rag_config(max_statements=0), "rag_judge_params.max_statements"),
        (
            {**rag_config(), "judge_params": {"prompt_template": "{question}\n{answer}"}},
            "judge_params.prompt_template must show {contexts} to a faithfulness judge",
        ),
        (
            {
                **rag_config(),
                "judge_params": {"prompt_template": "{contexts}{question}{answer}", "judgment_type": "INT"},
            },
            "judge_params.judgment_type is not allowed in a RAG judge",
        ),
        (
            {
                **rag_config(),
                "judge_params": {"prompt_template": "{contexts}{question}{answer}", "response_format": "XML"},
            },
            "judge_params.response_format is not allowed in a RAG judge",
        ),
        (
            {**rag_config(), "pairwise_judge_params": {}},
            "has no rubric_judge_params or pairwise_judge_params",
        ),
        (
            {
                **rag_config(metric="criteria_score", criteria=" "),
                "judge_params": {"prompt_template": "{question}{answer}"},
            },
            "criteria is empty",
        ),
    ],
)
def test_bad_rag_configs_name_the_key(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_judge_config(config)
    assert message in str(caught.value)


def test_dotted_overrides_reach_the_rag_section() -> None:
    config = load_judge_config(
        "rag/criteria_score", {"rag_judge_params.scale": 10, "rag_judge_params.criteria": "is short"}
    )
    assert config.rag_judge_params is not None
    assert (config.rag_judge_params.rating_scale, config.rag_judge_params.criteria) == (10, "is short")


def test_a_dataset_without_an_input_column_is_refused_up_front() -> None:
    with pytest.raises(InputError) as caught:
        Engine("rag/faithfulness", ScriptedBackend([])).run([{"question": "q", "answer": "a"}])
    assert "'contexts' or 'retrieved_contexts' or 'context' or 'documents' (the contexts)" in str(
        caught.value
    )


def test_inputs_come_from_the_candidate_columns() -> None:
    backend = ScriptedBackend(['{"reason": "r", "score": 5}'], cycle=True)
    row = {
        "user_input": "Q?",
        "response": "A.",
        "retrieved_contexts": ["c"],
        "ground_truth": "R",
        "rubric": "x",
    }
    table = Engine("rag/answer_relevance", backend).run([row])
    assert table["answer_relevance.score"].to_pylist() == [1.0]
    prompt = backend.requests[0].messages[-1].content
    assert prompt.startswith("[Question]\nQ?\n\n[Answer]\nA.")


def test_rows_with_bad_or_missing_inputs_get_a_status_never_a_crash() -> None:
    rows: list[dict[str, Any]] = [
        {"question": "q", "answer": "a", "contexts": ["c"] * 17, "reference": "r"},  # too many for precision
        {"question": "q", "answer": None, "contexts": ["c"], "reference": "r"},
        {"question": "q", "answer": "a", "contexts": ["c"], "reference": "r", "error": "timeout"},
        {"question": "q", "answer": "a", "contexts": ["c"], "reference": "r"},
    ]
    backend = ScriptedBackend(['{"verdicts": [{"index": 1, "reason": "r", "verdict": "Yes"}]}'], cycle=True)
    table = Engine("rag/context_precision", backend).run(rows)
    statuses = table["context_precision.status"].to_pylist()
    errors = table["context_precision.error"].to_pylist()
    assert statuses == ["bad_input", "ok", "target_error", "ok"]
    assert "17 contexts; rag_judge_params.max_contexts allows 16" in errors[0]
    assert errors[2] == "the target errored: timeout"
    assert table["context_precision.score"].to_pylist() == [None, 1.0, None, 1.0]
    missing = Engine("rag/faithfulness", backend).run(rows[1:2])
    assert missing["faithfulness.status"].to_pylist() == ["missing_input"]
    assert "answer (answer / response)" in missing["faithfulness.error"].to_pylist()[0]
    untexted = Engine("rag/context_precision", backend).run([{**rows[3], "contexts": [{"title": "t"}]}])
    assert untexted["context_precision.status"].to_pylist() == ["bad_input"]
    assert "context 1 is a dict" in untexted["context_precision.error"].to_pylist()[0]


def test_contexts_saved_as_json_text_are_decoded(tmp_path: Path) -> None:
    data = tmp_path / "rows.csv"
    data.write_text('question,answer,contexts\nq,a,"[""first"", ""second""]"\nq,a,[not json\n')
    backend = ScriptedBackend(['{"statements": []}'], cycle=True)
    Engine("rag/faithfulness", backend).run(str(data))
    prompts = [r.messages[-1].content for r in backend.requests]
    assert "[1] first\n\n[2] second\n\n[Question]" in prompts[0]
    assert "[1] [not json\n\n[Question]" in prompts[1]


def test_a_rag_judge_needs_its_steps_run_by_an_engine() -> None:
    with pytest.raises(TypeError, match="run it with an Engine"):
        Judge.from_config("rag/faithfulness").combine([])


def test_a_rag_judge_describes_its_metric_steps_and_inputs() -> None:
    kind = Judge.from_config("rag/criteria_score", {"rag_judge_params.scale": 7}).kind
    assert isinstance(kind, RagJudge)
    lines = kind.describe()
    assert lines[0] == "RAG metric criteria_score: (rating - 1) / (scale - 1)"
    assert any(line.startswith("reads: question (question / user_input") for line in lines)
    assert lines[-1] == "scale 1-7; criteria: from the row (criteria)"
