"""The head file and the PROBE config: loading, the label distribution against a direct computation, and the
refusals a user meets (another model, another prompt, a missing or broken file, keys that do not go
together), each naming what it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurist.config.loading import load_judge_config
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.models.probe_head import ProbeHead, ProbeModel, load_head

PAIRWISE = "pairwise/preference"


def head_for(judge: Judge, size: int = 4, **changes: Any) -> ProbeHead:
    rng = np.random.default_rng(0)
    values: dict[str, Any] = {
        "model": ProbeModel(name="m", weights="abc123", num_layers=4, hidden_size=size),
        "layer": 2,
        "judge": judge.name,
        "prompt_fingerprint": judge.prompt_hash,
        "answer_fingerprint": judge.schema_hash,
        "labels": judge.parts.label_texts,
        "mean": tuple(rng.normal(size=size).tolist()),
        "scale": tuple(rng.uniform(0.5, 2, size=size).tolist()),
        "coef": tuple(tuple(rng.normal(size=size).tolist()) for _ in judge.parts.label_texts),
        "intercept": tuple(rng.normal(size=len(judge.parts.label_texts)).tolist()),
    }
    values.update(changes)
    return ProbeHead(**values)


def logprobs_judge() -> Judge:
    return Judge(load_judge_config(PAIRWISE, {"judge_params.scoring": "LOGPROBS"}))


def test_the_label_distribution_is_the_softmax_of_the_standardised_logits() -> None:
    head = head_for(logprobs_judge())
    x = np.random.default_rng(1).normal(size=(5, 4))
    got = np.exp(head.log_probabilities(x))
    for row, features in enumerate(x):  # written out, one label at a time
        z = [
            sum(c * (f - m) / s for c, f, m, s in zip(coef, features, head.mean, head.scale, strict=True)) + b
            for coef, b in zip(head.coef, head.intercept, strict=True)
        ]
        expected = np.exp(z) / np.sum(np.exp(z))
        np.testing.assert_allclose(got[row], expected, rtol=1e-12)


def test_a_head_file_round_trips_and_a_probe_judge_loads_it(tmp_path: Path) -> None:
    path = head_for(logprobs_judge()).save(tmp_path / "head.json")
    assert load_head(path) == head_for(logprobs_judge())
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # readable as any file the user writes
    judge = Judge(
        load_judge_config(PAIRWISE, {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)})
    )
    assert judge.probe == load_head(path)
    assert judge.engine_config.engine_params["probe"] == str(path.resolve())  # the engine loads for the head
    step = judge.start({"question": "q", "response_a": "x", "response_b": "y"})
    assert [type(r).__name__ for r in step.requests] == ["LabelRequest", "LabelRequest"]  # as LOGPROBS


def test_another_model_is_refused_naming_both_fingerprints() -> None:
    head = head_for(logprobs_judge())
    with pytest.raises(ConfigError) as caught:
        head.check_model("other-model", "fff999", 4)
    message = str(caught.value)
    assert "abc123" in message and "fff999" in message and "other-model" in message
    with pytest.raises(ConfigError, match="4 layers"):
        head.check_model("m", "abc123", 12)
    head.check_model("m", "abc123", 4)  # the same model passes


def test_another_prompt_answer_or_label_set_is_refused(tmp_path: Path) -> None:
    path = head_for(logprobs_judge()).save(tmp_path / "head.json")
    probe = {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)}
    with pytest.raises(ConfigError, match=r"prompt \w+ \(the head's: \w+\)"):
        Judge(load_judge_config(PAIRWISE, {**probe, "judge_params.system_instruction": "Be brief."}))
    with pytest.raises(ConfigError, match=r"labels Yes, No \(the head's: A, B\)"):
        Judge(load_judge_config(PAIRWISE, {**probe, "pairwise_judge_params.mode": "pointwise"}))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "is not a probe head file"),
        (json.dumps({"format": "jurist-probe-head/1"}), "model: Field required"),
    ],
)
def test_a_broken_head_file_names_itself(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "head.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem) as caught:
        load_head(path)
    assert "judge_params.probe" in str(caught.value)
    with pytest.raises(ConfigError, match="no probe head file"):
        load_head(tmp_path / "missing.json")


def test_shapes_that_do_not_fit_the_model_are_refused() -> None:
    judge = logprobs_judge()
    with pytest.raises(ValueError, match="mean and scale need 4 values"):
        head_for(judge, mean=(0.0,))
    with pytest.raises(ValueError, match="layer 9 of a model with 4 layers"):
        head_for(judge, layer=9)


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"judge_params.scoring": "PROBE"}, "needs judge_params.probe"),
        ({"judge_params.probe": "h.json"}, "read in scoring PROBE only"),
        (
            {
                "judge_params.scoring": "PROBE",
                "judge_params.probe": "h.json",
                "inference_config.engine": "OPENAI",
            },
            "needs engine VLLM or NATIVE, not OPENAI",
        ),
        (
            {
                "judge_params.scoring": "PROBE",
                "judge_params.probe": "h.json",
                "judge_params.reasoning": {"budget_tokens": 64},
            },
            "drop one of reasoning and scoring PROBE",
        ),
        (
            {
                "judge_params.scoring": "PROBE",
                "judge_params.probe": "h.json",
                "judge_params.samples": 3,
                "inference_config.generation.temperature": 0.7,
            },
            "samples needs GENERATE scoring: PROBE",
        ),
    ],
)
def test_probe_keys_that_do_not_go_together(overrides: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_judge_config("generic/truthfulness", overrides)
