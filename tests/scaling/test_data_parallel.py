"""Data parallel on one box: worker processes behind one streaming backend give the single-process output row
for row (scripted backend), resume a single-process run, narrow a failing batch down, and report a worker
that cannot load its model. The tiny random model on two vLLM CPU workers gives every row once, in order."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import scaling_backends as sb

from installed import have
from jurist import Engine, ScriptedBackend
from jurist.backends import create_backend
from jurist.backends.base import StreamingBackend
from jurist.backends.parallel.pool import DataParallelBackend, data_parallel_factory, placements, split_config
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError, ConfigError


def rows(n: int, poison: int | None = None) -> list[dict[str, Any]]:
    return [
        {
            "question": ("poison " if i == poison else "") + "q" * (i % 7 + 1) + str(i),
            "response_a": "first",
            "response_b": "second",
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def pool() -> Iterator[DataParallelBackend]:
    backend = DataParallelBackend(sb.scripted, 2)
    yield backend
    backend.close()


def single() -> ScriptedBackend:
    return ScriptedBackend(sb.answer, labels=sb.labels)


@pytest.mark.parametrize(("size", "open_chunks"), [(1, 1), (7, 2), (50, 4)])
def test_two_workers_equal_the_single_process_run(
    pool: DataParallelBackend, size: int, open_chunks: int
) -> None:
    assert isinstance(pool, StreamingBackend)
    expected = Engine([sb.JUDGE, sb.PAIR], single(), chunk_size=size).run(rows(43))
    got = Engine([sb.JUDGE, sb.PAIR], pool, chunk_size=size, max_open_chunks=open_chunks).run(rows(43))
    assert got.equals(expected)
    assert got["row_id"].to_pylist() == [str(i) for i in range(43)]


def test_a_small_chunk_reaches_every_worker() -> None:
    workers = DataParallelBackend(sb.scripted_for_worker, 2)
    try:
        table = Engine(sb.JUDGE, workers, chunk_size=100).run(rows(40))
        assert table["j.status"].to_pylist() == ["ok"] * 40
        assert sorted(set(table["j.model"].to_pylist())) == ["scripted"]
        served = workers._each("served")
        assert len(served) == 2 and all(n >= 16 for n in served) and sum(served) == 40
    finally:
        workers.close()


def test_label_scoring_is_spread_and_kept_in_order(pool: DataParallelBackend) -> None:
    expected = Engine(sb.LABELS, single(), chunk_size=10).run(rows(25))
    got = Engine(sb.LABELS, pool, chunk_size=10).run(rows(25))
    assert got.equals(expected)
    assert got["l.judgment_confidence"].null_count == 0


def test_a_failing_request_fails_alone(pool: DataParallelBackend) -> None:
    table = Engine(sb.JUDGE, pool, chunk_size=8, max_open_chunks=2).run(rows(40, poison=11))
    statuses = table["j.status"].to_pylist()
    assert statuses[11] == "backend_error"
    assert "breaks the engine" in table["j.error"][11].as_py()
    assert statuses.count("ok") == 39
    # the pool still serves the next run
    assert Engine(sb.JUDGE, pool).run(rows(5))["j.status"].to_pylist() == ["ok"] * 5


def test_resumes_a_single_process_run_with_the_same_output(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows(60)))
    whole = tmp_path / "whole.parquet"
    Engine(sb.JUDGE, chunk_size=10, backend_factory=sb.scripted_for).run_file(source, whole)

    stops_after_three_chunks = sb.failing_after(30)  # 3 chunks of 10
    output = tmp_path / "resumed.parquet"
    with pytest.raises(BackendError):
        Engine(
            sb.JUDGE, chunk_size=10, backend_factory=lambda _: ScriptedBackend(stops_after_three_chunks)
        ).run_file(source, output)
    with Engine(sb.JUDGE, chunk_size=10, backend_factory=data_parallel_factory(2, sb.scripted_for)) as engine:
        summary = engine.run_file(source, output)
        described = engine.describe_models()["j"]
    assert summary.resumed_from == 30
    assert summary.requests == 30
    assert pq.read_table(output).equals(pq.read_table(whole))
    assert described["data_parallel"] == 2


def test_optional_methods_reach_every_worker(pool: DataParallelBackend) -> None:
    assert pool.prefix_cache_stats() is None  # the scripted engines keep no cache
    pool.reset_prefix_cache()  # nothing to reset: no error either
    described = pool.describe()
    assert described["data_parallel"] == 2 and len(described["workers"]) == 2
    assert described["engine"] == "scripted"  # the first worker's own description


def test_a_worker_that_cannot_load_names_itself() -> None:
    with pytest.raises(BackendError, match=r"data-parallel worker 0 .*RuntimeError: no model here"):
        DataParallelBackend(sb.cannot_load, 2)


def test_engine_params_data_parallel_is_jurist_s_own() -> None:
    config = InferenceConfig.model_validate(
        {"engine": "NATIVE", "engine_params": {"data_parallel": 3, "batch_size": 4}}
    )
    inner, workers = split_config(config)
    assert (workers, inner.engine_params) == (3, {"batch_size": 4})
    with pytest.raises(ConfigError, match="data_parallel"):
        split_config(InferenceConfig.model_validate({"engine_params": {"data_parallel": 0}}))
    with pytest.raises(ConfigError, match="needs a GPU per engine; 2 visible"):
        placements(3, gpus=["0", "1"])
    assert placements(2, gpus=["3", "5"]) == [{"CUDA_VISIBLE_DEVICES": "3"}, {"CUDA_VISIBLE_DEVICES": "5"}]
    # tensor parallel 2 on each of 2 engines: 4 GPUs split 2 and 2
    four = placements(2, gpus=["0", "1", "2", "3"])
    assert four == [{"CUDA_VISIBLE_DEVICES": "0,1"}, {"CUDA_VISIBLE_DEVICES": "2,3"}]


@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
def test_tiny_model_on_two_vllm_workers_from_the_command_line(tiny_model_dir: Path, tmp_path: Path) -> None:
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        "judge_params:\n  prompt_template: 'Question: {question}'\n  include_explanation: true\n"
        "  max_explanation_chars: 30\n"
        "inference_config:\n  engine_params: {gpu_memory_utilization: 0.05}\n"
    )
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({"question": f"What is {i} plus {i}?"}) + "\n" for i in range(24)))
    output = tmp_path / "out.parquet"
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(judge), "-i", str(source),
        "-o", str(output), "--model", str(tiny_model_dir), "--data-parallel", "2", "--chunk-size", "5", "-q",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode in (0, 3), done.stderr[-3000:]
    table = pq.read_table(output)
    assert table["row_id"].to_pylist() == [str(i) for i in range(24)]
    assert table["question"].to_pylist() == [f"What is {i} plus {i}?" for i in range(24)]
    assert set(table["judge.status"].to_pylist()) <= {"ok", "truncated", "parse_error"}
    metadata = json.loads(pq.read_schema(output).metadata[b"jurist"])
    assert metadata["models"]["judge"]["data_parallel"] == 2


def test_create_backend_reads_data_parallel() -> None:
    with pytest.raises(BackendError, match="data-parallel worker"):
        create_backend(
            InferenceConfig.model_validate(
                {
                    "engine": "NATIVE",
                    "model": {"model_name": "/nonexistent"},
                    "engine_params": {"data_parallel": 2},
                }
            )
        )
