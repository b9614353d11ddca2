"""A thinking judge through batch files, one round at a time: --emit-batch writes the reasoning round;
given its results, --emit-batch writes the answer round (each line continuing its reasoning); both
results files then give the direct run's table. `jurist batch` (on the scripted backend) reads the
continued assistant message as the answer's start, and refuses the combinations vLLM refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from jurist.backends.scripted import ScriptedBackend
from jurist.cli import app
from jurist.engine.core import Engine
from jurist.openai_batch import BatchRun, Served
from jurist.openai_batch.requests import Refused, chat_request
from jurist.openai_batch.shapes import ChatBody, InputLine
from jurist.records import ALL_CONSTRAINT_KINDS, Completion, GenerationRequest
from rag_answers import answer

SERVED = Served(None, {}, False, ALL_CONSTRAINT_KINDS)
CONFIG = {
    "name": "judge",
    "judge_params": {
        "prompt_template": "Is {answer} right for {question}?",
        "reasoning": {"budget_tokens": 16},
    },
}


def script(request: GenerationRequest) -> Completion | str:
    """A model that thinks (row a4's thought runs over its budget) and then answers Yes for a3 and a5."""
    content = request.messages[-1].content
    if request.constraint is None:
        assert request.prefix == "<think>"
        if "a4" in content:
            return Completion("and on and on", "length", prompt_tokens=7, completion_tokens=16)
        return f"{content[3:5]} looks {'right' if 'a3' in content or 'a5' in content else 'wrong'}</think>"
    assert request.prefix.startswith("<think>") and request.prefix.endswith("</think>\n")
    return json.dumps({"judgment": "Yes" if "right" in request.prefix else "No"})


def cli(*args: Any, code: int = 0) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    rows = [{"question": f"q{i}", "answer": f"a{i}"} for i in range(8)]
    rows.append({"question": "q3", "answer": "a3"})  # row 3 again: its requests share row 3's lines
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return config, data


def bodies(path: Path) -> list[ChatBody]:
    return [
        ChatBody.model_validate(InputLine.model_validate_json(x).body) for x in path.read_text().splitlines()
    ]


def test_a_thinking_judge_goes_through_batch_files_round_by_round(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    config, data = files
    direct = tmp_path / "direct.parquet"
    Engine(str(config), ScriptedBackend(script)).run_file(str(data), direct)
    judge = ("judge", "dataset", "-c", config, "-i", data)
    run = BatchRun(lambda: ScriptedBackend(script), SERVED)

    first, first_results = tmp_path / "round1.jsonl", tmp_path / "round1.results.jsonl"
    assert "9 rows -> 9 requests -> 8 batch lines" in cli(*judge, "--emit-batch", first)
    thoughts = bodies(first)
    assert all(b.continue_final_message and not b.add_generation_prompt for b in thoughts)
    assert {b.messages[-1].content for b in thoughts} == {"<think>"}
    assert {(b.max_tokens, tuple(b.stop or ()), b.response_format) for b in thoughts} == {
        (16, ("</think>",), None)
    }
    assert run.run(str(first), first_results).answered == 8

    second, second_results = tmp_path / "round2.jsonl", tmp_path / "round2.results.jsonl"
    said = cli(*judge, "--from-batch-results", first_results, "--emit-batch", second)
    assert "9 rows -> 18 requests (9 answered by the results given, 9 not) -> 8 batch lines" in said
    assert f"--from-batch-results {first_results} --from-batch-results RESULTS-OF-round2.jsonl" in said
    answers = bodies(second)
    assert all(b.response_format is not None and b.response_format.type == "json_schema" for b in answers)
    starts = {str(b.messages[-1].content) for b in answers}
    assert "<think>a3 looks right</think>\n" in starts  # the end marker the stop left out is put back
    assert "<think>and on and on</think>\n" in starts  # the cut one is ended, still answered
    assert run.run(str(second), second_results).answered == 8

    done = cli(
        *judge,
        "--from-batch-results",
        first_results,
        "--from-batch-results",
        second_results,
        "--emit-batch",
        tmp_path / "round3.jsonl",
    )
    assert "every one answered by the results given: nothing left to emit" in done
    assert not (tmp_path / "round3.jsonl").exists()

    via = tmp_path / "via.parquet"
    both = ("--from-batch-results", first_results, "--from-batch-results", second_results)
    cli(*judge, "-o", via, *both, "-q")
    got, expected = pq.read_table(via), pq.read_table(direct)
    assert got.column("judge.judgment").to_pylist() == [i in (3, 5) for i in range(8)] + [True]
    assert got.column("judge.reasoning_cut").to_pylist() == [int(i == 4) for i in range(9)]
    assert got.column("judge.reasoning").to_pylist()[5] == "a5 looks right"
    assert got.replace_schema_metadata(None).equals(expected.replace_schema_metadata(None))

    # only the first round's results: each row says which round is missing
    partial = Engine(str(config), _results(first_results)).run([{"question": "q1", "answer": "a1"}])
    assert "belongs to a later round" in partial.column("judge.error").to_pylist()[0]


def _results(*paths: Path) -> Any:
    from jurist.openai_batch.results import BatchResults

    return BatchResults(paths)


def test_a_label_scoring_judge_is_refused_by_emit_batch(files: tuple[Path, Path], tmp_path: Path) -> None:
    config, data = files
    logprobs = {**CONFIG, "judge_params": {**CONFIG["judge_params"], "scoring": "LOGPROBS"}}
    config.write_text(yaml.safe_dump(logprobs))
    result = CliRunner().invoke(
        app,
        ["judge", "dataset", "-c", str(config), "-i", str(data), "--emit-batch", str(tmp_path / "b.jsonl")],
    )
    assert result.exit_code == 2
    assert "scores its labels' log-probabilities, which a batch file's answers do not carry" in result.output


def body(**extra: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Is it true?"}, {"role": "assistant", "content": "<think>Yes"}]
    return {"messages": messages, **extra}


def test_jurist_batch_continues_the_final_assistant_message() -> None:
    request, _ = chat_request(body(continue_final_message=True, add_generation_prompt=False), SERVED)
    assert request.prefix == "<think>Yes"
    assert [m.role for m in request.messages] == ["user"]
    plain, _ = chat_request(body(), SERVED)  # a finished assistant turn: a new turn follows it
    assert plain.prefix == "" and [m.role for m in plain.messages] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("extra", "code", "says"),
    [
        ({"continue_final_message": True}, "invalid_request", "needs add_generation_prompt: false"),
        ({"add_generation_prompt": False}, "unsupported_parameter", "only with continue_final_message"),
        (
            {
                "continue_final_message": True,
                "add_generation_prompt": False,
                "messages": [{"role": "user", "content": "x"}],
            },
            "invalid_request",
            "needs a last assistant message",
        ),
    ],
)
def test_jurist_batch_refuses_a_continuation_it_cannot_honour(
    extra: dict[str, Any], code: str, says: str
) -> None:
    with pytest.raises(Refused) as refused:
        chat_request(body(**extra), SERVED)
    assert refused.value.code == code and says in refused.value.message


def test_a_rag_metric_goes_through_batch_files_round_by_round(tmp_path: Path) -> None:
    """faithfulness: the statements round, then the verification round (rows without contexts or
    statements need no second round)."""
    data = Path(__file__).resolve().parents[2] / "examples" / "rag_qa.jsonl"
    judge = ("judge", "dataset", "-c", "rag/faithfulness", "-i", data, "--limit", 30)
    model = lambda: ScriptedBackend(lambda r: answer(r.messages[-1].content))  # noqa: E731
    run = BatchRun(model, SERVED)
    given: list[Path] = []
    written: list[int] = []
    for number in range(1, 4):
        emitted = tmp_path / f"round{number}.jsonl"
        said = cli(*judge, *(a for p in given for a in ("--from-batch-results", p)), "--emit-batch", emitted)
        if not emitted.exists():
            assert "nothing left to emit" in said
            break
        written.append(len(emitted.read_text().splitlines()))
        given.append(tmp_path / f"round{number}.results.jsonl")
        run.run(str(emitted), given[-1])
    assert len(given) == 2 and written[0] > written[1] > 0

    direct, via = tmp_path / "direct.parquet", tmp_path / "via.parquet"
    Engine("rag/faithfulness", model()).run_file(str(data), direct, limit=30)
    cli(*judge, "-o", via, *(a for p in given for a in ("--from-batch-results", p)), "-q")
    got, expected = pq.read_table(via), pq.read_table(direct)
    assert set(got.column("faithfulness.status").to_pylist()) <= {"ok", "missing_input"}
    assert got.replace_schema_metadata(None).equals(expected.replace_schema_metadata(None))
