"""Probe heads end to end, as a user runs them: ``jurist probe fit`` on the tiny model (a real YAML judge, a
real JSONL file, transformers), then ``jurist judge dataset`` in scoring PROBE on the real vLLM engine (the
pooling runner on the model cut after the head's layer) and on NATIVE. Every input row gets one output row
with a winner and p_a; a row's p_a is one minus its mirror's; vLLM's and transformers' heads agree (the same
state reached two ways); a head is refused under another model and under another prompt, naming both."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from installed import have
from jurist.models.probe_head import load_head
from jurist.models.weights import weights_fingerprint

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not have("vllm", "sklearn"), reason="vLLM or scikit-learn not installed"),
]

JUDGE_YAML = """\
name: pref
judge_params:
  system_instruction: Decide which response answers the request better.
  prompt_template: |
    Request: {question}
    Response A: {response_a}
    Response B: {response_b}
pairwise_judge_params:
  allow_tie: false
inference_config:
  engine: NATIVE
  model:
    model_max_length: 512
    torch_dtype_str: float32
"""
WORDS = ["good", "bad", "fast", "slow", "exact", "vague", "kind", "rude", "long", "short", "clear", "messy"]


def jurist(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *map(str, args)], capture_output=True, text=True, timeout=600
    )


def pair_rows(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
        b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
        label = "a" if a.count("good") >= b.count("good") else "b"
        rows.append(
            {"id": f"r{index}", "question": f"Say {index}", "response_a": a, "response_b": b, "label": label}
        )
    return rows


def mirrored(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    swap = {"a": "b", "b": "a"}
    return [
        {
            **r,
            "id": r["id"] + "m",
            "response_a": r["response_b"],
            "response_b": r["response_a"],
            "label": swap[r["label"]],
        }
        for r in rows
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def fitted(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("probe")
    config = work / "pref.yaml"
    config.write_text(JUDGE_YAML, encoding="utf-8")
    train = write(work / "train.jsonl", pair_rows(40, seed=0))
    head = work / "head.json"
    done = jurist(
        "probe", "fit", "-c", config, "-i", train, "-o", head, "--model", tiny_model_dir,
        "--label-column", "label", "--folds", "3", "--layers", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    test_rows = pair_rows(8, seed=1)
    data = write(work / "test.jsonl", test_rows + mirrored(test_rows))
    return {"work": work, "config": config, "head": head, "data": data, "rows": 8, "printed": done.stdout}


def judge(fitted: dict[str, Any], model: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return jurist(
        "judge", "dataset", "-c", fitted["config"], "-i", fitted["data"], "-o", out, "--model", model,
        "--judge_params.scoring", "PROBE", "--judge_params.probe", fitted["head"], "-q", *extra,
    )  # fmt: skip


def test_the_fit_writes_a_head_that_names_its_model_layer_and_prompt(
    fitted: dict[str, Any], tiny_model_dir: Path
) -> None:
    head = load_head(fitted["head"])
    assert head.model.weights == weights_fingerprint(str(tiny_model_dir))
    assert (head.layer, head.model.num_layers, head.model.hidden_size) == (1, 2, 128)
    assert head.labels == ("A", "B") and head.judge == "pref"
    assert head.metrics["rows"] == 40 and head.fit["labels"] == "column 'label' of the input"
    printed = fitted["printed"]
    for line in (
        "probe head ",
        "the judge's own verdict (LOGPROBS)",
        "length rule (fitted per fold)",
        "majority label",
    ):
        assert line in printed
    assert "learning curve" in printed and "ECE" in printed


def test_vllm_judges_every_row_with_the_head_and_mirrors_are_antisymmetric(
    fitted: dict[str, Any], tiny_model_dir: Path
) -> None:
    out = fitted["work"] / "vllm.parquet"
    done = judge(fitted, tiny_model_dir, out, "--inference_config.engine", "VLLM",
                 "--inference_config.engine_params.gpu_memory_utilization", "0.05")  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out).to_pylist()
    assert len(table) == 2 * fitted["rows"]
    assert {r["pref.status"] for r in table} == {"ok"}
    assert {r["pref.winner"] for r in table} <= {"a", "b"}
    p_a = [r["pref.p_a"] for r in table]
    n = fitted["rows"]
    for index in range(n):
        assert p_a[index] + p_a[n + index] == pytest.approx(1.0, abs=1e-6)
    fitted["vllm_p_a"] = p_a
    metadata = json.loads(pq.read_schema(out).metadata[b"jurist"])
    described = metadata["models"]["pref"]
    assert described["engine"] == "vllm" and described["weights"] == weights_fingerprint(str(tiny_model_dir))
    (entry,) = metadata["judges"]
    assert entry["scoring"] == "PROBE" and entry["probe"]["layer"] == 1
    assert entry["probe"]["path"] == str(fitted["head"].resolve()) and len(entry["probe"]["sha256"]) == 64


def test_native_gives_the_same_probabilities_as_vllm(fitted: dict[str, Any], tiny_model_dir: Path) -> None:
    """vLLM's pooled state of a model cut after layer 1 and transformers' final norm of hidden_states[1]
    are the same state: the head's p_a agree on every row (float32 on both)."""
    out = fitted["work"] / "native.parquet"
    done = judge(fitted, tiny_model_dir, out)
    assert done.returncode == 0, done.stderr
    native = [r["pref.p_a"] for r in pq.read_table(out).to_pylist()]
    assert native == pytest.approx(fitted["vllm_p_a"], abs=2e-3)


def test_a_head_is_refused_under_another_model_naming_both(
    fitted: dict[str, Any], tiny_model_dir: Path, tmp_path: Path
) -> None:
    from tiny_model import build_tiny_model

    other = build_tiny_model(tmp_path / "other", seed=1)
    done = judge(fitted, other, tmp_path / "o.parquet", "--inference_config.engine", "VLLM")
    assert done.returncode == 2
    assert weights_fingerprint(str(tiny_model_dir)) in done.stderr  # the head's model
    assert weights_fingerprint(str(other)) in done.stderr  # the engine's
    assert not (tmp_path / "o.parquet").exists()


def test_a_head_is_refused_under_another_prompt(
    fitted: dict[str, Any], tiny_model_dir: Path, tmp_path: Path
) -> None:
    done = judge(
        fitted, tiny_model_dir, tmp_path / "o.parquet", "--judge_params.system_instruction", "Be brief."
    )
    assert done.returncode == 2
    assert "does not match the probe head" in done.stderr and "prompt" in done.stderr


@pytest.mark.slow
def test_an_early_exit_head_is_timed_fitted_and_judged_on_vllm(
    fitted: dict[str, Any], tiny_model_dir: Path
) -> None:
    """``probe fit --max-cost``: the whole model in LOGPROBS and the model cut after layer 1 timed on vLLM,
    the head fitted on states the pooling runner gave (no transformers pass), then judged in PROBE."""
    work = fitted["work"]
    head = work / "early.json"
    engine = ("--inference_config.engine", "VLLM", "--inference_config.engine_params.gpu_memory_utilization",
              "0.05")  # fmt: skip
    train = write(work / "early.jsonl", pair_rows(40, seed=3))
    done = jurist(
        "probe", "fit", "-c", fitted["config"], "-i", train, "-o", head, "--model", tiny_model_dir,
        "--label-column", "label", "--folds", "3", "--layers", "1", "--max-cost", "5", "--cost-rows", "8",
        "--json", *engine,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cost"]["within"] == [1] and report["cost"]["rows"] == 8
    assert 0 < report["cost"]["by_layer"]["1"]["of_teacher"] <= 5
    assert set(report["feature_passes"]) == {"engine"} and report["feature_passes"]["engine"]["rows"] == 40
    assert load_head(head).layer == 1
    out = work / "early.parquet"
    judged = jurist(
        "judge", "dataset", "-c", fitted["config"], "-i", fitted["data"], "-o", out,
        "--model", tiny_model_dir, "--judge_params.scoring", "PROBE", "--judge_params.probe", head, "-q",
        *engine,
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    assert {r["pref.status"] for r in pq.read_table(out).to_pylist()} == {"ok"}


POINTWISE_YAML = """\
name: good
judge_params:
  system_instruction: >-
    You grade one response to one request. Read the request, then the response, and decide whether the
    response is good: it answers what was asked, it is correct, it is clear, and it says no more than the
    request needs. A response that is short and right is good; one that is long and wrong is not. Say Yes
    when the response is good and No when it is not. Every row shares these instructions, so an engine with
    a prefix cache reads them once and computes each row's own tokens only.
  prompt_template: |
    Request: {request}
    Response: {response}
    Is the response good?
  judgment_type: BOOL
inference_config:
  engine: VLLM
  model:
    model_max_length: 512
    torch_dtype_str: float32
"""


@pytest.mark.slow
def test_a_pooled_head_is_fitted_through_vllm_and_judged_alike_on_vllm_and_native(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """``probe fit --pool last_mean``: every state through vLLM's pooling runner (every token's state, the
    response's mean beside the last token's), a format-3 head twice the model's width; PROBE judging with it
    on vLLM and on transformers (the same states reached two ways) gives the same probabilities."""
    config = tmp_path / "good.yaml"
    config.write_text(POINTWISE_YAML, encoding="utf-8")
    rng = random.Random(5)
    rows = []
    for index in range(40):
        response = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
        label = "Yes" if "good" in response else "No"
        rows.append({"id": f"r{index}", "request": f"Say {index}", "response": response, "label": label})
    train, test = write(tmp_path / "train.jsonl", rows[:32]), write(tmp_path / "test.jsonl", rows[32:])
    head = tmp_path / "pooled.json"
    done = jurist(
        "probe", "fit", "-c", config, "-i", train, "-o", head, "--model", tiny_model_dir,
        "--label-column", "label", "--folds", "3", "--layers", "1", "--pool", "last_mean", "--json",
        "--inference_config.engine_params.gpu_memory_utilization", "0.05",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["feature_passes"]) == {"engine"} and report["feature_passes"]["engine"]["rows"] == 32
    assert report["feature"] == {"pooling": "last_mean", "field": "response"}
    fitted = load_head(head)
    assert (fitted.format, fitted.pooling, fitted.pooled_field) == (
        "jurist-probe-head/3",
        "last_mean",
        "response",
    )
    assert fitted.feature_size == 2 * 128 and len(fitted.mean) == 256
    probabilities = {}
    vllm = ("--inference_config.engine_params.gpu_memory_utilization", "0.05")
    for engine, extra in (("VLLM", vllm), ("NATIVE", ("--inference_config.engine", "NATIVE"))):
        out = tmp_path / f"{engine}.parquet"
        judged = jurist(
            "judge", "dataset", "-c", config, "-i", test, "-o", out, "--model", tiny_model_dir,
            "--judge_params.scoring", "PROBE", "--judge_params.probe", head, "-q", *extra,
        )  # fmt: skip
        assert judged.returncode == 0, judged.stderr
        table = pq.read_table(out).to_pylist()
        assert len(table) == 8 and {r["good.status"] for r in table} == {"ok"}
        probabilities[engine] = [r["good.judgment_p.Yes"] for r in table]
    assert probabilities["NATIVE"] == pytest.approx(probabilities["VLLM"], abs=2e-3)
