"""RunSpec and Run: a spec is built once, pickles, and any runner of it resumes what another started."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jurist import Engine, ScriptedBackend
from jurist.config.loading import load_judge_config
from jurist.engine.launch import Placement, start
from jurist.engine.run import LocalBatches, Run
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import JuristError
from jurist.io.parts import OutputError

JUDGE = {"name": "j", "judge_params": {"prompt_template": "{question}", "judgment_type": "BOOL"}}
ANSWER = json.dumps({"judgment": True})


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": f"q{i}"}) + "\n" for i in range(30)))
    return path


def spec_for(source: Path, **options: object) -> RunSpec:
    return RunSpec((load_judge_config(JUDGE),), Selection(str(source), limit=20), RunOptions(**options))  # type: ignore[arg-type]


def test_a_spec_pickles_and_rebuilds_the_same_engine(source: Path) -> None:
    spec = spec_for(source, chunk_size=7, panel=False, carry_input=False)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec
    engine = Engine.from_spec(again, ScriptedBackend([ANSWER], cycle=True))
    assert (engine.chunk_size, engine.carry_input) == (7, False)
    assert engine.spec(spec.rows) == spec


def test_a_run_of_a_spec_and_run_file_share_a_fingerprint(source: Path, tmp_path: Path) -> None:
    spec = spec_for(source, chunk_size=5)
    output = tmp_path / "out.parquet"
    engine = Engine.from_spec(spec, ScriptedBackend([ANSWER], cycle=True))
    summary = Run(spec, engine, output).execute(LocalBatches())
    assert summary.rows == 20 and not summary.complete
    # the same run through the facade finds it complete
    facade = Engine(JUDGE, ScriptedBackend([ANSWER], cycle=True), chunk_size=5)
    again = facade.run_file(source, output, limit=20)
    assert again.complete and again.rows == 20
    assert pq.read_table(output).column("j.status").to_pylist() == ["ok"] * 20
    # another selection is another run: refused
    with pytest.raises(OutputError, match="overwrite"):
        Engine(JUDGE, ScriptedBackend([ANSWER], cycle=True), chunk_size=5).run_file(source, output, limit=10)


def test_launch_chooses_the_batch_source(source: Path) -> None:
    spec = spec_for(source)
    engine, batches = start(spec)
    assert isinstance(batches, LocalBatches) and not batches.retries
    assert start(spec, Placement(retry_failed=True))[1].retries
    with pytest.raises(JuristError, match="without --ray"):
        start(spec, Placement(ray="local", retry_failed=True))
    engine.close()
