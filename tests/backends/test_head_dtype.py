"""The lm_head in float32 for judges that read label probabilities: what vLLM is told, what a run
shares, and engine NATIVE's float32 projection checked against a computation of its own."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import Engine, InferenceConfig, ScriptedBackend
from jurist.backends.vllm.params import engine_params, lm_head_dtype
from jurist.records import EngineUse, LabelRequest, Message

LOGPROBS = {"name": "lp", "judge_params": {"prompt_template": "Is it true? {text}", "scoring": "LOGPROBS"}}
GENERATE = {"name": "gen", "judge_params": {"prompt_template": "Is it true? {text}"}}
LABELLED = {
    "name": "lab",
    "judge_params": {"prompt_template": "Is it true? {text}", "label_probabilities": True},
}


def test_vllm_takes_float32_for_label_scores_and_an_explicit_choice_stands() -> None:
    auto = engine_params({"gpu_memory_utilization": 0.2})
    assert lm_head_dtype(auto, EngineUse(label_scores=True)) == "float32"
    assert lm_head_dtype(auto, EngineUse()) == "auto"  # generation alone keeps the model's dtype
    assert lm_head_dtype(auto, EngineUse(hidden_states_layer=3)) == "auto"  # a probe engine reads no labels
    model = engine_params({"head_dtype": "model"})
    assert lm_head_dtype(model, EngineUse(label_scores=True)) == "model"


@pytest.mark.parametrize(
    ("judges", "head"),
    [
        ([GENERATE], None),
        ([LOGPROBS], "float32"),
        ([LABELLED], "float32"),
        ([GENERATE, LOGPROBS], "float32"),  # one engine shared: a judge that reads labels decides
    ],
)
def test_a_run_asks_for_the_float32_head_when_a_judge_reads_labels(
    judges: list[Any], head: str | None
) -> None:
    made: list[InferenceConfig] = []

    def factory(config: InferenceConfig) -> Any:
        made.append(config)
        return ScriptedBackend(
            ['{"judgment": "Yes"}'], labels=lambda r: {"Yes": -0.1, "No": -2.0}, cycle=True
        )

    Engine(judges, backend_factory=factory).run([{"text": "x"}])
    assert len(made) == 1  # one engine for every judge on the model
    assert made[0].use == EngineUse(label_scores=head == "float32")
    assert "head_dtype" not in made[0].engine_params  # the config's engine_params are left as given


@pytest.mark.skipif(not have("torch", "transformers"), reason="torch/transformers not installed")
def test_native_projects_label_scores_in_float32(tiny_model_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from jurist.backends.hf.backend import TransformersBackend

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.bfloat16).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    requests = [
        LabelRequest((Message("user", f"Is {i} prime? Answer Yes or No."),), ("Yes", "No"), "", "")
        for i in range(12)
    ]
    wide = TransformersBackend.from_model(model, tokenizer, batch_size=4)
    narrow = TransformersBackend.from_model(model, tokenizer, batch_size=4, head_dtype="model")
    assert wide.describe()["label_head_dtype"] == "float32"
    assert narrow.describe()["label_head_dtype"] == "bfloat16"
    scored = [s.logprobs for s in wide.score_labels(requests)]
    coarse = [s.logprobs for s in narrow.score_labels(requests)]

    # the reference: the final hidden state of each prompt alone, projected in float64
    weight = model.get_output_embeddings().weight.detach().double()
    errors: dict[str, list[float]] = {"float32": [], "bfloat16": []}
    for request, got, rough in zip(requests, scored, coarse, strict=True):
        assert got is not None and rough is not None
        text = tokenizer.apply_chat_template(
            [m.as_dict() for m in request.messages], tokenize=False, add_generation_prompt=True
        )
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        label_ids = []
        for label in request.labels:
            full = tokenizer(text + label, add_special_tokens=False)["input_ids"]
            assert full[: len(ids)] == ids and len(full) == len(ids) + 1  # one token after the prompt
            label_ids.append(full[-1])
        with torch.inference_mode():
            hidden = model.model(input_ids=torch.tensor([ids])).last_hidden_state[0, -1].double()
        reference = torch.log_softmax(weight @ hidden, dim=-1)
        for label, token in zip(request.labels, label_ids, strict=True):
            errors["float32"].append(abs(got[label] - float(reference[token])))
            errors["bfloat16"].append(abs(rough[label] - float(reference[token])))
    assert max(errors["float32"]) < 2e-3
    # bfloat16 logits are rounded to 8 significant bits: the float32 head is far nearer the reference
    assert sum(errors["float32"]) < sum(errors["bfloat16"]) / 3
    assert all(math.isfinite(v) for s in scored if s for v in s.values())
