"""The one ``nvidia-smi`` query (:func:`jurist.bench.measure.query_gpus`) that the bench's machine
description and its memory sampler share, against a stand-in ``nvidia-smi`` that prints what a real one
does (and one that fails)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jurist.bench.measure import gpu_memory_used_mb, query_gpus
from jurist.bench.runner import machine


def fake_nvidia_smi(folder: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_the_query_reads_one_row_per_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        'case "$1" in\n'
        '  --query-gpu=memory.used) printf "1200\\n800\\n" ;;\n'
        '  --query-gpu=name,memory.total) printf "NVIDIA H100, SXM, 81559\\nNVIDIA H100, SXM, 81559\\n" ;;\n'
        "esac"
    )
    fake_nvidia_smi(tmp_path, monkeypatch, body)
    assert query_gpus("memory.used") == [["1200"], ["800"]]
    assert gpu_memory_used_mb() == 2000.0
    gpus = [{"name": "NVIDIA H100, SXM", "memory_mb": 81559.0}] * 2  # a name with a comma stays whole
    assert query_gpus("name", "memory.total") == [["NVIDIA H100, SXM", "81559"]] * 2
    assert machine()["machine"]["gpus"] == gpus


def test_a_failing_query_reads_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvidia_smi(tmp_path, monkeypatch, 'echo "NVIDIA-SMI has failed" >&2; exit 9')
    assert query_gpus("memory.used") == []
    assert gpu_memory_used_mb() is None
    assert machine()["machine"]["gpus"] == []
