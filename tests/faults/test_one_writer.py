"""One writer per output: a second run on the same output is refused at once, naming the first; a lock left
by a dead run does not block."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fault_runs import committed_parts, ids_once, judge_args, jurist, setup, start, verdicts, wait_for
from fault_servers import fault_server

from jurist.io.lock import OutputLock, lock_path
from jurist.io.parts import OutputError


def test_a_second_run_on_the_same_output_exits_2_naming_the_first(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 40)
    out, alone = tmp_path / "out.parquet", tmp_path / "alone.parquet"
    with fault_server(pause_after=10) as server, fault_server() as other:
        url = ["--inference_config.remote_params.api_url", server.url, "--chunk-size", "5"]
        first = start(*judge_args(config, data, out, *url))
        try:
            wait_for(lambda: committed_parts(out) >= 1, "the first run's first chunk")
            holder = json.loads(lock_path(out).read_text())
            second = jurist(
                *judge_args(config, data, out, "--inference_config.remote_params.api_url", other.url),
                timeout=60,
            )
            assert first.poll() is None  # the first run was still going when the second was refused
        finally:
            server.gate.set()
            _, err = first.communicate(timeout=120)
        assert second.returncode == 2, second.stderr
        assert "another run is writing this output" in second.stderr
        assert f"pid {first.pid} on host {holder['host']}, started {holder['started']}" in second.stderr
        assert other.count == 0  # refused before it sent anything
        assert first.returncode == 0, err
        assert not lock_path(out).exists()  # released with the run
        done = jurist(*judge_args(config, data, alone, *url))
    assert done.returncode == 0, done.stderr
    ids_once(out, 40)
    assert verdicts(out) == verdicts(alone)


def test_a_lock_left_by_a_killed_run_does_not_block(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 6)
    out = tmp_path / "out.parquet"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from jurist.io.lock import OutputLock; "
            "OutputLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(600)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(OutputError, match=f"pid {holder.pid} on host"):
        OutputLock(out).acquire()
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=30)
    assert lock_path(out).exists()  # a kill -9 leaves the file behind, but not the lock
    with fault_server() as server:
        done = jurist(*judge_args(config, data, out, "--inference_config.remote_params.api_url", server.url))
    assert done.returncode == 0, done.stderr
    ids_once(out, 6)


def test_the_lock_is_one_per_output_and_released_for_the_next(tmp_path: Path) -> None:
    out = tmp_path / "a.parquet"
    with OutputLock(out) as first:
        assert first.held
        info = json.loads(lock_path(out).read_text())
        assert info["pid"] == os.getpid() and info["host"] and info["started"]
        with pytest.raises(OutputError, match="another run is writing this output"):
            OutputLock(out).acquire()
        with OutputLock(tmp_path / "b.parquet") as elsewhere:  # another output is another lock
            assert elsewhere.held
    assert not lock_path(out).exists()
    with OutputLock(out) as again:
        assert again.held
