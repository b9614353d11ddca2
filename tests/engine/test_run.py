"""RunSpec and Run: a spec is built once, pickles, and any runner of it resumes what another started."""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jurist import Engine, ScriptedBackend
from jurist.config.loading import load_judge_config
from jurist.engine.ray_units import RayExecutor
from jurist.engine.run import LocalBatches, RetryBatches, Run
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import JuristError
from jurist.io.parts import OutputError, read_metadata
from jurist.launch import Placement, emit, launch
from jurist.openai_batch.results import BatchResults

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


def test_launch_chooses_the_batch_source(source: Path, tmp_path: Path) -> None:
    spec = spec_for(source)
    launched = launch(spec)
    assert type(launched.batches) is LocalBatches and type(launched.engine) is Engine
    assert isinstance(launch(spec, Placement(retry_failed=True)).batches, RetryBatches)
    assert isinstance(launch(spec, Placement(ray="local")).executor, RayExecutor)  # a dataset run, on Ray
    with pytest.raises(JuristError, match="without --ray"):
        launch(spec, Placement(ray="local", retry_failed=True))
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"custom_id": "r0", "response": None, "error": {"message": "x"}}) + "\n")
    with_answers = replace(spec, answers=(answers,))
    assert isinstance(launch(with_answers).engine.shared_backend, BatchResults)
    for placement in (Placement(ray="local"), Placement(data_parallel=2)):
        with pytest.raises(JuristError, match="--from-batch-results reads its answers on this machine"):
            launch(with_answers, placement)
    with pytest.raises(JuristError, match="--emit-batch writes the requests and judges nothing: drop --ray"):
        emit(spec, tmp_path / "requests.jsonl", Placement(ray="local"))
    launched.close()


def test_the_fingerprint_comes_from_the_spec_alone(source: Path, tmp_path: Path) -> None:
    """A spec's fingerprint is what a run records; a batch results file and a cascade's thresholds are in
    it, and a panel's default quorum is the quorum a panel of that size takes."""
    spec = spec_for(source, chunk_size=5)
    output = tmp_path / "out.parquet"
    Run(spec, Engine.from_spec(spec, ScriptedBackend([ANSWER], cycle=True)), output).execute()
    identity = spec.rows.open(None).identity()
    assert read_metadata(output)["fingerprint"] == spec.fingerprint(identity)
    # the hash results written before the spec held it are stamped with: they still resume
    options = {"limit": 20, "sample": None, "seed": None, "carry_input": True, "id_column": None}
    payload = {
        "judges": [c.model_dump(mode="json") for c in spec.judges],
        "input": identity,
        "options": {**options, "panel": None, "calibrations": []},
    }
    stamped = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]
    assert spec.fingerprint(identity) == stamped
    answers = tmp_path / "answers.jsonl"
    answers.write_text("{}\n")
    assert replace(spec, answers=(answers,)).fingerprint(identity) != spec.fingerprint(identity)
    two = replace(spec, judges=(spec.judges[0], spec.judges[0].model_copy(update={"name": "k"})))
    panel = replace(two, options=replace(two.options, panel=True))
    quorum = replace(panel, options=replace(panel.options, quorum=2))
    assert panel.fingerprint(identity) == quorum.fingerprint(identity)  # two judges: a majority is 2


def test_the_front_door_refuses_engine_params_the_engine_does_not_take(source: Path, tmp_path: Path) -> None:
    """Before any model loads, for a run and for writing its requests; a backend given takes the configs'
    place, so their engine settings are not read."""
    bad = {**JUDGE, "inference_config": {"engine_params": {"flux": 1}}}
    spec = RunSpec((load_judge_config(bad),), Selection(str(source), limit=5))
    with pytest.raises(JuristError, match=r"inference_config\.engine_params: flux: unknown key"):
        launch(spec)
    with pytest.raises(JuristError, match="flux: unknown key"):
        emit(spec, tmp_path / "requests.jsonl")
    assert not (tmp_path / "requests.jsonl").exists()
    summary = launch(spec, backend=ScriptedBackend([ANSWER], cycle=True)).run(tmp_path / "out.parquet")
    assert summary.rows == 5
