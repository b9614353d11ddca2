"""A judge run through batch files: --emit-batch, the batch run (jurist batch on the scripted backend, as a
hosted batch API would answer it), then --from-batch-results gives the same Arrow table as the direct run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from jurist.backends.scripted import ScriptedBackend
from jurist.cli import app
from jurist.engine.core import Engine
from jurist.openai_batch import BatchRun, Served
from jurist.openai_batch.bodies import EMIT_KINDS, custom_id
from jurist.openai_batch.results import BatchResults
from jurist.openai_batch.shapes import ChatBody, InputLine
from jurist.records import ALL_CONSTRAINT_KINDS, GenerationRequest

CONFIG = {
    "name": "judge",
    "judge_params": {
        "system_instruction": "You judge answers.",
        "prompt_template": "Q: {question}\nA: {answer}",
        "include_explanation": True,
    },
}


def script(request: GenerationRequest) -> str:
    content = request.messages[-1].content
    verdict = "Yes" if "a3" in content or "a5" in content else "No"
    return json.dumps({"explanation": f"{len(content)} characters", "judgment": verdict})


def setup(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    rows = [{"question": f"q{i}", "answer": f"a{i}"} for i in range(10)]
    rows.append({"question": "q3", "answer": "a3"})  # the same request as row 3: one batch line
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return config, data


def cli(*args: Any) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_emit_then_from_batch_results_gives_the_direct_runs_table(tmp_path: Path) -> None:
    config, data = setup(tmp_path)
    direct = tmp_path / "direct.parquet"
    backend = ScriptedBackend(script, constraint_kinds=EMIT_KINDS)
    Engine(str(config), backend, chunk_size=4).run_file(str(data), direct)

    requests = tmp_path / "requests.jsonl"
    said = cli(
        "judge", "dataset", "-c", config, "-i", data, "--emit-batch", requests, "--model", "gpt-4o-mini"
    )
    assert "11 rows -> 11 requests -> 10 batch lines" in said
    lines = [InputLine.model_validate_json(line) for line in requests.read_text().splitlines()]
    bodies = [ChatBody.model_validate(line.body) for line in lines]
    assert {b.model for b in bodies} == {"gpt-4o-mini"}
    assert all(b.response_format is not None and b.response_format.type == "json_schema" for b in bodies)
    assert [line.custom_id for line in lines] == [custom_id(r) for r in backend.requests[:10]]

    results = tmp_path / "results.jsonl"
    served = Served(None, {"gpt-4o-mini": "scripted"}, False, ALL_CONSTRAINT_KINDS)
    summary = BatchRun(lambda: ScriptedBackend(script), served).run(str(requests), results)
    assert summary.answered == 10

    via = tmp_path / "via.parquet"
    cli(
        "judge",
        "dataset",
        "-c",
        config,
        "-i",
        data,
        "-o",
        via,
        "--from-batch-results",
        results,
        "-q",
        "--chunk-size",
        3,
    )
    expected, got = pq.read_table(direct), pq.read_table(via)
    assert got.column("judge.judgment").to_pylist() == [i in (3, 5) for i in range(10)] + [True]
    assert got.replace_schema_metadata(None).equals(expected.replace_schema_metadata(None))


def test_a_request_missing_from_the_results_or_failed_there_is_a_row_error(tmp_path: Path) -> None:
    config, data = setup(tmp_path)
    requests, results = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    cli("judge", "dataset", "-c", config, "-i", data, "--emit-batch", requests, "--limit", 4)
    kept = requests.read_text().splitlines()
    kept[1] = kept[1].replace('"max_tokens":', '"n": 2, "max_tokens":')  # refused by jurist batch
    requests.write_text("\n".join(kept[:3]) + "\n")  # row 3's request is missing from the results
    BatchRun(lambda: ScriptedBackend(script), Served(None, {}, False, ALL_CONSTRAINT_KINDS)).run(
        str(requests), results
    )
    table = Engine(str(config), BatchResults(results)).run(
        [json.loads(x) for x in data.read_text().splitlines()[:4]]
    )
    assert table.column("judge.status").to_pylist()[0] == "ok"
    errors = table.column("judge.error").to_pylist()
    assert "unsupported_parameter" in errors[1]
    assert "no answer for custom_id" in errors[3]
