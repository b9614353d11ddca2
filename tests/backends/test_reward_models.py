"""Reward models and classifiers on the real engines: a random-weight LlamaForSequenceClassification
built in the session, through vLLM's pooling runner (CPU build) and through transformers (NATIVE)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import Engine, load_judge_config
from jurist.backends import create_backend

pytestmark = [pytest.mark.engine, pytest.mark.skipif(not have("vllm", "torch"), reason="vLLM not installed")]

ROWS = [
    {"request": f"What is {i} plus {i}?", "response": f"It is {2 * i}." + " Surely." * (i % 4)}
    for i in range(24)
]
# bfloat16 on vLLM's CPU build against float32 in transformers: the same weights, summed in other orders
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    from tiny_model import build_tiny_classifier

    return {n: build_tiny_classifier(tmp_path_factory.mktemp(f"classifier{n}"), num_labels=n) for n in (1, 2)}


def judge(model: Path, engine: str, labels: list[str] | None = None) -> Any:
    params: dict[str, Any] = {"labels": labels} if labels else {}
    engine_params: dict[str, Any] = {}
    return load_judge_config(
        {
            "name": "rm",
            "judge_params": {"prompt_template": "{request}"},
            "reward_judge_params": params,
            "inference_config": {
                "engine": engine,
                "model": {"model_name": str(model), "model_max_length": 1024},
                "engine_params": engine_params,
            },
        }
    )


def run(config: Any) -> Any:
    backend = create_backend(config.inference_config)
    try:
        return Engine(config, backend).run(ROWS)
    finally:
        backend.close()


def test_a_reward_model_gives_the_same_rewards_on_vllm_and_transformers(classifiers: dict[int, Path]) -> None:
    vllm_table = run(judge(classifiers[1], "VLLM"))
    native_table = run(judge(classifiers[1], "NATIVE"))
    for table in (vllm_table, native_table):
        assert table["rm.status"].to_pylist() == ["ok"] * len(ROWS)
    on_vllm, on_native = vllm_table["rm.reward"].to_pylist(), native_table["rm.reward"].to_pylist()
    assert len(set(on_native)) > 1  # the rows are told apart
    assert max(abs(a - b) for a, b in zip(on_vllm, on_native, strict=True)) <= TOLERANCE


def test_a_two_label_classifier_gives_probabilities_that_sum_to_one(classifiers: dict[int, Path]) -> None:
    for engine in ("VLLM", "NATIVE"):
        table = run(judge(classifiers[2], engine, labels=["bad", "good"]))
        assert table["rm.status"].to_pylist() == ["ok"] * len(ROWS)
        totals = [
            a + b for a, b in zip(table["rm.p.bad"].to_pylist(), table["rm.p.good"].to_pylist(), strict=True)
        ]
        assert totals == pytest.approx([1.0] * len(ROWS), abs=1e-6)
        assert table["rm.score"].to_pylist() == table["rm.p.good"].to_pylist()


def test_an_over_long_conversation_is_too_long(classifiers: dict[int, Path]) -> None:
    config = judge(classifiers[1], "NATIVE")
    backend = create_backend(config.inference_config)
    try:
        table = Engine(config, backend).run([{"request": "word " * 3000, "response": "x"}, ROWS[0]])
    finally:
        backend.close()
    assert table["rm.status"].to_pylist() == ["too_long", "ok"]
