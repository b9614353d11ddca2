"""Distillation and reward heads end to end, as a user runs them on the tiny model: a teacher's results file
(written by a real ``jurist judge dataset`` run, its label probabilities scripted by a known rule) distilled
with ``jurist probe fit --verdicts --pilot`` (the layer chosen on a pilot with transformers, every row's
state then read through vLLM's pooling runner, chunked and cached); a reward head fitted on preference pairs
(``--pairs``) that scores one response at a time; the states vLLM gives equal the ones transformers gives."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from installed import have
from jurist import Engine, ScriptedBackend
from jurist.models.probe_head import load_head
from jurist.records import LabelRequest

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not have("vllm", "sklearn"), reason="vLLM or scikit-learn not installed"),
]

JUDGE_YAML = """\
name: graded
judge_params:
  system_instruction: Say whether the response does what the request asks.
  prompt_template: |
    Request: {request}
    Response: {response}
  judgment_type: BOOL
  scoring: LOGPROBS
inference_config:
  engine: VLLM
  model:
    model_max_length: 512
    torch_dtype_str: float32
  engine_params:
    gpu_memory_utilization: 0.05
"""
WORDS = ["good", "bad", "fast", "slow", "exact", "vague", "kind", "rude", "long", "short", "clear", "messy"]


def jurist(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *map(str, args)], capture_output=True, text=True, timeout=900
    )


def responses(pairs: int, seed: int) -> list[dict[str, Any]]:
    """Two responses per request; the one with more 'good' is preferred (ties: the first)."""
    rng = random.Random(seed)
    rows = []
    for index in range(pairs):
        texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 10))) for _ in range(2)]
        better = 0 if texts[0].count("good") >= texts[1].count("good") else 1
        for side, text in enumerate(texts):
            rows.append(
                {
                    "id": f"p{index}{'ab'[side]}",
                    "pair": f"p{index}",
                    "request": f"Describe thing {index}",
                    "response": text,
                    "preferred": side == better,
                }
            )
    return rows


def teacher_probability(request: LabelRequest) -> dict[str, float]:
    """The scripted teacher: P(Yes) grows with the count of 'good' in the response."""
    text = request.messages[-1].content
    p = 1 / (1 + np.exp(-(text.count("good") - 0.5)))
    return {"Yes": float(np.log(p)), "No": float(np.log1p(-p))}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("distil")
    config = folder / "graded.yaml"
    config.write_text(JUDGE_YAML, encoding="utf-8")
    rows = responses(30, seed=0)
    data = folder / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    teacher = folder / "teacher.parquet"
    Engine(str(config), ScriptedBackend([], labels=teacher_probability), id_column="id").run_file(
        data, teacher
    )
    return {"folder": folder, "config": config, "data": data, "rows": rows, "teacher": teacher}


def test_a_teachers_probabilities_are_distilled_through_the_engines_states(
    work: dict[str, Any], tiny_model_dir: Path
) -> None:
    head = work["folder"] / "head.json"
    fit = (
        "probe", "fit", "-c", work["config"], "-i", work["data"], "--id-column", "id", "-o", head,
        "--model", tiny_model_dir, "--verdicts", work["teacher"], "--pilot", "24", "--folds", "3",
        "--layers", "1,2", "--json",
    )  # fmt: skip
    done = jurist(*fit)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["objective"] == "label distributions" and report["rows"] == 60
    passes = report["feature_passes"]
    assert passes["transformers"]["rows"] == 24 and passes["transformers"]["layers"] == [1, 2]
    assert passes["engine"]["rows"] == 60 and passes["engine"]["layers"] == [report["layer"]]
    assert report["pilot"]["rows"] == 24 and set(report["pilot"]["by_layer"]) == {"1", "2"}
    target = report["target_probability"]
    assert -1 <= target["low"] <= target["spearman"] <= target["high"] <= 1
    chunks = sorted((work["folder"] / "head.json.states").glob("states-*.npy"))
    assert chunks, "the engine's states are kept beside the head"
    again = jurist(*fit)  # the same fit again: both passes read their caches
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["feature_passes"]["engine"]["rows"] == 0  # every chunk came from the cache
    assert rerun["feature_passes"]["transformers"]["rows"] == 0  # the pilot's features too
    assert rerun["accuracy"] == report["accuracy"]
    fitted = load_head(head)
    assert fitted.fit["objective"] == "label distributions" and fitted.labels == ("Yes", "No")


def test_the_engines_states_equal_transformers(work: dict[str, Any], tiny_model_dir: Path) -> None:
    """The states the fit read through vLLM (float32, the model cut after the layer) are those the
    transformers pass gives for the same prompts: the pilot's features and the engine's chunks agree."""
    from jurist.backends.hf.backend import TransformersBackend
    from jurist.config.inference import InferenceConfig
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.probe.examples import examples
    from jurist.probe.features import engine_states

    judge = Judge(
        load_judge_config(str(work["config"]), {"inference_config.model.model_name": str(tiny_model_dir)})
    )
    found = examples(judge, work["rows"][:8], [True] * 8)
    via_engine = engine_states(judge, found, 1, work["folder"] / "check.states", chunk=5).states[:, 0, 0]
    native = TransformersBackend(
        InferenceConfig.model_validate({"engine": "NATIVE", "model": {"model_name": str(tiny_model_dir),
                                                                     "torch_dtype_str": "float32"}})
    )  # fmt: skip
    try:
        ids = [p for p in native.prompt_ids([row[0] for row in found.requests]) if not isinstance(p, str)]
        via_transformers = native.states(ids, [1])[0][:, 0]
    finally:
        native.close()
    np.testing.assert_allclose(via_engine, via_transformers, rtol=2e-3, atol=2e-3)


@pytest.mark.slow  # Bradley-Terry on states is in the default tier (test_fit_statistics), as are the engine's
# states (above) and PROBE judging with a head (test_probe_engine)
def test_a_reward_head_from_pairs_scores_one_response_and_pairs_are_antisymmetric(
    work: dict[str, Any], tiny_model_dir: Path
) -> None:
    head = work["folder"] / "reward.json"
    done = jurist(
        "probe", "fit", "-c", work["config"], "-i", work["data"], "--id-column", "id", "-o", head,
        "--model", tiny_model_dir, "--label-column", "preferred", "--pairs", "pair", "--folds", "3",
        "--layers", "1", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (
        report["objective"] == "preference pairs" and report["kind"] == "preference" and report["rows"] == 30
    )
    assert "length_rule" in report["baselines"]
    # data without pairs: one response per row, one score each, which filter --top-k reads
    singles = work["folder"] / "singles.jsonl"
    singles.write_text("".join(json.dumps({"request": r["request"], "response": r["response"]}) + "\n"
                               for r in work["rows"][:10]), encoding="utf-8")  # fmt: skip
    out = work["folder"] / "scored.parquet"
    judged = jurist(
        "judge", "dataset", "-c", work["config"], "-i", singles, "-o", out, "--model", tiny_model_dir,
        "--judge_params.scoring", "PROBE", "--judge_params.probe", head, "-q",
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    table = pq.read_table(out).to_pylist()
    assert len(table) == 10 and {r["graded.status"] for r in table} == {"ok"}
    scores = [r["graded.score"] for r in table]
    assert all(0 < s < 1 for s in scores)
    kept = work["folder"] / "kept.parquet"
    filtered = jurist("filter", out, "-o", kept, "--top-k", "3", "--by", "graded.score", "--judge-columns")
    assert filtered.returncode == 0, filtered.stderr
    assert sorted(r["graded.score"] for r in pq.read_table(kept).to_pylist()) == sorted(scores)[-3:]
    # on a pair, P(a) = sigmoid(r(a) - r(b)) with r the log-odds of Yes: a pair and its mirror add up to one
    reward = np.log(scores) - np.log1p(-np.asarray(scores))
    for a, b in zip(reward[0::2], reward[1::2], strict=True):
        assert 1 / (1 + np.exp(b - a)) + 1 / (1 + np.exp(a - b)) == pytest.approx(1.0, abs=1e-12)
