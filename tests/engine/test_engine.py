"""Engine logic through the scripted backend: rows in, one Arrow row out per row, statuses, batching."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from jurist import Engine, InputData, Judge, JuristError, ScriptedBackend, load_judge_config
from jurist.errors import InputError
from jurist.records import Completion, GenerationRequest

SIMPLE = {
    "name": "judge",
    "judge_params": {
        "system_instruction": "You judge answers.",
        "prompt_template": "Q: {question}\nA: {answer}",
        "include_explanation": True,
    },
}

RUBRIC = {
    "name": "rubric",
    "judge_params": {"prompt_template": "Q: {question}\nA: {answer}"},
    "rubric_judge_params": {
        "criteria": [
            {"id": "correct", "description": "Is it correct?", "weight": 2.0},
            {
                "id": "style",
                "description": "How is the style?",
                "judgment_type": "ENUM",
                "judgment_scores": {"good": 1.0, "bad": 0.0, "na": None},
                "include_explanation": False,
            },
        ]
    },
}


def answer(judgment: str, explanation: str = "because") -> str:
    return json.dumps({"explanation": explanation, "judgment": judgment})


def rows(n: int) -> list[dict[str, str]]:
    return [{"question": f"q{i}", "answer": f"a{i}"} for i in range(n)]


def test_one_output_row_per_input_row_in_order() -> None:
    backend = ScriptedBackend(lambda r: answer("Yes" if "a3" in r.messages[-1].content else "No"))
    table = Engine(SIMPLE, backend, chunk_size=4).run(rows(10))
    assert table.num_rows == 10
    assert table["row_id"].to_pylist() == [str(i) for i in range(10)]
    assert table["question"].to_pylist() == [f"q{i}" for i in range(10)]
    assert table["judge.judgment"].to_pylist() == [i == 3 for i in range(10)]
    assert table["judge.judgment_score"].to_pylist() == [1.0 if i == 3 else 0.0 for i in range(10)]
    assert table["judge.status"].to_pylist() == ["ok"] * 10
    # 10 rows in chunks of 4: three inference calls, each holding every request of its chunk
    assert backend.calls == [4, 4, 2]


def test_typed_columns_and_provenance() -> None:
    backend = ScriptedBackend([answer("Yes")], cycle=True, model_id="my-model")
    engine = Engine(SIMPLE, backend)
    table = engine.run(rows(2))
    schema = table.schema
    assert schema.field("judge.judgment").type == pa.bool_()
    assert schema.field("judge.judgment_score").type == pa.float64()
    assert schema.field("judge.explanation").type == pa.string()
    judge = engine.judges[0]
    assert table["judge.model"].to_pylist() == ["my-model"] * 2
    assert table["judge.prompt_hash"].to_pylist() == [judge.prompt_hash] * 2
    assert table["judge.schema_hash"].to_pylist() == [judge.schema_hash] * 2
    assert re.fullmatch(r"[0-9a-f]{16}", judge.prompt_hash)
    assert table["judge.raw"].to_pylist() == [answer("Yes")] * 2


def test_prefix_is_identical_for_every_row_and_comes_first() -> None:
    backend = ScriptedBackend([answer("Yes")], cycle=True)
    config = {
        **SIMPLE,
        "judge_params": {
            **SIMPLE["judge_params"],
            "examples": [{"question": "1+1?", "answer": "2", "judgment": "Yes", "explanation": "right"}],
        },
    }
    Engine(config, backend).run(rows(3))
    prefixes = {tuple(m for m in r.messages[:-1]) for r in backend.requests}
    assert len(prefixes) == 1
    prefix = next(iter(prefixes))
    assert [m.role for m in prefix] == ["system", "user", "assistant"]
    assert prefix[0].content.startswith("You judge answers.")
    assert json.loads(prefix[2].content) == {"explanation": "right", "judgment": "Yes"}
    assert [r.messages[-1].content for r in backend.requests] == [f"Q: q{i}\nA: a{i}" for i in range(3)]


def test_requests_carry_constraint_and_token_bound() -> None:
    backend = ScriptedBackend([answer("No")], cycle=True)
    engine = Engine(SIMPLE, backend)
    engine.run(rows(1))
    request = backend.requests[0]
    judge = engine.judges[0]
    assert request.constraint is not None and request.constraint.regex == judge.spec.regex()
    assert request.max_tokens == judge.spec.max_tokens()
    assert request.temperature == 0.0 and request.seed is None


def test_sampling_seed_is_derived_from_row_content() -> None:
    config = {**SIMPLE, "inference_config": {"generation": {"temperature": 0.7, "seed": 3}}}
    first = ScriptedBackend([answer("Yes")], cycle=True)
    Engine(config, first).run(rows(3))
    second = ScriptedBackend([answer("Yes")], cycle=True)
    Engine(config, second).run(list(reversed(rows(3))))
    seeds_first = {r.messages[-1].content: r.seed for r in first.requests}
    seeds_second = {r.messages[-1].content: r.seed for r in second.requests}
    assert seeds_first == seeds_second
    assert len(set(seeds_first.values())) == 3 and all(s is not None for s in seeds_first.values())


def test_missing_value_is_a_row_status_and_rest_goes_on() -> None:
    data = rows(3)
    data[1]["answer"] = None  # type: ignore[assignment]
    del data[2]["question"]
    backend = ScriptedBackend([answer("Yes")], cycle=True)
    table = Engine(SIMPLE, backend).run(data)
    assert table["judge.status"].to_pylist() == ["ok", "missing_input", "missing_input"]
    assert "answer" in table["judge.error"][1].as_py() and "row 1" in table["judge.error"][1].as_py()
    assert "question" in table["judge.error"][2].as_py()
    assert table["judge.judgment"].to_pylist() == [True, None, None]
    assert len(backend.requests) == 1  # nothing was sent for the rows that could not be rendered


def test_missing_column_fails_up_front_naming_it() -> None:
    backend = ScriptedBackend([answer("Yes")], cycle=True)
    with pytest.raises(InputError, match="'answer'"):
        Engine(SIMPLE, backend).run([{"question": "q"}])
    assert backend.requests == []


def test_unparseable_answer_is_parse_error_never_a_verdict() -> None:
    script = ["not json at all", answer("Maybe"), '{"judgment": "Yes"}', answer("Yes")]
    table = Engine(SIMPLE, ScriptedBackend(script)).run(rows(4))
    assert table["judge.status"].to_pylist() == ["parse_error", "parse_error", "parse_error", "ok"]
    assert table["judge.judgment"].to_pylist() == [None, None, None, True]
    assert table["judge.judgment_score"].to_pylist() == [None, None, None, 1.0]
    assert table["judge.raw"].to_pylist() == script
    assert "explanation" in table["judge.error"][2].as_py()


def test_finish_reasons_map_to_statuses() -> None:
    script = [
        Completion('{"explanation": "cut', "length", 10, 5),
        Completion("", "too_long", 99999, 0, error="prompt has 99999 tokens, model allows 2048"),
        Completion("", "error", error="engine exploded"),
        Completion(answer("No"), "stop", 10, 5),
    ]
    table = Engine(SIMPLE, ScriptedBackend(script)).run(rows(4))
    assert table["judge.status"].to_pylist() == ["truncated", "too_long", "backend_error", "ok"]
    assert "99999" in table["judge.error"][1].as_py()
    assert table["judge.prompt_tokens"].to_pylist() == [10, 99999, 0, 10]


def test_backend_exception_marks_its_batch_and_keeps_the_row_count() -> None:
    def explode(request: GenerationRequest) -> str:
        raise RuntimeError("CUDA out of memory")

    table = Engine(SIMPLE, ScriptedBackend(explode), chunk_size=2).run(rows(3))
    assert table.num_rows == 3
    assert table["judge.status"].to_pylist() == ["backend_error"] * 3
    assert "CUDA out of memory" in table["judge.error"][0].as_py()


def test_bad_input_rows_keep_their_place() -> None:
    data = InputData.from_rows(
        [{"question": "q0", "answer": "a0"}, "garbage", {"question": "q2", "answer": "a2"}]
    )  # type: ignore[list-item]
    backend = ScriptedBackend([answer("Yes")], cycle=True)
    table = Engine(SIMPLE, backend).run(data)
    assert table["judge.status"].to_pylist() == ["ok", "bad_input", "ok"]
    assert "not an object" in table["judge.error"][1].as_py()
    assert len(backend.requests) == 2


def test_rubric_columns_scores_and_aggregate() -> None:
    script = [
        json.dumps({"correct_explanation": "x", "correct": "Yes", "style": "bad"}),
        json.dumps({"correct_explanation": "x", "correct": "No", "style": "na"}),
        json.dumps({"correct_explanation": "x", "correct": "Yes", "style": "good"}),
    ]
    table = Engine(RUBRIC, ScriptedBackend(script)).run(rows(3))
    assert table["rubric.correct"].to_pylist() == [True, False, True]
    assert table["rubric.style"].to_pylist() == ["bad", "na", "good"]
    assert table["rubric.style_score"].to_pylist() == [0.0, None, 1.0]
    assert table["rubric.score"].to_pylist() == pytest.approx([2 / 3, 0.0, 1.0])
    assert "rubric.correct_explanation" in table.column_names
    assert "rubric.style_explanation" not in table.column_names


def test_panel_of_judges_shares_one_call_per_chunk() -> None:
    def script(request: GenerationRequest) -> str:
        if "correct" in request.messages[0].content:
            return json.dumps({"correct_explanation": "x", "correct": "Yes", "style": "good"})
        return answer("No")

    backend = ScriptedBackend(script)
    table = Engine([SIMPLE, RUBRIC], backend).run(rows(5))
    assert backend.calls == [10]
    # judge-major: every request of one judge (one shared prefix) before the next judge's
    systems = [r.messages[0].content for r in backend.requests]
    assert systems[:5] == [systems[0]] * 5 and systems[5:] == [systems[5]] * 5 and systems[0] != systems[5]
    assert table["judge.judgment"].to_pylist() == [False] * 5
    assert table["rubric.score"].to_pylist() == [1.0] * 5


def test_duplicate_judge_names_rejected() -> None:
    with pytest.raises(JuristError, match="distinct name"):
        Engine([SIMPLE, SIMPLE], ScriptedBackend([]))


def test_id_column_and_carry_input() -> None:
    data = [{"id": f"x{i}", **r} for i, r in enumerate(rows(3))]
    table = Engine(
        SIMPLE, ScriptedBackend([answer("Yes")], cycle=True), id_column="id", carry_input=False
    ).run(data)
    assert table["row_id"].to_pylist() == ["x0", "x1", "x2"]
    assert "question" not in table.column_names


def test_backend_per_model_from_factory() -> None:
    created: list[str | None] = []

    def factory(config):  # type: ignore[no-untyped-def]
        created.append(config.model.model_name)
        return ScriptedBackend([answer("Yes")], cycle=True, model_id=config.model.model_name or "default")

    a = load_judge_config({**SIMPLE, "name": "a", "inference_config": {"model": {"model_name": "m1"}}})
    b = load_judge_config(
        {
            **SIMPLE,
            "name": "b",
            "inference_config": {"model": {"model_name": "m1"}, "generation": {"temperature": 0.5}},
        }
    )
    c = load_judge_config({**SIMPLE, "name": "c", "inference_config": {"model": {"model_name": "m2"}}})
    table = Engine([a, b, c], backend_factory=factory).run(rows(2))
    assert created == ["m1", "m2"]  # a and b differ only in sampling: one engine
    assert table["c.model"].to_pylist() == ["m2", "m2"]


def test_run_file_writes_parquet_and_summary(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows(5)) + "\n{oops\n")
    out = tmp_path / "out.parquet"
    engine = Engine(SIMPLE, ScriptedBackend([answer("Yes"), answer("No")], cycle=True))
    summary = engine.run_file(src, out)
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table.num_rows == 6
    assert table["judge.status"].to_pylist() == ["ok"] * 5 + ["bad_input"]
    assert "line 6" in table["judge.error"][5].as_py()
    assert summary.rows == 6
    assert summary.judges["judge"].statuses == {"ok": 5, "bad_input": 1}
    assert summary.judges["judge"].score_stats()["mean"] == pytest.approx(3 / 5)
    meta = json.loads(table.schema.metadata[b"jurist"])
    assert meta["judges"][0]["name"] == "judge" and meta["rows"] == 6
    assert not (tmp_path / "out.parquet.partial").exists()


def test_judge_from_builtin_renders_its_fields() -> None:
    judge = Judge.from_config("generic/truthfulness")
    assert judge.required_fields == {"request", "response"}
    messages = judge.render({"request": "What is 2+2?", "response": "4"})
    assert messages[-1].content.count("What is 2+2?") == 1


def test_summary_keeps_model_loading_out_of_the_judging_rate(tmp_path: Path) -> None:
    import time

    def slow_factory(config):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return ScriptedBackend([answer("Yes")], cycle=True)

    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows(4)) + "\n")
    summary = Engine(SIMPLE, backend_factory=slow_factory).run_file(src, tmp_path / "out.parquet")
    assert summary.load_seconds >= 0.3
    assert summary.seconds >= summary.load_seconds
    assert summary.rows_per_second == pytest.approx(4 / summary.judge_seconds)
    assert summary.as_dict()["model_load_seconds"] >= 0.3
