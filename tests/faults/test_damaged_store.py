"""A store damaged between two runs: each damaged part or manifest is named on resume (exit 2 on the command
line), and ``--repair`` judges only the rows concerned again; the output then holds every row once."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from fault_runs import committed_parts, ids_once, judge_args, jurist, setup, start, verdicts, wait_for
from fault_servers import fault_server
from scripted_runs import ROWS, answer, data_file, engine, interrupted_run, rows_of, undisturbed

from jurist import ScriptedBackend
from jurist.io.parts import MANIFEST, OutputError, parts_dir

Partial = tuple[Path, Path, list[tuple[object, ...]]]


@pytest.fixture()
def partial(tmp_path: Path) -> Partial:
    """An input, a run stopped after 3 of its 5 chunks, and what an undisturbed run writes."""
    data = data_file(tmp_path)
    expected = undisturbed(data, tmp_path / "alone.parquet")
    out = tmp_path / "out.parquet"
    interrupted_run(data, out)
    manifest = json.loads((parts_dir(out) / MANIFEST).read_text())
    assert [p["file"] for p in manifest["parts"]] == [f"part-00000{i}.parquet" for i in range(3)]
    return data, out, expected


def judged_questions(backend: ScriptedBackend) -> list[int]:
    return sorted(int(r.messages[-1].content.split()[-1].rstrip("!")) for r in backend.requests)


def test_a_truncated_part_is_named_and_repair_judges_only_its_rows(partial: Partial) -> None:
    data, out, expected = partial
    part = parts_dir(out) / "part-000001.parquet"
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    refused = ScriptedBackend(answer)
    with pytest.raises(OutputError, match=r"part-000001\.parquet \(rows 10-19\): truncated or unreadable"):
        engine(refused).run_file(data, out)
    assert refused.requests == []  # named before anything was judged
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out, repair=True)
    assert judged_questions(backend) == [*range(10, 20), *range(30, 50)]  # the damaged part, then the rest
    assert rows_of(out) == expected


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("missing", "the file is missing"),
        ("moved", "written by another run, or for other rows"),
        ("short", "holds 5 rows, not 10"),
    ],
)
def test_other_damaged_parts_are_named_and_repaired(partial: Partial, damage: str, problem: str) -> None:
    data, out, expected = partial
    directory = parts_dir(out)
    target = directory / "part-000002.parquet"
    if damage == "missing":
        target.unlink()
    elif damage == "moved":
        shutil.copy(directory / "part-000000.parquet", target)
    else:
        import pyarrow.parquet as pq

        pq.write_table(pq.read_table(target).slice(0, 5), target)
    with pytest.raises(OutputError, match=rf"part-000002\.parquet \(rows 20-29\): {problem}"):
        engine(ScriptedBackend(answer)).run_file(data, out)
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out, repair=True)
    assert judged_questions(backend) == list(range(20, 50))
    assert rows_of(out) == expected


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("garbage", "does not parse"),
        ("rows", "says 99 rows, but its parts hold 30"),
        ("gone", "is missing, but part files are there"),
    ],
)
def test_a_damaged_manifest_is_named_and_rebuilt_from_the_parts(
    partial: Partial, damage: str, problem: str
) -> None:
    data, out, expected = partial
    manifest = parts_dir(out) / MANIFEST
    if damage == "garbage":
        manifest.write_text('{"fingerprint": "abc", "rows": 3')
    elif damage == "rows":
        manifest.write_text(manifest.read_text().replace('"rows": 30', '"rows": 99'))
    else:
        manifest.unlink()
    with pytest.raises(OutputError, match=f"the manifest .*{MANIFEST} {problem}"):
        engine(ScriptedBackend(answer)).run_file(data, out)
    assert (parts_dir(out) / "part-000002.parquet").exists()  # nothing was thrown away
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out, repair=True)
    assert judged_questions(backend) == list(range(30, 50))  # the three parts were vouched for and kept
    assert rows_of(out) == expected


def test_a_rebuilt_manifest_keeps_the_readable_parts_from_row_0(
    partial: Partial,
) -> None:
    data, out, expected = partial
    directory = parts_dir(out)
    (directory / MANIFEST).write_text("not json")
    part = directory / "part-000001.parquet"
    part.write_bytes(b"PAR1 nothing")
    backend = ScriptedBackend(answer)
    engine(backend).run_file(data, out, repair=True)
    assert judged_questions(backend) == list(range(10, 50))
    assert rows_of(out) == expected
    assert len(ROWS) == len(expected) == 50


def test_on_the_command_line_a_truncated_part_exits_2_then_repair_completes(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 40)
    out, alone = tmp_path / "out.parquet", tmp_path / "alone.parquet"
    with fault_server(pause_after=20) as server:
        url = ["--inference_config.remote_params.api_url", server.url, "--chunk-size", "5"]
        killed = start(*judge_args(config, data, out, *url))
        try:
            wait_for(lambda: committed_parts(out) >= 3, "three committed chunks")
        finally:
            os.killpg(killed.pid, signal.SIGKILL)  # a crash: no chance to tidy up
            killed.communicate(timeout=60)
        server.gate.set()
        part = parts_dir(out) / "part-000001.parquet"
        part.write_bytes(part.read_bytes()[:100])
        named = jurist(*judge_args(config, data, out, *url))
        assert named.returncode == 2, named.stderr
        assert "part-000001.parquet (rows 5-9): truncated or unreadable" in named.stderr
        assert "--repair" in named.stderr and "Traceback" not in named.stderr
        repaired = jurist(*judge_args(config, data, out, *url, "--repair"))
        assert repaired.returncode == 0, repaired.stderr
        assert jurist(*judge_args(config, data, alone, *url)).returncode == 0
    ids_once(out, 40)
    assert verdicts(out) == verdicts(alone)
