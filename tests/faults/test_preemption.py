"""Preemption: SIGTERM and SIGHUP (what Slurm, Kubernetes and a closed terminal send) and --max-runtime stop a
run as Ctrl-C does: the committed chunks are kept, the user is told, and a rerun resumes to the same output
as an undisturbed run."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from fault_runs import (
    committed_parts,
    finish,
    ids_once,
    judge_args,
    jurist,
    setup,
    start,
    verdicts,
    wait_for,
)
from fault_servers import fault_server

from jurist.engine.interrupt import Stopped, parse_duration, stop_on_signals
from jurist.errors import JuristError


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stop_signal_keeps_the_committed_chunks_and_a_rerun_resumes(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    config, data = setup(tmp_path, 40)
    out, alone = tmp_path / "out.parquet", tmp_path / "alone.parquet"
    with fault_server(pause_after=15) as server:
        url = ["--inference_config.remote_params.api_url", server.url, "--chunk-size", "5"]
        run = start(*judge_args(config, data, out, *url))
        try:
            wait_for(lambda: committed_parts(out) >= 3, "three committed chunks")
            os.kill(run.pid, signum)
            _, err = finish(run, 60, out)  # the server still holds requests: the run does not wait
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
        kept = committed_parts(out)
        assert run.returncode == code, err
        assert f"stopped by {signum.name}: " in err
        assert f"rows are committed in {kept} part(s) beside {out}" in err and " of 40 rows" in err
        assert "rerun the same command to resume" in err and "Traceback" not in err
        server.gate.set()
        resumed = jurist(*judge_args(config, data, out, *url))
        assert resumed.returncode == 0, resumed.stderr
        assert "resumed after" in resumed.stdout
        assert jurist(*judge_args(config, data, alone, *url)).returncode == 0
    ids_once(out, 40)
    assert verdicts(out) == verdicts(alone)


class _SignalledWhileFinalised:
    """Sends SIGTERM from its ``__del__``, where the handler then runs and Python drops what it raises."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100_000))  # bytecode to run the handler in


def test_a_stop_that_a_finaliser_drops_is_raised_again() -> None:
    held = threading.Event()  # never set: the requests a server holds back
    handler, hook = signal.getsignal(signal.SIGTERM), sys.unraisablehook
    with pytest.raises(Stopped, match="stopped by SIGTERM") as caught, stop_on_signals():
        _SignalledWhileFinalised()
        gc.collect()
        held.wait(60)  # without the second raise, this waits out the minute and the test fails
    assert caught.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) == handler and sys.unraisablehook == hook


def test_other_finalisers_errors_still_reach_the_hook_there_was() -> None:
    seen: list[Any] = []

    class Failing:
        def __del__(self) -> None:
            raise ValueError("from a finaliser")

    before, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        with stop_on_signals():
            Failing()
            gc.collect()
        assert sys.unraisablehook == seen.append
    finally:
        sys.unraisablehook = before
    assert [type(u.exc_value) for u in seen] == [ValueError]


def test_max_runtime_stops_the_run_the_same_way(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 30)
    out = tmp_path / "out.parquet"
    with fault_server(pause_after=10) as server:  # the run stalls after two chunks until the limit
        url = ["--inference_config.remote_params.api_url", server.url, "--chunk-size", "5"]
        stopped = jurist(*judge_args(config, data, out, *url, "--max-runtime", "2s"), timeout=120)
        assert stopped.returncode == 124, stopped.stderr
        assert "stopped at the time limit (--max-runtime 2s): 10 of 30 rows are committed" in stopped.stderr
        server.gate.set()
        resumed = jurist(*judge_args(config, data, out, *url, "--max-runtime", "1h"))
        assert resumed.returncode == 0, resumed.stderr
    ids_once(out, 30)


def test_a_bad_max_runtime_exits_2(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 3)
    done = jurist(*judge_args(config, data, tmp_path / "o.parquet", "--max-runtime", "3 hours"))
    assert done.returncode == 2 and "--max-runtime: cannot read '3 hours'" in done.stderr


def test_durations() -> None:
    assert parse_duration("3h30m") == 3 * 3600 + 30 * 60
    assert parse_duration("90m") == 5400 and parse_duration("45s") == 45 and parse_duration("1d2h") == 93600
    assert parse_duration("600") == 600 and parse_duration("1.5h") == 5400
    for bad in ("", "h", "3x", "0s", "-5", "3h 30q"):
        with pytest.raises(JuristError):
            parse_duration(bad)


def test_under_nohup_a_hangup_is_still_ignored(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 20)
    out = tmp_path / "out.parquet"
    with fault_server(pause_after=5) as server:
        url = ["--inference_config.remote_params.api_url", server.url, "--chunk-size", "5"]
        run = start(*judge_args(config, data, out, *url), nohup=True)
        try:
            wait_for(lambda: committed_parts(out) >= 1, "a committed chunk")
            os.kill(run.pid, signal.SIGHUP)  # nohup execs jurist: the same process
            server.gate.set()  # the run goes on, and finishes
            _, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
    assert run.returncode == 0, err
    ids_once(out, 20)
