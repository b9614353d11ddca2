"""Runs on the scripted backend that stop part-way, leaving committed parts behind as a crash would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq

from jurist import Engine, ScriptedBackend
from jurist.records import GenerationRequest

JUDGE = {"name": "j", "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True}}
ROWS = [{"id": i, "question": f"question number {i}" + "!" * (i % 3)} for i in range(50)]


def answer(request: GenerationRequest) -> str:
    text = request.messages[-1].content
    return json.dumps({"explanation": text[-12:], "judgment": "Yes" if len(text) % 2 else "No"})


def stopping_after(requests: int) -> Callable[[GenerationRequest], str]:
    """Answers as :func:`answer`, then the user presses Ctrl-C."""
    served = 0

    def respond(request: GenerationRequest) -> str:
        nonlocal served
        served += 1
        if served > requests:
            raise KeyboardInterrupt
        return answer(request)

    return respond


def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def engine(backend: ScriptedBackend) -> Engine:
    return Engine(JUDGE, backend, chunk_size=10, max_open_chunks=1)


def interrupted_run(data: Path, out: Path, requests: int = 30) -> None:
    """A run stopped after ``requests`` requests: its first chunks committed, the rest not."""
    try:
        engine(ScriptedBackend(stopping_after(requests))).run_file(data, out)
    except KeyboardInterrupt:
        return
    raise AssertionError("the run was meant to stop part-way")


def undisturbed(data: Path, out: Path) -> list[tuple[object, ...]]:
    engine(ScriptedBackend(answer)).run_file(data, out)
    return rows_of(out)


def rows_of(path: Path) -> list[tuple[object, ...]]:
    table = pq.read_table(path)
    keep = ["row_id", "j.judgment", "j.explanation", "j.status"]
    return list(zip(*(table.column(c).to_pylist() for c in keep), strict=True))
