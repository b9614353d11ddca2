"""`jurist bench --cascade` beyond the main test in test_cascade.py: calibrated thresholds (agreement with the
labels, calibration seconds) without the last-stage baseline, and what the command refuses."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from cascade_stages import Stage, factory, stage_config, truth_of
from typer.testing import CliRunner

from jurist.bench.cascade_bench import CascadeBench, bench_cascade
from jurist.bench.report import markdown, summary_lines
from jurist.cli import app
from jurist.config.cascade import CalibrationSettings, CascadeSettings
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource

LLMBAR = Path("/work/shared/data/llmbar/Natural.json")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llmbar" / "Natural.json"


@pytest.fixture
def llmbar(tmp_path: Path) -> Path:
    target = tmp_path / "natural.json"
    shutil.copy(LLMBAR if LLMBAR.is_file() else EXAMPLE, target)
    return target


def stage_files(folder: Path) -> list[str]:
    paths = []
    for model in ("small", "big"):
        path = folder / f"{model}.yaml"
        path.write_text(yaml.safe_dump(stage_config(model)))
        paths.append(str(path))
    return paths


def test_a_calibrated_cascade_without_the_baseline(llmbar: Path, tmp_path: Path) -> None:
    rows = json.loads(llmbar.read_text())
    truth = truth_of(rows)
    stages = {
        "small": Stage("small", truth, lambda c: 0.2 + 0.8 * c),
        "big": Stage("big", truth, lambda c: 0.9),
    }
    settings = CascadeSettings(calibration=CalibrationSettings(LabelSource(llmbar), target=0.8, delta=0.1))
    job = CascadeBench(
        stage_files(tmp_path), str(llmbar), tmp_path / "bench", settings, rows=40, baseline=False
    )
    bench = bench_cascade(job, factory(stages), progress=None)
    assert len(bench["results"]) == 1 and bench["settings"]["cascade"]["baseline"] is False
    entry = bench["results"][0]
    figures = entry["cascade"]
    assert "vs_last_stage" not in figures and figures["calibration_seconds"] >= 0
    assert figures["calibration"]["labelled_rows"] == 40  # the benched rows that have labels
    data = ResultTable.open(tmp_path / "bench" / "cascade.parquet").table.to_pylist()
    assert len(data) == 40
    # agreement, counted here from the parquet's verdicts and LLMBar's labels (label 1: output_1 is better)
    wanted = {"cascade": "cascade.winner", "pref_1": "pref_1.winner", "pref_2": "pref_2.winner"}
    for judge, column in wanted.items():
        labelled = [(r[column], "a" if int(r["label"]) == 1 else "b") for r in data]
        decided = [(v, t) for v, t in labelled if v is not None]
        got = figures["agreement"][judge]
        assert got["labelled_rows"] == 40 and got["decided_rows"] == len(decided)
        right = sum(v == t for v, t in labelled)
        assert got["accuracy"]["estimate"] == pytest.approx(right / 40)
        assert (got["accuracy"]["successes"], got["accuracy"]["trials"]) == (right, 40)
        assert got["accuracy_decided"] == pytest.approx(sum(v == t for v, t in decided) / len(decided))
        assert decided  # each stage decided some rows, and the cascade every row
    decided_by = Counter(r["cascade.stage"] for r in data)
    assert [s["decided"] for s in figures["stages"]] == [decided_by[1], decided_by[2]]
    assert figures["stages"][0]["threshold"] == figures["calibration"]["stages"][0]["threshold"]
    # without a baseline, the saving shown is the report's estimate only
    text = markdown(bench)
    share = figures["report"]["saved"]["seconds"]["share"]
    assert f"seconds saved against the last stage on every row, estimated: {100 * share:.1f} %" in text
    assert "agreement with the labels: " in text and "calibration: " in text
    assert any(
        line.startswith("small -> big / cascade: pref_1 -> pref_2 / logprobs:")
        for line in summary_lines(bench)
    )


def test_bench_refuses_what_a_cascade_does_not_take(llmbar: Path, tmp_path: Path) -> None:
    first, second = stage_files(tmp_path)
    base = ["bench", "-i", str(llmbar), "-o", str(tmp_path / "out"), "--cascade", first, "--cascade", second]
    for extra, named in (
        (["--threshold", "0.8", "--model", "other"], "--model"),
        (["--threshold", "0.8", "--modes", "generation"], "--modes"),
        (["--threshold", "0.8", "--one-row"], "--one-row"),
        (["--threshold", "0.8", "--rows", "0"], "--rows must be at least 1"),
        ([], "a cascade needs thresholds"),
    ):
        result = CliRunner().invoke(app, [*base, *extra])
        assert result.exit_code == 2, result.output
        assert named in result.output
    assert not (tmp_path / "out" / "bench.json").exists()
