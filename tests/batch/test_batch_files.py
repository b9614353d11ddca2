"""jurist batch on the scripted backend: one OpenAI-shaped output line per input line, in order; what the
engine is sent; compressed input and stdin; resuming; the command line."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from lines import EXPECTED_ERRORS, SCHEMA, answer, chat, mixed_lines, write_lines
from typer.testing import CliRunner

from jurist.backends.base import Backend
from jurist.backends.schema_regex import compile_schema
from jurist.backends.scripted import ScriptedBackend, ScriptedStreamingBackend
from jurist.cli import app
from jurist.io.lock import OutputLock
from jurist.openai_batch import BatchRun, Served
from jurist.openai_batch.reading import BUFFER_IDS, SeenIds
from jurist.openai_batch.shapes import ChatCompletion, EmbeddingList, OutputLine
from jurist.records import ALL_CONSTRAINT_KINDS, GenerationRequest

SERVED = Served(model=None, model_map={}, embeddings=False, constraint_kinds=ALL_CONSTRAINT_KINDS)


def read_output(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(
    backend: Backend, source: Path | str, output: Path, served: Served = SERVED, **kwargs: Any
) -> list[dict[str, Any]]:
    BatchRun(lambda: backend, served, **kwargs).run(str(source), output)
    return read_output(output)


@pytest.mark.parametrize("streaming", [False, True])
def test_every_line_gets_one_openai_shaped_output_line_in_input_order(
    tmp_path: Path, streaming: bool
) -> None:
    source = write_lines(tmp_path / "in.jsonl", mixed_lines())
    backend_type = ScriptedStreamingBackend if streaming else ScriptedBackend
    backend = backend_type(answer, window=3) if streaming else backend_type(answer)
    out = run(backend, source, tmp_path / "out.jsonl", chunk_size=3, max_open=2)
    ids = ["plain", "schema", "object", "logprobs", None, "plain", "legacy", "embed", "two", "image"]
    assert [line["custom_id"] for line in out] == ids
    for number, line in enumerate(out):
        parsed = OutputLine.model_validate(line)
        if number in EXPECTED_ERRORS:
            assert parsed.response is None and parsed.error is not None
            assert parsed.error.code == EXPECTED_ERRORS[number], line
            assert f"line {number + 1}" in parsed.error.message
        else:
            assert parsed.error is None and parsed.response is not None
            assert parsed.response.status_code == 200
            body = ChatCompletion.model_validate(parsed.response.body)
            usage = body.usage
            assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0
    assert len({line["id"] for line in out}) == len(out)
    schema_answer = json.loads(out[1]["response"]["body"]["choices"][0]["message"]["content"])
    assert set(schema_answer) == set(SCHEMA["required"])
    logprobs = out[3]["response"]["body"]["choices"][0]["logprobs"]["content"]
    assert [step["token"] for step in logprobs] == ["ye", "s"]
    for step in logprobs:
        assert step["logprob"] == -0.25
        assert [t["logprob"] for t in step["top_logprobs"]] == [-0.25, -1.5]  # top 2, best first
        assert bytes(step["bytes"]).decode() == step["token"]
    assert out[0]["response"]["body"]["choices"][0]["logprobs"] is None


def test_the_engine_gets_each_body_as_a_generation_request(tmp_path: Path) -> None:
    backend = ScriptedBackend(answer)
    run(backend, write_lines(tmp_path / "in.jsonl", mixed_lines()), tmp_path / "out.jsonl")
    plain, schema, obj, logprobs = backend.requests
    assert plain.max_tokens == 8 and plain.temperature == 0.0 and plain.constraint is None
    assert plain.messages[0].role == "user" and plain.messages[0].content == "Say hello."
    assert schema.max_tokens == 40 and schema.temperature == 1.0  # OpenAI's default temperature
    # each schema as its regex with no free whitespace
    assert schema.constraint is not None and schema.constraint.regex == compile_schema(SCHEMA).regex
    assert obj.constraint is not None and obj.constraint.regex == compile_schema({"type": "object"}).regex
    assert logprobs.logprobs == 2 and plain.logprobs is None


def test_a_body_field_jurist_cannot_honour_is_refused_by_name(tmp_path: Path) -> None:
    lines = [
        chat("a", "x", temperature=3),
        chat("b", "x", top_logprobs=2),
        chat("c", "x", tools=[{"type": "function"}]),
        {**chat("d", "x"), "method": "GET"},
        chat("e", "x", messages=[{"role": "tool", "content": "x"}]),
        chat("f", "x", response_format={"type": "json_schema", "json_schema": {"name": "n"}}),
        chat("g", "x", stop="\n", seed=3, max_tokens=None),
    ]
    backend = ScriptedBackend(answer)
    out = run(backend, write_lines(tmp_path / "in.jsonl", lines), tmp_path / "out.jsonl")
    messages = [line["error"]["message"] if line["error"] else None for line in out]
    assert "body.temperature" in messages[0]
    assert "logprobs" in messages[1]
    assert "body.tools" in messages[2]
    assert "method" in messages[3]
    assert "'tool'" in messages[4]
    assert "schema is required" in messages[5]
    assert messages[6] is None
    (request,) = backend.requests
    assert request.stop == ("\n",) and request.seed == 3 and request.max_tokens == SERVED.default_max_tokens


def test_model_map_sends_mapped_models_and_refuses_others(tmp_path: Path) -> None:
    served = Served(None, {"gpt-4o-mini": "./local"}, False, ALL_CONSTRAINT_KINDS)
    lines = [chat("a", "x"), chat("b", "x", model="gpt-4o")]
    out = run(
        ScriptedBackend(answer), write_lines(tmp_path / "in.jsonl", lines), tmp_path / "o.jsonl", served
    )
    assert out[0]["error"] is None
    assert out[1]["error"]["code"] == "model_not_found" and "gpt-4o" in out[1]["error"]["message"]


def test_an_engine_that_enforces_no_schema_refuses_response_format(tmp_path: Path) -> None:
    served = Served(None, {}, False, ("choice",))
    out = run(
        ScriptedBackend(answer),
        write_lines(tmp_path / "in.jsonl", mixed_lines()),
        tmp_path / "o.jsonl",
        served,
    )
    assert out[1]["error"]["code"] == out[2]["error"]["code"] == "unsupported_parameter"
    assert out[0]["error"] is None


def test_an_engine_of_regexes_only_serves_the_schemas_a_regex_holds(tmp_path: Path) -> None:
    recursive = {
        "$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    lines = [
        *mixed_lines()[:3],
        chat(
            "tree",
            "x",
            response_format={"type": "json_schema", "json_schema": {"name": "t", "schema": recursive}},
        ),
    ]
    out = run(
        ScriptedBackend(answer),
        write_lines(tmp_path / "in.jsonl", lines),
        tmp_path / "o.jsonl",
        Served(None, {}, False, ("regex",)),
    )
    assert [line["error"] for line in out[:3]] == [None, None, None]
    assert out[3]["error"]["code"] == "unsupported_parameter"
    assert "recursive $ref" in out[3]["error"]["message"]


class Embedder:
    """A scripted pooling model: the text's length and vowel count; a text 'fail' makes it raise."""

    model_id = "scripted-embedder"

    def embed(self, texts: Sequence[str]) -> list[tuple[list[float], int]]:
        if "fail" in texts:
            raise ValueError("cannot embed 'fail'")
        return [([float(len(t)), float(sum(c in "aeiou" for c in t))], len(t.split())) for t in texts]

    def close(self) -> None:
        pass


def test_embedding_lines_run_on_the_pooling_model_and_a_failing_line_fails_alone(tmp_path: Path) -> None:
    def embedding(custom_id: str, value: str | list[str]) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": "/v1/embeddings", "body": {"input": value}}

    lines = [embedding("a", "hello"), embedding("b", ["one two", "three"]), embedding("c", "fail")]
    served = Served(None, {}, True, ALL_CONSTRAINT_KINDS)
    backend = ScriptedBackend(answer)
    source = write_lines(tmp_path / "in.jsonl", lines)
    BatchRun(lambda: backend, served, embedder=Embedder).run(str(source), tmp_path / "o.jsonl")
    out = read_output(tmp_path / "o.jsonl")
    first = EmbeddingList.model_validate(out[0]["response"]["body"])
    assert first.data[0].embedding == [5.0, 2.0] and first.usage.prompt_tokens == 1
    second = EmbeddingList.model_validate(out[1]["response"]["body"])
    assert [d.embedding for d in second.data] == [[7.0, 3.0], [5.0, 2.0]] and second.usage.prompt_tokens == 3
    assert out[2]["error"]["code"] == "engine_error" and "cannot embed" in out[2]["error"]["message"]
    assert backend.calls == []  # no chat line: the chat model never loaded


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_compressed_input_gives_the_same_answers(tmp_path: Path, compression: str) -> None:
    plain = write_lines(tmp_path / "in.jsonl", mixed_lines())
    suffix = ".gz" if compression == "gzip" else ".zst"
    packed = tmp_path / f"in.jsonl{suffix}"
    with pa.output_stream(str(packed), compression=compression) as stream:
        stream.write(plain.read_bytes())
    if compression == "gzip":
        assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()

    def answers(path: Path) -> list[Any]:
        out = run(ScriptedBackend(answer), path, tmp_path / f"{path.name}.out.jsonl")
        return [
            (o["custom_id"], (o["response"] or {}).get("body", {}).get("choices"), o["error"]) for o in out
        ]

    unzipped = [(c, r, e and e["code"]) for c, r, e in answers(plain)]
    assert [(c, r, e and e["code"]) for c, r, e in answers(packed)] == unzipped


def test_a_finished_run_is_found_complete_and_sends_nothing(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "in.jsonl", mixed_lines())
    run(ScriptedBackend(answer), source, tmp_path / "out.jsonl")
    first = (tmp_path / "out.jsonl").read_text()
    again = ScriptedBackend(answer)
    summary = BatchRun(lambda: again, SERVED).run(str(source), tmp_path / "out.jsonl")
    assert summary.complete and summary.lines == 10 and again.requests == []
    assert (tmp_path / "out.jsonl").read_text() == first


class Interrupting(ScriptedBackend):
    """Answers ``calls`` batches, then raises KeyboardInterrupt (as Ctrl-C would)."""

    def __init__(self, calls: int) -> None:
        super().__init__(answer)
        self.left = calls

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return super().generate(requests)


def test_an_interrupted_run_resumes_after_its_committed_lines(tmp_path: Path) -> None:
    lines = [chat(f"id-{i}", f"line {i}") for i in range(25)]
    source = write_lines(tmp_path / "in.jsonl", lines)
    output = tmp_path / "out.jsonl"
    first = Interrupting(calls=2)
    with pytest.raises(KeyboardInterrupt):
        BatchRun(lambda: first, SERVED, chunk_size=4).run(str(source), output)
    second = ScriptedBackend(answer)
    summary = BatchRun(lambda: second, SERVED, chunk_size=4).run(str(source), output)
    assert summary.resumed_from == 8 and summary.lines == 25
    sent_again = [r.messages[0].content for r in second.requests]
    assert sent_again == [f"line {i}" for i in range(8, 25)]
    out = read_output(output)
    assert [o["custom_id"] for o in out] == [f"id-{i}" for i in range(25)]
    assert all(
        o["response"]["body"]["choices"][0]["message"]["content"] == f"echo line {i}"
        for i, o in enumerate(out)
    )


def test_a_duplicate_of_a_committed_line_is_still_found_after_resuming(tmp_path: Path) -> None:
    lines = [chat(f"id-{i}", f"line {i}") for i in range(6)] + [chat("id-1", "again")]
    source = write_lines(tmp_path / "in.jsonl", lines)
    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        BatchRun(lambda: Interrupting(calls=1), SERVED, chunk_size=3).run(str(source), output)
    run(ScriptedBackend(answer), source, output, chunk_size=3)
    assert read_output(output)[-1]["error"]["code"] == "duplicate_custom_id"


def test_seen_ids_agree_with_a_set_across_merges() -> None:
    rng = random.Random(7)
    ids = [f"req-{rng.randrange(3 * BUFFER_IDS)}" for _ in range(2 * BUFFER_IDS + 5000)]
    seen, reference = SeenIds(), set()
    for custom_id in ids:
        assert (custom_id in seen) == (custom_id in reference)
        if custom_id not in reference:
            seen.add(custom_id)
            reference.add(custom_id)
    assert len(seen) == len(reference)


# --------------------------------------------------------------------------------------------- CLI
def test_cli_a_file_of_bad_lines_runs_without_loading_a_model_and_exits_3(tmp_path: Path) -> None:
    lines = [line for number, line in enumerate(mixed_lines()) if number in EXPECTED_ERRORS and number != 5]
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["batch", "-", "-o", str(output), "-q"], input=text)
    assert result.exit_code == 3, result.output
    assert "no line was answered" in result.output
    out = read_output(output)
    assert len(out) == len(lines) and all(OutputLine.model_validate(o).error for o in out)
    info = CliRunner().invoke(app, ["info", str(output)])
    assert info.exit_code == 0, info.output
    assert "<stdin>" in info.output


def test_cli_a_second_run_on_a_held_output_exits_2_naming_the_holder(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    (tmp_path / "in.jsonl").write_text(json.dumps(chat("r1", "Is water wet?")) + "\n")
    with OutputLock(output):  # another run writing this output
        result = CliRunner().invoke(app, ["batch", str(tmp_path / "in.jsonl"), "-o", str(output), "-q"])
    assert result.exit_code == 2, result.output
    assert "another run is writing this output" in result.output and "pid" in result.output
    assert not output.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["batch", "missing.jsonl", "-o", "out.jsonl"], "no such file"),
        (["batch", "in.jsonl", "-o", "out.parquet"], "JSON Lines"),
        (["batch", "in.jsonl", "-o", "out.jsonl", "--model-map", "nope"], "NAME=VALUE"),
        (["batch", "in.jsonl", "-o", "out.jsonl", "--model", "a", "--model-map", "x=b"], "one chat model"),
    ],
)
def test_cli_usage_errors_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_lines(tmp_path / "in.jsonl", mixed_lines())
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
