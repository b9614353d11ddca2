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
    assert judge.scoring.head == load_head(path)
    use = judge.engine_config.use  # the engine is told the head's layer, not its file
    assert (use.hidden_states_layer, use.label_scores) == (2, False)  # and loads no float32 output head
    assert "probe" not in judge.engine_config.engine_params
    row = {"question": "q", "response_a": "x", "response_b": "y"}
    step = judge.start(row)
    assert [type(r).__name__ for r in step.requests] == ["StateRequest", "StateRequest"]
    labels = logprobs_judge().start(row).requests  # the very prompts LOGPROBS reads its labels after
    assert [(r.messages, r.answer_prefix) for r in step.requests] == [
        (r.messages, r.answer_prefix)
        for r in labels  # type: ignore[union-attr]
    ]
    assert {r.layer for r in step.requests} == {2}  # type: ignore[union-attr]


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
                "judge_params.reasoning": {"budget_tokens": 64},
            },
            "drop one of reasoning and scoring PROBE",
        ),
    ],
)
def test_probe_keys_that_do_not_go_together(overrides: dict[str, Any], problem: str) -> None:
    """The PROBE mode's own checks, made when the judge is built (before any model loads)."""
    config = load_judge_config("generic/truthfulness", overrides)
    with pytest.raises(ConfigError, match=problem):
        Judge(config)


def test_sampling_a_probe_judge_is_refused_when_the_config_loads() -> None:
    overrides = {
        "judge_params.scoring": "PROBE",
        "judge_params.probe": "h.json",
        "judge_params.samples": 3,
        "inference_config.generation.temperature": 0.7,
    }
    with pytest.raises(ConfigError, match="samples needs GENERATE scoring: PROBE"):
        load_judge_config("generic/truthfulness", overrides)


def test_an_engine_without_hidden_states_is_refused_before_it_loads(tmp_path: Path) -> None:
    """The engine table says which engines read hidden states; a PROBE judge on another is refused, naming
    them, when the engine is built (and by `jurist validate`), with no model loaded."""
    from jurist.engine.core import Engine

    truthfulness = Judge(load_judge_config("generic/truthfulness", {"judge_params.scoring": "LOGPROBS"}))
    path = head_for(truthfulness).save(tmp_path / "head.json")
    overrides = {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)}
    judge = Judge(
        load_judge_config("generic/truthfulness", {**overrides, "inference_config.engine": "OPENAI"})
    )
    with pytest.raises(
        ConfigError, match="reads the model's hidden states: it needs engine VLLM or NATIVE, not OPENAI"
    ):
        Engine(judge)


def test_the_retired_engine_parameter_names_its_replacement() -> None:
    with pytest.raises(ConfigError, match=r"engine_params.probe is no longer read: .*judge_params.probe"):
        load_judge_config("generic/truthfulness", {"inference_config.engine_params.probe": "head.json"})


@pytest.mark.parametrize(
    "accuracy",
    [
        {"estimate": 0.79, "low": 0.7, "high": 0.86, "successes": 79, "trials": 100},  # a share's one shape
        {"right": 79, "n": 100, "value": 0.79, "ci95": [0.7, 0.86]},  # head files fitted before it
    ],
)
def test_a_head_files_accuracy_reads_in_both_shapes(tmp_path: Path, accuracy: dict[str, Any]) -> None:
    path = head_for(logprobs_judge(), metrics={"accuracy": accuracy}).save(tmp_path / "head.json")
    saved = json.loads(path.read_text())
    assert "linear" not in saved and saved["format"] == "jurist-probe-head/1"  # the flat fields only
    head = load_head(path)
    assert head.accuracy == 0.79 and head_for(logprobs_judge()).accuracy is None
    judge = Judge(
        load_judge_config(PAIRWISE, {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)})
    )
    assert judge.scoring.metadata()["probe"]["cross_validated_accuracy"] == 0.79
    assert "cross-validated accuracy 79.0 %" in judge.scoring.describe()
    x = np.ones((2, 4))
    np.testing.assert_array_equal(head.log_probabilities(x), head.arrays.log_probabilities(x))


def test_a_probe_run_reads_its_head_file_once_and_tells_the_engine_its_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head is read on the judge's side, once for the whole run (not per row, not again by the
    backend); the backend is asked for states at the head's layer and never for label scores."""
    import jurist.scoring.probe as probe_module
    from jurist import Engine, ScriptedBackend
    from jurist.models.probe_head import read_head

    path = head_for(logprobs_judge()).save(tmp_path / "head.json")
    reads: list[str] = []

    def counted(where: str | Path) -> tuple[ProbeHead, str]:
        reads.append(str(where))
        return read_head(where)

    monkeypatch.setattr(probe_module, "read_head", counted)
    layers: list[int] = []

    def states(request: Any) -> list[float]:
        layers.append(request.layer)
        return [0.1, -0.2, 0.3, 0.4]

    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(json.dumps({"input": f"q{i}", "output_1": "a", "output_2": "b"}) + "\n" for i in range(12)),
        encoding="utf-8",
    )
    config = {"judge_params.scoring": "PROBE", "judge_params.probe": str(path)}
    backend = ScriptedBackend([], states=states)
    summary = Engine(load_judge_config(PAIRWISE, config), backend).run_file(rows, tmp_path / "out.parquet")
    assert summary.rows == 12
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert {r["preference.status"] for r in table} == {"ok"}  # every answer came from a state
    assert reads == [str(path)]
    assert layers and set(layers) == {2}


def test_a_head_with_hidden_layers_is_format_2_and_judging_reads_it(tmp_path: Path) -> None:
    """A head with a hidden layer writes format 2 and reads back the same arrays; a format-1 file with
    hidden layers, a format-2 file without, and a format this jurist does not know are refused, naming the
    problem."""
    from jurist.models.probe_head import FORMAT_HIDDEN, HiddenLayer

    judge = logprobs_judge()
    rng = np.random.default_rng(4)
    hidden = (
        HiddenLayer(weights=tuple(tuple(r) for r in rng.normal(size=(3, 4)).tolist()), bias=(0.1, 0, -0.1)),
    )
    coef = tuple(tuple(rng.normal(size=3).tolist()) for _ in judge.parts.label_texts)
    head = head_for(judge, hidden=hidden, coef=coef, format=FORMAT_HIDDEN)
    path = head.save(tmp_path / "mlp.json")
    again = load_head(path)
    x = rng.normal(size=(5, 4))
    z = (x - np.asarray(head.mean)) / np.asarray(head.scale)
    h = np.maximum(z @ np.asarray(hidden[0].weights).T + np.asarray(hidden[0].bias), 0.0)
    logits = h @ np.asarray(coef).T + np.asarray(head.intercept)
    expected = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(again.log_probabilities(x), expected, atol=1e-12)
    with pytest.raises(ValueError, match="with hidden layers is 'jurist-probe-head/2'"):
        head_for(judge, hidden=hidden, coef=coef)
    with pytest.raises(ValueError, match="without hidden layers is 'jurist-probe-head/1'"):
        head_for(judge, format=FORMAT_HIDDEN)
    with pytest.raises(ValueError, match="coef needs one row of 3 values"):
        head_for(judge, hidden=hidden, format=FORMAT_HIDDEN)
    newer = json.loads(path.read_text())
    newer["format"] = "jurist-probe-head/9"
    path.write_text(json.dumps(newer))
    with pytest.raises(
        ConfigError, match=r"'jurist-probe-head/9' is not one this jurist reads.*upgrade jurist"
    ):
        load_head(path)
