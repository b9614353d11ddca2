"""A cascade on the real vLLM engine (CPU build) and the tiny model, from the command line: stage 1 a
generation judge sampled four times per row (its confidence the samples' agreement), stage 2 the same
question scored with LOGPROBS. Both stages share one model, so one engine loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from installed import have
from jurist.io.results import ResultTable

pytestmark = [pytest.mark.engine, pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")]


def test_a_sampled_stage_then_a_logprobs_stage_on_vllm(tiny_model_dir: Path, tmp_path: Path) -> None:
    rows = [
        {"id": f"r{i}", "question": f"Is {i} even?", "answer": "yes" if i % 3 else "no"} for i in range(24)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inference = {
        "model": {"model_name": str(tiny_model_dir), "model_max_length": 2048},
        "engine_params": {"gpu_memory_utilization": 0.15},
    }
    prompt = "Question: {question}\nAnswer: {answer}\nIs the answer right?"
    sampled = {
        "name": "right",
        "judge_params": {"prompt_template": prompt, "samples": 4},
        "inference_config": {**inference, "generation": {"temperature": 1.0}},
    }
    scored = {"name": "right", "judge_params": {"prompt_template": prompt, "scoring": "LOGPROBS"}}
    scored["inference_config"] = inference
    configs = []
    for name, config in (("small", sampled), ("big", scored)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        configs += ["--cascade", str(path)]
    output = tmp_path / "out.parquet"
    command = [
        sys.executable, "-m", "jurist", "judge", "dataset", "-i", str(data), "-o", str(output), *configs,
        "--threshold", "0.75", "--quiet", "--summary-json", str(tmp_path / "s.json"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    table = ResultTable.open(output)
    assert table.num_rows == len(rows)
    assert table.metadata["cascade"]["stages"][0]["confidence"] == "sample_agreement"
    data_rows = table.table.to_pylist()
    for row in data_rows:
        assert row["right_1.status"] == "ok" and row["right_1.samples_ok"] == 4
        agreement = row["right_1.sample_agreement"]
        assert row["cascade.confidence_1"] == agreement
        stage = 1 if agreement >= 0.75 else 2
        assert row["cascade.stage"] == stage
        assert (row["right_2.status"] is not None) == (stage == 2)
        assert row["cascade.judgment"] == row[f"right_{stage}.judgment"]
        if stage == 2:
            assert row["cascade.confidence_2"] == pytest.approx(row["right_2.judgment_confidence"])
    report = json.loads((tmp_path / "s.json").read_text())["cascade"]
    decided = [s["decided"] for s in report["stages"]]
    assert decided == [sum(r["cascade.stage"] == k for r in data_rows) for k in (1, 2)]
    assert report["stages"][0]["requests"] == 4 * len(rows)  # four samples per row, one request each
    assert report["stages"][1]["requests"] == decided[1]


@pytest.mark.slow
def test_a_logprobs_stage_then_a_one_answer_generation_stage_on_vllm(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The last stage without --abstain decides every row that reaches it, so a generation judge with one
    answer (no confidence) may be it: by hand and calibrated, every row once, its rows with no confidence;
    with --abstain it is refused, naming why."""
    rows = [
        {"id": f"r{i}", "question": f"Is {i} even?", "answer": "yes" if i % 3 else "no"} for i in range(40)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": r["id"], "label": i % 2 == 0}) + "\n" for i, r in enumerate(rows))
    )
    inference = {
        "model": {"model_name": str(tiny_model_dir), "model_max_length": 2048},
        "engine_params": {"gpu_memory_utilization": 0.15},
        "generation": {"max_new_tokens": 48},
    }
    prompt = "Question: {question}\nAnswer: {answer}\nIs the answer right?"
    scored = {"name": "right", "judge_params": {"prompt_template": prompt, "scoring": "LOGPROBS"}}
    explained = {"name": "right", "judge_params": {"prompt_template": prompt, "response_format": "JSON"}}
    configs = []
    for name, config in (("small", scored), ("big", explained)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump({**config, "inference_config": inference}))
        configs += ["--cascade", str(path)]
    validated = subprocess.run(
        [sys.executable, "-m", "jurist", "validate", str(tmp_path / "big.yaml")],
        capture_output=True,
        text=True,
    )
    assert "can be the last stage of a cascade without --abstain" in validated.stdout, validated.stdout
    base = [sys.executable, "-m", "jurist", "judge", "dataset", "-i", str(data), *configs, "--quiet"]
    median = None
    for name in ("calibrated", "by_hand"):  # by hand at the median of the first run's stage-1 confidences
        if name == "calibrated":
            extra = ["--target-agreement", "0.3", "--calibration-labels", str(labels)]
        else:
            extra = ["--threshold", str(median)]
        output = tmp_path / f"{name}.parquet"
        done = subprocess.run([*base, "-o", str(output), *extra], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        table = ResultTable.open(output)
        stages = table.metadata["cascade"]["stages"]
        assert stages[0]["confidence"] == "label_probability" and stages[1]["confidence"] is None
        assert "decides every row that reaches it" in stages[1]["confidence_description"]
        data_rows = table.table.to_pylist()
        assert sorted(r["id"] for r in data_rows) == sorted(r["id"] for r in rows)  # every row once
        threshold = stages[0]["threshold"]
        assert threshold is not None
        seen = set()
        for row in data_rows:
            stage = 1 if row["cascade.confidence_1"] >= threshold else 2
            seen.add(stage)
            assert row["cascade.stage"] == stage and row["cascade.status"] == "ok"
            assert row["cascade.judgment"] == row[f"right_{stage}.judgment"]
            if stage == 2:
                assert row["cascade.confidence"] is None and row["cascade.confidence_2"] is None
                assert row["right_2.status"] == "ok" and row["right_2.raw"], sorted(row)
            else:
                assert row["cascade.confidence"] == row["cascade.confidence_1"]
        if name == "calibrated":
            confidences = sorted(r["cascade.confidence_1"] for r in data_rows)
            median = confidences[len(confidences) // 2]
        else:
            assert seen == {1, 2}, "the median threshold should split the rows between the stages"
    refused = subprocess.run(
        [
            *base,
            "-o",
            str(tmp_path / "abstain.parquet"),
            "--threshold",
            "0.5",
            "--threshold",
            "0.5",
            "--abstain",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode == 2, refused.stderr
    assert "gives no confidence" in refused.stderr and "the last stage with --abstain" in refused.stderr
    assert not (tmp_path / "abstain.parquet").exists()
