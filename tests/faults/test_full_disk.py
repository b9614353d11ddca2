"""A full disk while results are written: exit 2 naming the path and the space needed, the parts committed
before intact, and a rerun after freeing space that resumes and ends with every row once."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from fault_runs import ids_once, judge_args, jurist, setup
from fault_servers import fault_server
from scripted_runs import answer, data_file, engine, rows_of, undisturbed

from jurist import ScriptedBackend
from jurist.io.disk import DiskFullError
from jurist.io.parts import MANIFEST, parts_dir
from jurist.io.writers import OutputWriter


def full_after(calls: int, real: Any) -> Any:
    """``real``, failing with ENOSPC from call ``calls + 1`` on."""
    made = 0

    def write(*args: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        if made > calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    return write


def committed(out: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((parts_dir(out) / MANIFEST).read_text())
    for part in manifest["parts"]:  # each committed part is whole
        assert pq.read_table(parts_dir(out) / part["file"]).num_rows == part["rows"]
    return manifest


def test_a_full_disk_while_a_part_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(pq, "write_table", full_after(2, pq.write_table))
    with pytest.raises(DiskFullError) as caught:
        engine(ScriptedBackend(answer)).run_file(data, out)
    message = str(caught.value)
    part = parts_dir(out) / "part-000002.parquet"
    assert f"no space left on the device while writing a committed part {part}: it needs about" in message
    assert "rerun the same command to resume" in message
    assert committed(out)["rows"] == 20
    left = sorted(p.name for p in parts_dir(out).iterdir())  # no half-written file either
    assert left == [MANIFEST, "part-000000.parquet", "part-000001.parquet"]
    monkeypatch.undo()  # space freed
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out)
    assert len(backend.requests) == 30  # only the rows not committed
    assert rows_of(out) == expected


def test_a_full_disk_while_the_output_is_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(OutputWriter, "write", full_after(3, OutputWriter.write))
    with pytest.raises(DiskFullError, match=f"while writing the merged output {out}: it needs about"):
        engine(ScriptedBackend(answer)).run_file(data, out)
    assert committed(out)["rows"] == 50 and not out.exists()
    assert not out.with_name(out.name + ".partial").exists()
    monkeypatch.undo()
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out)
    assert backend.requests == []  # everything was committed: the rerun only merges
    assert rows_of(out) == expected


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 384 KiB tmpfs (needs the right to mount one; skipped elsewhere)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", str(where)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_real_full_disk_on_the_command_line(tmp_path: Path, small_disk: Path) -> None:
    config, data = setup(tmp_path, 150)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    data.write_text("".join(json.dumps({**r, "blob": os.urandom(2000).hex()}) + "\n" for r in rows))
    out = small_disk / "out.parquet"
    with fault_server() as server:
        args = judge_args(config, data, out, "--inference_config.remote_params.api_url", server.url)
        full = jurist(*args, "--chunk-size", "10")
        assert full.returncode == 2, full.stderr
        assert "no space left on the device while writing" in full.stderr and str(out) in full.stderr
        assert "needs about" in full.stderr and "Traceback" not in full.stderr
        kept = committed(out)["rows"]
        assert 0 < kept < 150
        subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)  # space freed
        resumed = jurist(*args, "--chunk-size", "10")
        assert resumed.returncode == 0, resumed.stderr
        assert f"resumed after {kept} rows" in resumed.stdout
    ids_once(out, 150)
