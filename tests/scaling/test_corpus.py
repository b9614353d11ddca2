"""Runs over a dataset of shards on this machine (the scripted backend): in this process and on data-parallel
workers, each equal row for row to a one-process run over the same shards merged into one file; resuming
after a crash judges only the units not committed; a shard that cannot be read is named and the others
finish; a second run on the output is refused; --limit across shards."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scaling_backends as sb

from corpus_data import make_rows, shard_bytes, write_jsonl, write_shards
from jurist.config.models import JudgeConfig
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.engine.summary import RunSummary
from jurist.errors import BackendError, InputError, JuristError
from jurist.io.dataset import MANIFEST
from jurist.io.lock import OutputLock
from jurist.io.parts import OutputError
from jurist.io.results import ResultTable
from jurist.launch import Placement, launch

JUDGES = (JudgeConfig.model_validate(sb.JUDGE), JudgeConfig.model_validate(sb.PAIR))


def spec(inputs: Any, **options: Any) -> RunSpec:
    given = {"chunk_size": 7, **options}
    limit = given.pop("limit", None)
    return RunSpec(JUDGES, Selection(inputs, limit=limit), RunOptions(**given))


def run(
    inputs: Any, output: Path | str, placement: Placement | None = None, factory: Any = None, **options: Any
) -> RunSummary:
    placement = placement or Placement()
    launched = launch(
        spec(inputs, **options), placement, output=output, backend_factory=factory or sb.scripted_for
    )
    try:
        return launched.run(output)
    finally:
        launched.close()


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """Four JSONL.gz shards and one Parquet shard of several row groups (sliced into units below), and the
    same rows merged into one JSONL file."""
    folder = tmp_path / "corpus"
    every = write_shards(str(folder), 4, 23, "jsonl.gz")
    tail = make_rows(60, len(every))
    (folder / "tail.parquet").write_bytes(shard_bytes(tail, "parquet", row_group=10))
    return folder, write_jsonl(tmp_path / "merged.jsonl", every + tail)


def table(path: Path | str) -> pa.Table:
    return ResultTable.open(path).table


def test_one_process_and_data_parallel_equal_a_run_over_the_merged_file(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, merged = corpus
    whole = tmp_path / "whole.parquet"
    run(str(merged), whole)
    expected = pq.read_table(whole)
    # the Parquet shard in slices of a third of its bytes: several units
    unit_bytes = (folder / "tail.parquet").stat().st_size // 3
    one = run(str(folder), tmp_path / "one", unit_bytes=unit_bytes)
    assert one.rows == 152 and one.units is not None and one.units > 5 and one.requests == 3 * 152
    assert table(tmp_path / "one").equals(expected)
    two = run(f"{folder}/*", tmp_path / "two/", Placement(data_parallel=2), unit_bytes=unit_bytes)
    assert two.rows == 152 and two.judges["p"].statuses["ok"] == 152
    assert table(tmp_path / "two").equals(expected)
    # one shard per unit, named after it, and a manifest with each unit's status and counts
    shards = sorted(p.relative_to(tmp_path / "one").as_posix() for p in (tmp_path / "one").rglob("*.parquet"))
    assert shards[:4] == [f"part-{i:05d}.parquet" for i in range(4)] and shards[4].startswith("tail.0000")
    manifest = json.loads((tmp_path / "one" / MANIFEST).read_text())
    assert manifest["status"] == "complete" and manifest["rows"] == 152
    assert manifest["units"]["part-00001"]["counts"]["judges"]["j"]["statuses"] == {"ok": 23}
    # a file output: the shards merged into it at the end
    merged_out = tmp_path / "merged_out.parquet"
    run(str(folder), merged_out, unit_bytes=unit_bytes)
    assert (
        pq.read_table(merged_out).equals(expected) and not (tmp_path / "merged_out.parquet.shards").exists()
    )
    assert json.loads(pq.read_schema(merged_out).metadata[b"jurist"])["rows"] == 152
    assert run(str(folder), merged_out, unit_bytes=unit_bytes).complete
    # a rerun of a finished run finds it complete; another run is refused unless --overwrite
    assert run(str(folder), tmp_path / "one", unit_bytes=unit_bytes).complete
    with pytest.raises(OutputError, match="different run"):
        run(str(folder), tmp_path / "one")


def test_rows_without_an_id_column_are_named_by_shard_and_position(tmp_path: Path) -> None:
    write_shards(str(tmp_path / "c"), 2, 3, "jsonl", ids=False)
    run(str(tmp_path / "c"), tmp_path / "out")
    ids = table(tmp_path / "out").column("row_id").to_pylist()
    assert ids == [f"part-0000{s}.jsonl:{i}" for s in range(2) for i in range(3)]


def test_a_crashed_run_resumes_with_the_units_not_committed(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, merged = corpus
    run(str(merged), tmp_path / "whole.parquet")
    out = tmp_path / "out"
    # the model goes away after 3 shards' requests (3 requests a row): the run stops, its units kept
    with pytest.raises(BackendError, match="went away"):
        run(str(folder), out, factory=sb.FailingFor(3 * 23 * 3 + 5))
    manifest = json.loads((out / MANIFEST).read_text())
    assert [e["status"] for e in manifest["units"].values()] == ["ok"] * 3 + ["pending"] * 2
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    summary = run(str(folder), out)
    assert summary.resumed_from == 69 and summary.units == 2 and summary.requests == 3 * (152 - 69)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet") if p.name in before} == before
    assert table(out).equals(pq.read_table(tmp_path / "whole.parquet"))


def test_a_shard_that_cannot_be_read_is_named_and_the_others_finish(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    write_shards(str(folder), 3, 10, "jsonl.gz")
    good = (folder / "part-00001.jsonl.gz").read_bytes()
    (folder / "part-00001.jsonl.gz").write_bytes(gzip.compress(shard_bytes(make_rows(3000), "jsonl"))[:4000])
    (folder / "torn.parquet").write_bytes(b"PAR1 and nothing else")
    out = tmp_path / "out"
    summary = run(str(folder), out)
    assert summary.rows == 20 and not summary.complete
    assert set(summary.bad_shards or {}) == {"part-00001.jsonl.gz", "torn.parquet"}
    assert "not a readable Parquet file" in (summary.bad_shards or {})["torn.parquet"]
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["status"] == "incomplete"
    assert {n: e["status"] for n, e in manifest["units"].items()} == {
        "part-00000": "ok", "part-00001": "bad", "part-00002": "ok", "torn": "bad"
    }  # fmt: skip
    assert not (out / "part-00001.parquet").exists()
    # fixed, the rerun judges only those; skipped, the run is complete
    (folder / "part-00001.jsonl.gz").write_bytes(good)
    again = run(str(folder), out, Placement(on_bad_shard="skip"))
    assert (
        again.units == 2
        and again.rows == 10
        and again.bad_shards == {"torn.parquet": again.bad_shards["torn.parquet"]}
    )
    assert json.loads((out / MANIFEST).read_text())["status"] == "complete"
    assert table(out).num_rows == 30


def test_a_second_run_on_the_same_output_is_refused(tmp_path: Path) -> None:
    write_shards(str(tmp_path / "c"), 2, 3, "jsonl")
    out = tmp_path / "out"
    out.mkdir()
    with OutputLock(out / "_jurist"), pytest.raises(OutputError, match="another run is writing this output"):
        run(str(tmp_path / "c"), out)
    assert not (out / MANIFEST).exists()


def test_limit_judges_the_first_rows_across_shards(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    folder, merged = corpus
    run(str(merged), tmp_path / "whole.parquet", limit=30)
    summary = run(str(folder), tmp_path / "out", limit=30)
    assert summary.rows == 30 and summary.units == 2
    assert table(tmp_path / "out").equals(pq.read_table(tmp_path / "whole.parquet"))


def test_what_a_dataset_run_does_not_do_is_refused_before_any_model_loads(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, _ = corpus
    for placement, message in (
        (Placement(retry_failed=True), "--retry-failed runs over one file"),
        (Placement(repair=True), "--repair runs over one file"),
    ):
        with pytest.raises(InputError, match=message):
            launch(spec(str(folder)), placement, output=tmp_path / "o")
    two_models = (
        JUDGES[0],
        JudgeConfig.model_validate(
            {**sb.JUDGE, "name": "k", "inference_config": {"model": {"model_name": "other"}}}
        ),
    )
    with pytest.raises(JuristError, match="a panel of several models runs over a dataset in one process"):
        launch(RunSpec(two_models, Selection(str(folder))), Placement(data_parallel=2), output=tmp_path / "o")
    with pytest.raises(InputError, match="reads its input from storage"):
        launch(spec([{"question": "in memory"}]), Placement(ray="local"))


def test_a_dying_worker_stops_the_run_or_its_unit_goes_to_the_worker_left(tmp_path: Path) -> None:
    from jurist.engine.core import Engine
    from jurist.engine.corpus import CorpusRun
    from jurist.engine.host_parallel import HostPool, OneEngine, WorkerJob
    from jurist.engine.units import InProcess

    folder = tmp_path / "corpus"
    write_shards(str(folder), 5, 10, "jsonl")
    run(str(folder), tmp_path / "whole")
    judge = (JUDGES[0],)  # one request a row: worker 0 dies on its 6th, in its first unit
    for death, out in (("stop", tmp_path / "stopped"), ("continue", tmp_path / "continued")):
        one = RunSpec(judge, Selection(str(folder)), RunOptions(chunk_size=7))
        job = WorkerJob(one, OneEngine(sb.dying_for))
        pool = HostPool(job, 2, on_worker_death=death, envs=[{"JURIST_TEST_DIE_AFTER": "5"}, {}])
        corpus_run = CorpusRun(one, Engine.from_spec(one, backend_factory=sb.scripted_for), out, pool)
        try:
            if death == "stop":
                with pytest.raises(BackendError, match=r"data-parallel worker 0 \(CPU\) exited with code 9"):
                    corpus_run.execute()
                committed = len(list(out.glob("*.parquet")))  # the manifest may not list the last yet
                assert committed < 5
            else:
                assert corpus_run.execute().rows == 50
        finally:
            pool.close()
    expected = table(tmp_path / "whole").select(table(tmp_path / "continued").column_names)
    assert table(tmp_path / "continued").equals(expected)
    engine = Engine.from_spec(one, backend_factory=sb.scripted_for)  # the stopped run, resumed here
    assert CorpusRun(one, engine, tmp_path / "stopped", InProcess(engine)).execute().units == 5 - committed
    assert table(tmp_path / "stopped").equals(expected)


def test_the_command_line_over_a_folder_names_a_bad_shard_and_merges(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from faults.fault_runs import REMOTE_JUDGE
    from faults.fault_servers import fault_server

    folder = tmp_path / "shards"
    write_shards(str(folder), 3, 4, "jsonl")
    (folder / "torn.parquet").write_bytes(b"PAR1 torn")
    config = tmp_path / "judge.yaml"
    config.write_text(REMOTE_JUDGE)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}

    def jurist(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "jurist", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=240, env=env, check=False)

    with fault_server() as server:
        base = ["judge", "dataset", "-c", str(config), "-i", str(folder), "-q"]
        base += ["--inference_config.remote_params.api_url", server.url]
        out = str(tmp_path / "out")
        failed = jurist(*base, "-o", out)
        assert failed.returncode == 4, failed.stderr
        assert "12 rows -> " in failed.stdout
        assert "1 shard(s) could not be read (" in failed.stderr
        assert "torn.parquet: is not a readable Parquet file" in failed.stderr
        skipped = jurist(*base, "-o", out, "--on-bad-shard", "skip")
        assert skipped.returncode == 0, skipped.stderr
        assert "0 rows -> " in skipped.stdout  # the good shards were committed before
        merged = jurist(*base, "-o", str(tmp_path / "one.parquet"), "--on-bad-shard", "skip")
        assert merged.returncode == 0 and not (tmp_path / "one.parquet.shards").exists()
    done = jurist("merge", out, "-o", str(tmp_path / "merged.jsonl"))
    assert done.returncode == 0 and done.stdout.strip() == f"12 rows -> {tmp_path / 'merged.jsonl'}"
    assert pq.read_table(tmp_path / "one.parquet").num_rows == 12
    assert (tmp_path / "merged.jsonl.meta.json").exists()
    again = jurist("merge", out, "-o", str(tmp_path / "merged.jsonl"))
    assert again.returncode == 2 and "already exists" in again.stderr
