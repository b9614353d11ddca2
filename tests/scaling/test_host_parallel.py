"""Data parallel with the host work in the workers (``launch(spec, Placement(data_parallel=N))``): two worker
processes that read, render, parse, score and assemble whole chunks give the one-process output row for
row (bad lines, mixed judges, Parquet input, a row selection), resume a one-process run, report a worker
that cannot load or dies, and with ``on_worker_death="continue"`` finish on the workers left."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scaling_backends as sb

from jurist import ScriptedBackend
from jurist.config.models import JudgeConfig
from jurist.engine.host_parallel import HostParallelBatches, HostPool, WorkerJob
from jurist.engine.run import LocalBatches, RunContext
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import BackendError
from jurist.launch import Launch, Placement, launch

sys.path.insert(0, str(Path(__file__).parents[1] / "faults"))
from dying_workers import mortal_for
from scripted_runs import JUDGE as DYING_JUDGE
from scripted_runs import data_file, rows_of, undisturbed


def configs(*raw: dict[str, object]) -> tuple[JudgeConfig, ...]:
    return tuple(JudgeConfig.model_validate(c) for c in raw)


def nasty_jsonl(path: Path, rows: int = 61) -> Path:
    lines = []
    for i in range(rows):
        row = {
            "id": f"r{i}",
            "question": "q" * (i % 7 + 1) + str(i),
            "response_a": "first",
            "response_b": "x",
        }
        lines.append(json.dumps(row).encode())
    lines[4] = b"{not json"
    lines[9] = b"\xff not utf-8"
    lines[20] = b"[1, 2]"
    lines.insert(30, b"")  # a blank line: no row
    lines[40] = lines[40].replace(b'"question": "', b'"poison": 1, "question": "poison ')
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def run(spec: RunSpec, placement: Placement, output: Path, **kwargs: object) -> tuple[pa.Table, RunSummary]:
    launched = launch(spec, placement, backend_factory=sb.scripted_for)
    try:
        summary = launched.run(output, **kwargs)  # type: ignore[arg-type]
    finally:
        launched.close()
    return pq.read_table(output), summary


@pytest.mark.parametrize("chunk_size", [1, 7, 100])
def test_workers_judging_chunks_equal_one_process(tmp_path: Path, chunk_size: int) -> None:
    source = nasty_jsonl(tmp_path / "rows.jsonl")
    spec = RunSpec(
        configs(sb.JUDGE, sb.PAIR, sb.LABELS), Selection(str(source)), RunOptions(chunk_size=chunk_size)
    )
    assert isinstance(launch(spec, Placement(data_parallel=2)).batches, HostParallelBatches)
    expected, one = run(spec, Placement(), tmp_path / "one.parquet")
    got, two = run(spec, Placement(data_parallel=2), tmp_path / "two.parquet")
    assert got.equals(expected)  # every column and value, bad lines, the poisoned row's error included
    assert got["j.status"].to_pylist().count("bad_input") == 3
    assert (
        got["j.status"][39].as_py() == "backend_error" and "breaks the engine" in got["j.error"][39].as_py()
    )
    for name, counts in one.as_dict()["judges"].items():  # counts, first errors, tokens, scores
        theirs = two.as_dict()["judges"][name]
        assert {k: v for k, v in theirs.items() if k != "score"} == {
            k: v for k, v in counts.items() if k != "score"
        }
        assert theirs["score"] == pytest.approx(counts["score"], rel=1e-12)  # summed per chunk, then merged
    assert (two.rows, two.requests) == (one.rows, one.requests) == (61, one.requests)
    models = json.loads(pq.read_schema(tmp_path / "two.parquet").metadata[b"jurist"])["models"]
    assert models["j"]["data_parallel"] == 2 and len(models["j"]["workers"]) == 2


def test_parquet_input_and_a_row_selection_go_through_the_workers_too(tmp_path: Path) -> None:
    table = pa.table({"question": [f"q{i}" * (i % 3 + 1) for i in range(45)]})
    pq.write_table(table, tmp_path / "rows.parquet")
    for selection in (
        Selection(str(tmp_path / "rows.parquet")),
        Selection(str(tmp_path / "rows.parquet"), limit=30),
    ):
        spec = RunSpec(configs(sb.JUDGE), selection, RunOptions(chunk_size=8))
        expected, _ = run(spec, Placement(), tmp_path / "one.parquet", overwrite=True)
        got, summary = run(spec, Placement(data_parallel=2), tmp_path / "two.parquet", overwrite=True)
        assert got.equals(expected) and summary.rows == (selection.limit or 45)


def test_a_panel_of_two_models_keeps_the_request_level_pool(tmp_path: Path) -> None:
    other = {**sb.LABELS, "name": "m", "inference_config": {"model": {"model_name": "another/model"}}}
    spec = RunSpec(configs(sb.JUDGE, other), Selection(str(nasty_jsonl(tmp_path / "rows.jsonl"))))
    assert type(launch(spec, Placement(data_parallel=2)).batches) is LocalBatches


def test_resumes_a_one_process_run_with_the_same_output(tmp_path: Path) -> None:
    source = nasty_jsonl(tmp_path / "rows.jsonl")
    spec = RunSpec(configs(sb.JUDGE), Selection(str(source)), RunOptions(chunk_size=10))
    whole, _ = run(spec, Placement(), tmp_path / "whole.parquet")
    output = tmp_path / "resumed.parquet"
    model = whole["j.model"][0].as_py()  # the model a real backend names: the same in every part
    broken = launch(spec, backend=ScriptedBackend(sb.failing_after(30), labels=sb.labels, model_id=model))
    with pytest.raises(BackendError):
        broken.run(output)
    got, summary = run(spec, Placement(data_parallel=2), output)
    assert summary.resumed_from == 30 and summary.rows == 31
    assert got.equals(whole)


def test_a_worker_that_cannot_load_names_itself(tmp_path: Path) -> None:
    spec = RunSpec(configs(sb.JUDGE), Selection(str(nasty_jsonl(tmp_path / "rows.jsonl"))))
    launched = launch(spec, Placement(data_parallel=2), backend_factory=sb.cannot_load_for)
    with pytest.raises(BackendError, match=r"data-parallel worker 0 \(.*\): RuntimeError: no model here"):
        launched.run(tmp_path / "out.parquet")
    launched.close()


def dying(spec: RunSpec, on_death: str, die_after: list[int | None]) -> Launch:
    """A launch whose workers die (``os._exit(9)``) after serving the requests ``die_after`` says."""
    envs = [{"JURIST_TEST_DIE_AFTER": str(n)} if n else {} for n in die_after]
    job = WorkerJob(spec, mortal_for)
    pool = HostPool(job, len(envs), on_worker_death=on_death, envs=envs)  # type: ignore[arg-type]
    launched = launch(spec, backend=ScriptedBackend(["unused"]))
    return replace(launched, batches=HostParallelBatches(pool))


def dying_rows(tmp_path: Path) -> tuple[RunSpec, list[tuple[object, ...]]]:
    """The spec of a run over 50 rows in chunks of 10, and what one undisturbed process gives for them."""
    data = data_file(tmp_path)
    spec = RunSpec(configs(DYING_JUDGE), Selection(str(data)), RunOptions(chunk_size=10, max_open_chunks=1))
    return spec, undisturbed(data, tmp_path / "alone.parquet")


def test_a_dying_worker_stops_the_run_naming_it_and_a_rerun_completes(tmp_path: Path) -> None:
    spec, expected = dying_rows(tmp_path)
    out = tmp_path / "out.parquet"
    launched = dying(spec, "stop", [12, None])
    with pytest.raises(BackendError, match=r"data-parallel worker 0 \(CPU\) exited with code 9") as caught:
        launched.run(out)
    launched.close()
    assert "--on-worker-death continue" in str(caught.value) and "rerun the same command" in str(caught.value)
    again = dying(spec, "stop", [None, None])
    again.run(out)
    again.close()
    assert rows_of(out) == expected


def test_with_continue_the_workers_left_finish_the_run(tmp_path: Path) -> None:
    spec, expected = dying_rows(tmp_path)
    out = tmp_path / "out.parquet"
    launched = dying(spec, "continue", [12, None])
    summary = launched.run(out)
    launched.close()
    assert rows_of(out) == expected and summary.rows == 50
    last = dying(spec, "continue", [6, 6])
    with pytest.raises(BackendError, match="exited with code 9, the last one left"):
        last.run(tmp_path / "other.parquet")
    last.close()


def test_a_run_stopped_in_the_parent_stops_its_workers_and_resumes(tmp_path: Path) -> None:
    source = nasty_jsonl(tmp_path / "rows.jsonl")
    spec = RunSpec(configs(sb.JUDGE), Selection(str(source)), RunOptions(chunk_size=10, max_open_chunks=1))
    whole, _ = run(spec, Placement(), tmp_path / "whole.parquet")
    launched = launch(spec, Placement(data_parallel=2), backend_factory=sb.scripted_for)
    batches = launched.batches
    assert isinstance(batches, HostParallelBatches)
    judged = batches.batches

    processes = []

    def interrupted(context: RunContext) -> Iterator[pa.RecordBatch]:
        for number, batch in enumerate(judged(context)):
            if number == 2:
                processes.extend(w.process for w in batches.pool.workers)
                raise KeyboardInterrupt  # Ctrl-C in the parent, two chunks committed
            yield batch

    batches.batches = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        launched.run(tmp_path / "out.parquet")
    assert len(processes) == 2 and all(not p.is_alive() for p in processes) and not batches.pool.workers
    launched.close()
    got, summary = run(spec, Placement(data_parallel=2), tmp_path / "out.parquet")
    assert summary.resumed_from == 20 and got.equals(whole)


def test_each_worker_runs_one_engine_whatever_the_config_asks(tmp_path: Path) -> None:
    """``--data-parallel 2`` on a config with ``engine_params.data_parallel: 3``: two workers, one engine
    each (the placement's count wins, as it does for the request-level pool), not three per worker."""
    pooled = {**sb.JUDGE, "inference_config": {"engine_params": {"data_parallel": 3}}}
    spec = RunSpec(configs(pooled), Selection(str(nasty_jsonl(tmp_path / "rows.jsonl"))))
    launched = launch(spec, Placement(data_parallel=2), backend_factory=sb.one_engine_for)
    summary = launched.run(tmp_path / "out.parquet")
    launched.close()
    assert summary.rows == 61 and summary.judges["j"].statuses["bad_input"] == 3
    models = json.loads(pq.read_schema(tmp_path / "out.parquet").metadata[b"jurist"])["models"]
    assert models["j"]["data_parallel"] == 2
