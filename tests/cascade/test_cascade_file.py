"""A cascade in one file (``--cascade cascade.yaml``): stages and labels resolved beside the file, inline
stage configs, the run it gives, and what is refused (naming the file and key)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from cascade_stages import Stage, factory, stage_config, truth_of
from typer.testing import CliRunner

from jurist.cli import app
from jurist.cli.cascade import cascade_from_cli
from jurist.config.cascade import stage_configs
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.launch import launch

LLMBAR = Path("/work/shared/data/llmbar/Natural.json")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llmbar" / "Natural.json"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding a stage config file, the LLMBar rows (also the labels) and nothing else."""
    shutil.copy(LLMBAR if LLMBAR.is_file() else EXAMPLE, tmp_path / "natural.json")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(stage_config("small")))
    return tmp_path


def write(path: Path, cascade: object) -> Path:
    path.write_text(yaml.safe_dump({"cascade": cascade}))
    return path


def test_a_cascade_file_gives_the_run_the_options_would(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cascade = write(
        folder / "cascade.yaml",
        {"stages": ["small.yaml", stage_config("big")], "thresholds": [0.8], "abstain": False},
    )
    monkeypatch.chdir(tmp_path.parent)  # relative paths are read beside the file, not from here
    found = cascade_from_cli([str(cascade)], None, False, None, None, None)
    assert found is not None
    stages, settings = found
    assert stages[0] == str(folder / "small.yaml") and stages[1] == stage_config("big")
    assert settings.thresholds == (0.8,) and settings.calibration is None and not settings.abstain
    truth = truth_of(json.loads((folder / "natural.json").read_text()))
    scripted = {"small": Stage("small", truth, lambda c: c), "big": Stage("big", truth, lambda c: 1.0)}
    results = []
    for refs in ([str(cascade)], [str(folder / "small.yaml"), str(folder / "big.yaml")]):
        (folder / "big.yaml").write_text(yaml.safe_dump(stage_config("big")))
        given = cascade_from_cli(refs, [0.8] if len(refs) == 2 else None, False, None, None, None)
        assert given is not None
        stages, settings = given
        rows = Selection(str(folder / "natural.json"))
        spec = RunSpec(tuple(stage_configs(stages)), rows, RunOptions(), cascade=settings)
        output = tmp_path / f"out{len(results)}.parquet"
        launch(spec, output=output, backend_factory=factory(scripted)).run(output)
        results.append(ResultTable.open(output).table)
    for column in ("cascade.winner", "cascade.stage", "cascade.confidence"):
        assert results[0][column].to_pylist() == results[1][column].to_pylist()


def test_calibration_labels_are_read_beside_the_file(folder: Path) -> None:
    cascade = write(
        folder / "cascade.yaml",
        {"stages": ["small.yaml", "small.yaml"], "calibration": {"labels": "natural.json", "delta": 0.05}},
    )
    found = cascade_from_cli([str(cascade)], None, False, None, None, None)
    assert found is not None
    _, settings = found
    assert settings.calibration is not None
    assert settings.calibration.labels == LabelSource(folder / "natural.json")
    assert (settings.calibration.target, settings.calibration.delta) == (0.9, 0.05)


@pytest.mark.parametrize(
    ("cascade", "message"),
    [
        ({"stages": ["small.yaml"], "thresholds": [0.8]}, "cascade.stages: List should have at least 2"),
        ({"stages": ["small.yaml", "small.yaml"]}, "give thresholds (one per stage but the last) or"),
        ({"stages": ["small.yaml", "small.yaml"], "thresholds": [0.8], "calibration": {"labels": "x"}},
         "not both"),
        ({"stages": ["small.yaml", "small.yaml"], "threshold": [0.8]}, "cascade.threshold: unknown key"),
        ({"stages": ["small.yaml", "small.yaml"], "calibration": {"labels": "l", "delta": 2}},
         "cascade.calibration.delta"),
    ],
)  # fmt: skip
def test_a_bad_cascade_file_exits_2_naming_the_file_and_key(
    folder: Path, cascade: object, message: str
) -> None:
    path = write(folder / "cascade.yaml", cascade)
    args = ["judge", "dataset", "-i", str(folder / "natural.json"), "-o", str(folder / "o.parquet"),
            "--cascade", str(path)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and message in result.output


def test_options_the_file_sets_are_refused_beside_it(folder: Path) -> None:
    path = write(folder / "cascade.yaml", {"stages": ["small.yaml", "small.yaml"], "thresholds": [0.8]})
    args = ["judge", "dataset", "-i", str(folder / "natural.json"), "-o", str(folder / "o.parquet"),
            "--cascade", str(path), "--threshold", "0.7", "--delta", "0.2"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "sets thresholds, calibration and abstain: drop --threshold, --delta" in result.output
    other = folder / "mixed.yaml"
    other.write_text(yaml.safe_dump({"cascade": {"stages": []}, "judge_params": {}}))
    result = CliRunner().invoke(app, [*args[:6], "--cascade", str(other)])
    assert result.exit_code == 2 and "holds only the key cascade; also found judge_params" in result.output
