"""Large-run behaviour on the real vLLM engine (CPU build) and the tiny random model: the engine kept full
across chunks, sampled rows (a per-request seed used to crash vLLM's CPU sampler), and a run killed with
SIGKILL and resumed from the command line without judging a committed row again."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from installed import have
from jurist import Engine, InferenceConfig
from jurist.backends.base import StreamingBackend
from jurist.io.parts import MANIFEST, parts_dir

pytestmark = [pytest.mark.engine, pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")]

JUDGE = {
    "name": "j",
    "judge_params": {
        "prompt_template": "Question: {question}\nAnswer: {answer}",
        "include_explanation": True,
        "max_explanation_chars": 40,
    },
}
ROWS = [
    {"question": f"What is {i} times {i}?", "answer": f"{i * i}" + " indeed" * (i % 5)} for i in range(150)
]


class Chunked:
    """The backend without its stream: one call per chunk."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.model_id = backend.model_id
        self.constraint_kinds = backend.constraint_kinds

    def generate(self, requests: Any) -> Any:
        return self.backend.generate(requests)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> Iterator[Any]:
    from jurist.backends.vllm.backend import VLLMBackend

    made = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": str(tiny_model_dir), "model_max_length": 2048},
                "engine_params": {"stream_window": 48},
            }
        )
    )
    yield made
    made.close()


def test_the_engine_kept_full_gives_every_row_in_order(backend: Any) -> None:
    assert isinstance(backend, StreamingBackend)
    engine = Engine(JUDGE, backend, chunk_size=20, max_open_chunks=3)
    streamed = engine.run(ROWS)
    chunked = Engine(JUDGE, Chunked(backend), chunk_size=20).run(ROWS)
    for table in (streamed, chunked):
        assert table["row_id"].to_pylist() == [str(i) for i in range(len(ROWS))]
        assert table["j.status"].to_pylist() == ["ok"] * len(ROWS)
    pattern = re.compile(engine.judges[0].spec.regex() or "", re.DOTALL)
    assert all(pattern.fullmatch(raw) for raw in streamed["j.raw"].to_pylist())
    assert engine.tally.requests == len(ROWS)


def test_sampling_at_temperature_one_gives_every_row(backend: Any) -> None:
    config = {**JUDGE, "inference_config": {"generation": {"temperature": 1.0, "top_p": 0.95, "seed": 7}}}
    table = Engine(config, backend, chunk_size=50).run(ROWS)
    assert table["j.status"].to_pylist() == ["ok"] * len(ROWS)
    assert len(set(table["j.raw"].to_pylist())) > 1


def test_repeated_samples_vote_on_the_engine(backend: Any) -> None:
    """``judge_params.samples`` on vLLM: four samples per row, one request each; the vote's columns hang
    together and samples of one row differ."""
    config = {
        "name": "j",
        "judge_params": {"prompt_template": "Question: {question}\nAnswer: {answer}", "samples": 4},
        "inference_config": {"generation": {"temperature": 1.0, "seed": 11}},
    }
    rows = ROWS[:40]
    engine = Engine(config, backend, chunk_size=20)
    table = engine.run(rows)
    assert engine.tally.requests == 4 * len(rows)
    data = table.to_pylist()
    for row in data:
        assert row["j.status"] == "ok"  # guided decoding: every sample parses
        assert row["j.samples_ok"] == 4
        assert 2 <= row["j.samples_agreeing"] <= 4  # a yes/no plurality of four holds at least two
        assert row["j.sample_agreement"] == row["j.samples_agreeing"] / 4
        assert row["j.judgment_score"] == (1.0 if row["j.judgment"] else 0.0)
        # the mean score of four samples of which `agreeing` gave the kept verdict
        agreeing = row["j.samples_agreeing"]
        yes = agreeing if row["j.judgment"] else 4 - agreeing
        if agreeing > 2:
            assert row["j.sample_score_mean"] == pytest.approx(yes / 4)
    assert any(r["j.sample_agreement"] < 1 for r in data)  # the random model's samples differ
    # (rerun-equal samples need per-request seeds, which vLLM's CPU build cannot take: see
    # backends/vllm/backend.py)


def committed(output: Path) -> int:
    manifest = parts_dir(output) / MANIFEST
    try:
        return int(json.loads(manifest.read_text())["rows"]) if manifest.is_file() else 0
    except ValueError:
        return 0


def test_a_reasoning_phase_on_the_real_engine_gives_every_row_one_verdict_within_its_budget(
    backend: Any,
) -> None:
    """100 rows, a pointwise generation judge and a pairwise LOGPROBS judge, each thinking up to 32
    tokens first: the random model rarely writes the end marker, so most reasoning is cut, flagged, and
    still followed by one well-formed verdict."""
    budget = 32
    pointwise = {**JUDGE, "judge_params": {**JUDGE["judge_params"], "reasoning": {"budget_tokens": budget}}}
    pairwise = {
        "name": "p",
        "judge_params": {
            "prompt_template": "Q: {question}\nA: {response_a}\nB: {response_b}",
            "scoring": "LOGPROBS",
            "reasoning": {"budget_tokens": budget},
        },
        "pairwise_judge_params": {},
    }
    rows = [{**r, "response_a": r["answer"], "response_b": f"{i}"} for i, r in enumerate(ROWS[:100])]
    engine = Engine([pointwise, pairwise], backend, chunk_size=50)
    table = engine.run(rows)
    assert table.num_rows == 100
    pattern = re.compile(engine.judges[0].spec.regex() or "", re.DOTALL)
    assert table["j.status"].to_pylist() == ["ok"] * 100
    assert all(pattern.fullmatch(raw) for raw in table["j.raw"].to_pylist())
    assert table["p.status"].to_pylist() == ["ok"] * 100
    assert set(table["p.winner"].to_pylist()) <= {"a", "b", "tie", "inconclusive"}
    for name, requests in (("j", 1), ("p", 2)):
        tokens = table[f"{name}.reasoning_tokens"].to_pylist()
        cut = table[f"{name}.reasoning_cut"].to_pylist()
        assert all(0 < t <= budget * requests for t in tokens)
        # a cut request used its whole budget: a row with none cut may still be at the budget (the end
        # marker as its last token), one with every request cut is exactly at it
        assert all(t == budget * requests for t, c in zip(tokens, cut, strict=True) if c == requests)
        assert sum(cut) > 0
    texts = table["p.reasoning"].to_pylist()
    assert all(isinstance(t, list) and len(t) == 2 for t in texts)


@pytest.mark.slow  # the default tier kills vLLM's engine process, then resumes (test_dying_engine)
def test_kill_nine_then_rerun_judges_each_row_once(
    tiny_model_dir: Path, tmp_path: Path, backend: Any
) -> None:
    backend.close()  # one engine at a time on this box: the command line starts its own
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    config = tmp_path / "judge.yaml"
    config.write_text(
        "judge_params:\n  prompt_template: 'Question: {question}\\nAnswer: {answer}'\n"
        "  include_explanation: true\n  max_explanation_chars: 40\n"
    )
    output = tmp_path / "out.parquet"
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(config), "-i", str(source),
        "-o", str(output), "--model", str(tiny_model_dir), "--chunk-size", "10", "--quiet",
        "--summary-json", str(tmp_path / "summary.json"),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while committed(output) < 30 and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    before = committed(output)
    assert 30 <= before < len(ROWS)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["resumed_from"] == before
    assert summary["requests"] == len(ROWS) - before  # no committed row was sent again
    table = pq.read_table(output)
    ids = table["row_id"].to_pylist()
    assert ids == [str(i) for i in range(len(ROWS))]  # every row id exactly once, in order
    assert table["judge.status"].to_pylist() == ["ok"] * len(ROWS)
