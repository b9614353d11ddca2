"""What the fault tests share: a judge config and rows on disk, and ``jurist judge dataset`` run as a user
runs it (a subprocess of this worktree's code, bounded in time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from jurist.cli.harness import log_path

REMOTE_JUDGE = """\
judge_params:
  prompt_template: "Q: {question}"
  include_explanation: true
inference_config:
  engine: REMOTE_VLLM
  model: {model_name: fake}
"""


def rows(count: int) -> list[dict[str, Any]]:
    return [{"id": i, "question": f"{'good' if i % 3 else 'bad'} question {i}"} for i in range(count)]


def setup(tmp_path: Path, count: int, template: str = REMOTE_JUDGE) -> tuple[Path, Path]:
    config = tmp_path / "judge.yaml"
    config.write_text(template)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(count)))
    return config, data


def _env() -> dict[str, str]:
    # PYTHONFAULTHANDLER: a run that hangs can be made to print every thread's stack (see finish())
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "PYTHONPATH": src, "PYTHONFAULTHANDLER": "1"}


def jurist(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=timeout, env=_env()
    )


def finish(run: subprocess.Popen[str], timeout: float, output: Path | None = None) -> tuple[str, str]:
    """The output of a started run once it exits within ``timeout`` seconds. A run still going then is sent
    SIGABRT, so that Python's fault handler prints every thread's stack, and the test fails with them: a
    hang is reported with where it hangs. During a run its stderr goes to the log beside its ``output``,
    where the stacks then are."""
    try:
        return run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(run.pid, signal.SIGABRT)
        try:
            _, err = run.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            _, err = run.communicate()
        log = log_path(output, kept=True) if output is not None else None
        if log is not None and log.exists():
            err += f"\n{log}:\n" + log.read_text(errors="replace")
        raise AssertionError(
            f"the run did not exit within {timeout:g} s; its threads:\n{err[-8000:]}"
        ) from None


# ``python -m jurist`` as started from a terminal: a signal this process ignores (SIGHUP, when the tests
# themselves run under nohup) would be inherited ignored, and a run rightly keeps an ignored signal ignored.
_FROM_A_TERMINAL = (
    "import runpy, signal\n"
    "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
    "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "runpy.run_module('jurist', run_name='__main__', alter_sys=True)\n"
)


def start(*args: str, env: dict[str, str] | None = None, nohup: bool = False) -> subprocess.Popen[str]:
    """``jurist`` started in the background (its own process group, so a signal reaches it alone), with
    ``env`` added to the environment: as from a terminal (SIGHUP, SIGTERM and Ctrl-C at their defaults,
    whatever this process ignores), or under ``nohup`` with ``nohup``."""
    command = ["nohup", sys.executable, "-m", "jurist"] if nohup else [sys.executable, "-c", _FROM_A_TERMINAL]
    return subprocess.Popen(
        [*command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env(), **(env or {})},
        start_new_session=True,
    )


def wait_for(condition: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    """Poll until ``condition`` holds (a bound on waiting, not an assertion on speed)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def committed_parts(out: Path) -> int:
    manifest = out.with_name(out.name + ".parts") / "_manifest.json"
    try:
        return len(json.loads(manifest.read_text())["parts"])
    except (OSError, ValueError, KeyError):
        return 0


def verdicts(path: Path) -> list[tuple[Any, ...]]:
    """What a run decided per row, without what differs between two runs (times, provenance)."""
    table = pq.read_table(path)
    keep = ["row_id", "judge.judgment", "judge.explanation", "judge.status"]
    return list(zip(*(table.column(c).to_pylist() for c in keep), strict=True))


def judge_args(config: Path, data: Path, out: Path, *extra: str) -> list[str]:
    return ["judge", "dataset", "-c", str(config), "-i", str(data), "-o", str(out), "-q", *extra]


def ids_once(path: Path, count: int) -> list[dict[str, Any]]:
    """The output's rows, checked to hold every input row exactly once, in order."""
    table = pq.read_table(path)
    assert table.num_rows == count
    ids = table.column("row_id").to_pylist()
    assert ids == list(range(count)) or ids == [str(i) for i in range(count)]
    return table.to_pylist()
