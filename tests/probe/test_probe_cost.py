"""Early-exit students (``jurist probe fit --max-cost``) through scripted engines: the cost of each layer
measured against the whole model in LOGPROBS, shallowest first and no deeper than the budget; the head fitted
on the layers within it, every state read through the engine; the refusal when none is within it; and an
MLP reward head refused up front. The same route on the real vLLM engine is in test_probe_engine.py (slow
tier)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from installed import have
from jurist import ScriptedBackend
from jurist.config.inference import InferenceConfig
from jurist.config.loading import load_judge_config
from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource
from jurist.models.probe_head import load_head
from jurist.probe.cost import measure_costs
from jurist.probe.examples import examples
from jurist.probe.fit import FitSettings
from jurist.probe.job import ProbeFit, fit_probe
from jurist.records import LabelRequest, StateRequest

pytestmark = pytest.mark.skipif(not have("sklearn"), reason="scikit-learn not installed")

TEACHER_SECONDS = 0.3  # a scripted call of the whole model in LOGPROBS
LAYER_SECONDS = 0.03  # a scripted call of the model cut after one layer, per layer


def model_folder(tmp_path: Path) -> Path:
    """A model folder as the early-exit route reads it before anything loads: its config (8 layers)."""
    folder = tmp_path / "model"
    folder.mkdir()
    config = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 8, "hidden_size": 3}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def judge_config(folder: Path) -> dict[str, Any]:
    return {
        "name": "good",
        "judge_params": {"prompt_template": "Judge this text: {text}", "judgment_type": "BOOL"},
        "inference_config": {"engine": "VLLM", "model": {"model_name": str(folder)}},
    }


def rows(count: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    words = ["good", "fine", "bad", "poor"]
    return [{"id": f"r{i}", "text": " ".join(rng.choice(words, size=3)), "y": None} for i in range(count)]


def factory(made: list[tuple[str, int | None]]) -> Any:
    """Backends whose calls take as long as the layers they run: the whole model's LOGPROBS 0.3 s, a model
    cut after k layers 0.03 k s; a state says whether the row has the word "good" (plus the layer)."""

    def make(config: InferenceConfig) -> ScriptedBackend:
        layer = config.use.hidden_states_layer
        made.append(("states" if layer is not None else "labels", layer))

        def labels(request: LabelRequest) -> dict[str, float]:
            time.sleep(TEACHER_SECONDS / 10)  # ten requests a call below
            return {label: -1.0 for label in request.labels}

        def states(request: StateRequest) -> list[float]:
            time.sleep(LAYER_SECONDS * request.layer / 10)
            text = request.messages[-1].content
            return [1.0 if "good" in text else -1.0, float(request.layer), float(len(text) % 5)]

        return ScriptedBackend([], labels=labels, states=states)

    return make


def test_layers_are_timed_shallowest_first_and_no_deeper_than_the_budget(tmp_path: Path) -> None:
    judge = Judge(
        load_judge_config(judge_config(model_folder(tmp_path)), {"judge_params.scoring": "LOGPROBS"})
    )
    some = rows(14)
    found = examples(judge, some, ["Yes" if i % 2 else "No" for i in range(len(some))])
    made: list[tuple[str, int | None]] = []
    costs = measure_costs(judge, found, [6, 1, 3, 8], budget=0.4, rows=10, factory=factory(made))
    # the whole model first, then 1, 3 and 6 layers: 6 costs 0.6 of it, so 8 is never loaded
    assert made == [("labels", None), ("states", 1), ("states", 3), ("states", 6)]
    assert costs.rows == 10 and sorted(costs.layers) == [1, 3, 6]
    assert costs.ratio(1) < costs.ratio(3) < 0.4 < costs.ratio(6)
    assert costs.affordable == (1, 3)
    described = costs.as_dict()
    assert described["within"] == [1, 3] and described["max_cost"] == 0.4
    assert set(described["by_layer"]) == {"1", "3", "6"}


def test_an_early_exit_fit_reads_every_state_through_the_engine(tmp_path: Path) -> None:
    folder = model_folder(tmp_path)
    config = tmp_path / "good.yaml"
    config.write_text(json.dumps(judge_config(folder)), encoding="utf-8")
    data = rows(40)
    for row in data:
        row["y"] = "Yes" if "good" in row["text"] else "No"
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    made: list[tuple[str, int | None]] = []
    job = ProbeFit(
        config=str(config),
        input=source,
        output=tmp_path / "head.json",
        labels=LabelSource(column="y"),
        id_column="id",
        layers=(1, 3, 6),
        settings=FitSettings(folds=4, inner_folds=3, curve=(10,), repeats=2),
        max_cost=0.4,
        cost_rows=10,
        factory=factory(made),
    )
    head, report = fit_probe(job)
    assert ("states", 6) in made  # timed, over the budget: no state is read at it
    assert not any(kind == "labels" for kind, _ in made[1:])  # the whole model is only timed
    assert report["cost"]["within"] == [1, 3]
    assert head.layer in (1, 3) and head.fit["layers_tried"] == [1, 3]
    assert report["feature_passes"]["engine"]["rows"] == 40  # every row, at each layer within the budget
    assert "transformers" not in report["feature_passes"]
    assert report["accuracy"]["estimate"] > 0.9  # the state says "good" outright
    saved = load_head(tmp_path / "head.json")
    assert (saved.model.num_layers, saved.model.hidden_size, saved.model.name) == (8, 3, str(folder))

    too_tight = ProbeFit(**{**job.__dict__, "max_cost": 0.05, "output": tmp_path / "none.json"})
    with pytest.raises(InputError, match=r"no layer judges within --max-cost 0.05: the shallowest tried, 1"):
        fit_probe(too_tight)
    assert not (tmp_path / "none.json").exists()


def test_a_reward_head_with_an_mlp_is_refused_before_any_row_is_read(tmp_path: Path) -> None:
    job = ProbeFit(
        config="generic/safety",
        input=tmp_path / "not-there.jsonl",
        output=tmp_path / "head.json",
        pairs="pair",
        settings=FitSettings(mlp_units=8),
    )
    with pytest.raises(InputError, match=r"a reward head \(--pairs\) is linear"):
        fit_probe(job)
