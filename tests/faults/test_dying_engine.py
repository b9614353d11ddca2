"""A dying engine: vLLM's engine process or a data-parallel worker killed mid-run stops the run with exit 2
and a message naming it, the committed chunks are kept, and a rerun completes with every row once; with
``--on-worker-death continue`` a data-parallel run goes on with the workers left."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest
from dying_workers import mortal, mortal_for
from fault_runs import committed_parts, finish, ids_once, judge_args, jurist, setup, start, wait_for
from scripted_runs import JUDGE, data_file, engine, rows_of, undisturbed

from jurist.backends.parallel.pool import DataParallelBackend
from jurist.errors import BackendError

TINY_JUDGE = """\
judge_params:
  prompt_template: "Question: {question}"
  include_explanation: true
  max_explanation_chars: 30
inference_config:
  engine_params: {gpu_memory_utilization: 0.05, enforce_eager: true}
"""


def tiny_run_args(tiny_model_dir: Path, tmp_path: Path, rows: int) -> tuple[list[str], Path]:
    """The arguments of a run of ``rows`` rows on the tiny model in chunks of 8, and its output."""
    config = tmp_path / "judge.yaml"
    config.write_text(TINY_JUDGE)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} plus {i}?"}) + "\n" for i in range(rows)))
    out = tmp_path / "out.parquet"
    return judge_args(config, data, out, "--model", str(tiny_model_dir), "--chunk-size", "8"), out


def engine_core(pid: int) -> psutil.Process | None:
    """vLLM's engine-core process among ``pid``'s descendants."""
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "EngineCore" in child.name() or "EngineCore" in " ".join(child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


@pytest.mark.engine
@pytest.mark.slow  # an engine process dying mid-run, exit 2 and a rerun resuming: in the default tier with a
# data-parallel worker (test_a_dying_data_parallel_worker_stops_the_run_naming_it)
def test_killing_vllm_s_engine_process_exits_2_and_a_rerun_completes(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    args, out = tiny_run_args(tiny_model_dir, tmp_path, 400)
    # the engine core in a process of its own, as on GPUs (jurist keeps it in-process on CPU by default)
    run = start(*args, env={"VLLM_ENABLE_V1_MULTIPROCESSING": "1"})
    try:
        wait_for(lambda: committed_parts(out) >= 2, "two committed chunks", limit=600)
        core = engine_core(run.pid)
        assert core is not None, "no EngineCore process"
        core.send_signal(signal.SIGKILL)
        _, err = finish(run, 300, out)  # a hang fails with its stacks
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate(timeout=60)
    assert run.returncode == 2, err[-3000:]
    assert "vLLM's engine process (EngineCore) died" in err and "rerun the same command to resume" in err
    kept = committed_parts(out)
    assert kept >= 2
    rerun = jurist(*args, timeout=900)
    assert rerun.returncode in (0, 3), rerun.stderr[-3000:]
    assert "resumed after" in rerun.stdout
    ids_once(out, 400)


@pytest.mark.engine
@pytest.mark.slow  # the stall is also found on a scripted engine in the default tier (test_watchdog)
def test_an_engine_process_that_stops_answering_is_reported_as_stalled(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """SIGSTOP on vLLM's engine core: it neither answers nor dies. The watchdog's bound (5 s here) ends the
    run with exit 2 naming the stall, the committed chunks are kept, and a rerun completes."""
    args, out = tiny_run_args(tiny_model_dir, tmp_path, 200)
    bounded = [*args, "--inference_config.engine_params.stall_timeout_s", "5"]
    run = start(*bounded, env={"VLLM_ENABLE_V1_MULTIPROCESSING": "1"})
    core = None
    try:
        wait_for(lambda: committed_parts(out) >= 2, "two committed chunks", limit=600)
        core = engine_core(run.pid)
        assert core is not None, "no EngineCore process"
        core.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        _, err = finish(run, 120, out)
        took = time.monotonic() - stopped
    finally:
        if core is not None and core.is_running():
            core.kill()
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate(timeout=60)
    assert run.returncode == 2, err[-3000:]
    assert "stalled: one engine step has not returned in" in err and "stall_timeout_s, is 5 s" in err
    assert took < 60, f"the run took {took:.0f} s to stop after its engine stopped"
    assert committed_parts(out) >= 2
    rerun = jurist(*bounded, timeout=900)  # the same command (the bound is part of the run's settings)
    assert rerun.returncode in (0, 3), rerun.stderr[-3000:]
    assert "resumed after" in rerun.stdout
    ids_once(out, 200)


def pool(on_death: str, die_after: int | None) -> DataParallelBackend:
    envs = [{"JURIST_TEST_DIE_AFTER": str(die_after)} if die_after else {}, {}]
    return DataParallelBackend(mortal, 2, envs=envs, on_worker_death=on_death)  # type: ignore[arg-type]


def test_a_dying_data_parallel_worker_stops_the_run_naming_it(tmp_path: Path) -> None:
    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    out = tmp_path / "out.parquet"
    backend = pool("stop", die_after=12)
    try:
        with pytest.raises(
            BackendError, match=r"data-parallel worker 0 \(CPU\) exited with code 9"
        ) as caught:
            engine(backend).run_file(data, out)
    finally:
        backend.close()
    assert "--on-worker-death continue" in str(caught.value) and "rerun the same command" in str(caught.value)
    assert committed_parts(out) < 5
    healthy = pool("stop", die_after=None)
    try:
        engine(healthy).run_file(data, out)
    finally:
        healthy.close()
    assert rows_of(out) == expected


def test_with_continue_the_workers_left_finish_the_run(tmp_path: Path) -> None:
    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    out = tmp_path / "out.parquet"
    backend = pool("continue", die_after=12)
    try:
        engine(backend).run_file(data, out)
        assert backend.workers == 1  # worker 0 died on its 13th request; worker 1 did the rest
    finally:
        backend.close()
    assert rows_of(out) == expected


def test_with_continue_the_last_worker_dying_stops_the_run(tmp_path: Path) -> None:
    data = data_file(tmp_path)
    envs = [{"JURIST_TEST_DIE_AFTER": "6"}, {"JURIST_TEST_DIE_AFTER": "6"}]
    backend = DataParallelBackend(mortal, 2, envs=envs, on_worker_death="continue")
    try:
        with pytest.raises(BackendError, match="exited with code 9, the last one left"):
            engine(backend).run_file(data, tmp_path / "out.parquet")
    finally:
        backend.close()


def test_on_worker_death_is_checked_on_the_command_line(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 2)
    done = jurist(*judge_args(config, data, tmp_path / "o.parquet", "--on-worker-death", "retry"))
    assert done.returncode == 2 and "--on-worker-death" in done.stderr


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray not installed")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")
def test_a_dying_ray_actor_is_restarted_and_its_unit_judged_again(tmp_path: Path) -> None:
    import ray

    from jurist.config.models import JudgeConfig
    from jurist.engine.spec import RunOptions, RunSpec, Selection
    from jurist.io.results import ResultTable
    from jurist.launch import Placement, launch

    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    shards = tmp_path / "shards"
    shards.mkdir()
    lines = data.read_text().splitlines(keepends=True)
    for number in range(5):  # the same rows as 5 shards of 10
        (shards / f"part-{number}.jsonl").write_text("".join(lines[10 * number : 10 * number + 10]))
    out = tmp_path / "out"
    here = Path(__file__).parent
    env = {"PYTHONPATH": f"{here}:{here.parent}:{here.parents[1] / 'src'}", "JURIST_TEST_DIE_AFTER": "25"}
    # "local": a new instance, not a cluster another test may be running on this machine
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": env},
    )
    try:
        # every actor process dies on its 26th request: 5 units of 10 rows on 2 actors, so one actor takes a
        # third unit and dies in it; Ray restarts it and runs that unit again
        spec = RunSpec(
            (JudgeConfig.model_validate(JUDGE),), Selection(str(shards)), RunOptions(chunk_size=10)
        )
        launched = launch(
            spec, Placement(ray="local", data_parallel=2), output=out, backend_factory=mortal_for
        )
        launched.run(out)
    finally:
        ray.shutdown()
    table = ResultTable.open(out).table  # ids name the shards; the rows and verdicts are the same
    keep = ["id", "j.judgment", "j.explanation", "j.status"]
    judged = list(zip(*(table.column(c).to_pylist() for c in keep), strict=True))
    assert [row[1:] for row in judged] == [row[1:] for row in expected]
    assert [row[0] for row in judged] == list(range(50))
