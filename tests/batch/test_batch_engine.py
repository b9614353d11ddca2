"""jurist batch on the real vLLM CPU engine (the tiny random-weight model): the mixed file's lines through
the command line, chat on the generation engine and /v1/embeddings on the same model's pooling runner;
every output line of OpenAI's shape, in order."""

from __future__ import annotations

import json
from pathlib import Path

from lines import EXPECTED_ERRORS, mixed_lines, write_lines
from typer.testing import CliRunner

from jurist.cli import app
from jurist.openai_batch.shapes import ChatCompletion, EmbeddingList, OutputLine


def test_a_mixed_file_runs_on_vllm_with_embeddings(tiny_model_dir: Path, tmp_path: Path) -> None:
    embed = {"custom_id": "embed", "method": "POST", "url": "/v1/embeddings", "body": {"input": ["a b", "c"]}}
    lines = [*mixed_lines()[:7], embed, *mixed_lines()[8:]]
    source = write_lines(tmp_path / "in.jsonl", lines)
    output = tmp_path / "out.jsonl"
    model = str(tiny_model_dir)
    args = [
        "batch",
        str(source),
        "-o",
        str(output),
        "-q",
        "--model",
        model,
        "--model-map",
        f"gpt-4o-mini={model}",
    ]
    args += ["--embedding-model", model]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = [OutputLine.model_validate_json(line) for line in output.read_text().splitlines()]
    assert [o.custom_id for o in out][:4] == ["plain", "schema", "object", "logprobs"]
    assert len(out) == len(lines)
    for number, line in enumerate(out):
        expected = None if number == 7 else EXPECTED_ERRORS.get(number)
        assert (line.error.code if line.error else None) == expected, line
    for line in out[:4]:
        assert line.response is not None
        body = ChatCompletion.model_validate(line.response.body)
        assert body.model == model and body.usage.completion_tokens > 0
    logprobs = ChatCompletion.model_validate(out[3].response.body).choices[0].logprobs  # type: ignore[union-attr]
    assert logprobs is not None and logprobs.content
    assert all(1 <= len(step.top_logprobs) <= 2 for step in logprobs.content)
    assert out[0].response.body["usage"]["completion_tokens"] <= 8  # type: ignore[union-attr]
    embeddings = EmbeddingList.model_validate(out[7].response.body)  # type: ignore[union-attr]
    assert [len(e.embedding) for e in embeddings.data] == [128, 128]  # the tiny model's hidden size
    assert embeddings.data[0].embedding != embeddings.data[1].embedding
    metadata = json.loads((tmp_path / "out.jsonl.meta.json").read_text())
    assert metadata["models"]["chat"]["engine"] == "vllm" and metadata["rows"] == len(lines)
