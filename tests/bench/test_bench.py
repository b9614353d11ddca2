"""``jurist bench``: the measurements' keys and values on the scripted backend, the refusals, the written
files (a real PNG), and the command on the tiny random model with both modes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import ScriptedBackend
from jurist.backends.scripted import ScriptedStreamingBackend
from jurist.bench import BenchSpec, run_bench, write
from jurist.bench.measure import percentile
from jurist.config.inference import InferenceConfig
from jurist.errors import ConfigError
from jurist.records import GenerationRequest, LabelRequest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JUDGE = {
    "name": "j",
    "judge_params": {
        "prompt_template": "Q: {question}",
        "judgment_type": "BOOL",
        "include_explanation": True,
    },
}
METRICS = {
    "rows", "seconds", "rows_per_s", "prompt_tokens", "output_tokens", "prompt_tokens_per_s",
    "output_tokens_per_s", "judged", "parse_rate", "valid_rows", "valid_rows_per_s", "statuses",
    "prefix_cache_hit_rate", "latency_p50_s", "latency_p95_s", "peak_rss_mb", "peak_gpu_mb",
}  # fmt: skip
ROWS = [{"question": f"is {i} even?"} for i in range(12)] + [{"other": "no question"}]


def answer(request: GenerationRequest) -> str:
    text = request.messages[-1].content
    if "7" in text:
        return "not json"
    return json.dumps({"explanation": "checked", "judgment": "Yes" if len(text) % 2 else "No"})


def labels(request: LabelRequest) -> dict[str, float]:
    return {label: -0.1 * (i + 1) for i, label in enumerate(request.labels)}


def check_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG_MAGIC
    from PIL import Image

    with Image.open(path) as image:
        image.verify()
        assert image.size[0] > 300 and image.size[1] > 200


def test_scripted_bench_measures_every_model_and_mode(tmp_path: Path) -> None:
    loaded: list[tuple[str | None, str | None]] = []

    def factory(config: InferenceConfig) -> Any:
        loaded.append((config.model.model_name, "labels" if config.use.label_scores else None))
        if config.model.model_name == "streams":
            return ScriptedStreamingBackend(answer, labels=labels, model_id="streams", window=4)
        return ScriptedBackend(answer, labels=labels, model_id=config.model.model_name or "scripted")

    spec = BenchSpec(
        judges=[JUDGE],
        rows=ROWS,
        models=["batches", "streams"],
        modes=["generation", "logprobs"],
        repeat=2,
        cold_rows=3,
        one_row=4,
    )
    bench = run_bench(spec, factory, progress=None)
    # one model after another; each loaded once for generation and once with the float32 head that
    # label scoring gets in a run (on CPU vLLM decodes 3.4x slower with it: generation is measured without)
    assert loaded == [("batches", None), ("batches", "labels"), ("streams", None), ("streams", "labels")]
    assert {"benchmark", "started", "environment", "settings", "results"} <= set(bench)
    assert {"cpu", "cores", "gpus", "memory_gb"} <= set(bench["environment"]["machine"])
    assert [(r["model"], r["mode"]) for r in bench["results"]] == [
        ("batches", "generation"), ("batches", "logprobs"),
        ("streams", "generation"), ("streams", "logprobs"),
    ]  # fmt: skip
    for entry in bench["results"]:
        assert {"judge", "mode", "model", "load_seconds", "cold", "warm", "runs", "one_row",
                "batched_over_one_row", "load_peak_rss_mb"} <= set(entry)  # fmt: skip
        assert set(entry["warm"]) == METRICS
        assert len(entry["runs"]) == 2 and entry["cold"]["rows"] == 3
        warm = entry["warm"]
        assert warm["rows"] == 13 and warm["judged"] == 12  # the row without a question is not sent
        assert warm["statuses"].get("missing_input") == 1
        assert warm["peak_rss_mb"] > 10
    generation = bench["results"][0]["warm"]
    # rows with a "7" in their prompt do not parse (7 of 12: "is 7 even?")
    assert generation["parse_rate"] == round(11 / 12, 4) and generation["valid_rows"] == 11
    assert bench["results"][1]["warm"]["parse_rate"] == 1.0  # LOGPROBS: no answer to parse
    assert bench["results"][1]["warm"]["valid_rows"] == 12  # a score, no explanation to decode
    assert generation["latency_p50_s"] is None  # a backend answering whole batches: no per-row latency
    streamed = bench["results"][2]["warm"]
    assert streamed["latency_p50_s"] is not None and streamed["latency_p95_s"] >= streamed["latency_p50_s"]
    assert bench["results"][3]["warm"]["latency_p50_s"] is None  # LOGPROBS runs chunk by chunk

    files = write(bench, tmp_path / "out")
    assert json.loads(files["json"].read_text())["results"][0]["warm"]["rows"] == 13
    table = files["markdown"].read_text()
    assert "| batches | j | generation |" in table and "rows/s" in table
    check_png(files["rows_per_s"])
    check_png(files["tokens_per_s"])


def test_reward_mode_measures_reward_models_and_names_what_it_refuses() -> None:
    reward = {
        "name": "rm",
        "judge_params": {"prompt_template": "{question}"},
        "reward_judge_params": {"response_template": "yes"},
    }
    backend = ScriptedBackend(answer, labels=labels, rewards=lambda request: [0.5])
    bench = run_bench(
        BenchSpec(judges=[reward, JUDGE], rows=ROWS, modes=["reward", "generation"]),
        lambda config: backend,
        progress=None,
    )
    measured, reward_in_generation, judge_in_reward, generated = bench["results"]
    assert (measured["judge"], measured["mode"]) == ("rm", "reward")
    assert measured["warm"]["valid_rows"] == 12 and measured["warm"]["output_tokens"] == 0
    assert measured["warm"]["statuses"] == {"ok": 12, "missing_input": 1}
    assert "reward_judge_params" in judge_in_reward["error"] and "warm" not in judge_in_reward
    assert "does not apply to a reward judge" in reward_in_generation["error"]
    assert generated["warm"]["rows"] == 13


def test_refusals_name_the_reason() -> None:
    with pytest.raises(ConfigError, match="unknown mode fast"):
        BenchSpec(judges=[JUDGE], rows=ROWS, modes=["fast"]).check()
    text = {"name": "t", "judge_params": {"prompt_template": "{question}", "judgment_type": "TEXT"}}
    bench = run_bench(
        BenchSpec(judges=[text, JUDGE], rows=ROWS[:3], modes=["logprobs"]),
        lambda config: ScriptedBackend(answer, labels=labels),
        progress=None,
    )
    refused, measured = bench["results"]
    assert "LOGPROBS" in refused["error"] and "warm" not in refused
    assert measured["warm"]["rows"] == 3


def test_probe_mode_measures_a_head_on_the_model_cut_at_its_layer(tmp_path: Path) -> None:
    """``--modes logprobs,probe`` with ``--judge_params.probe HEAD``: the head goes to the probe measurement
    only (LOGPROBS refuses the key), which loads the engine for hidden states at the head's layer and counts
    every row with a state as valid, nothing decoded."""
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.models.probe_head import ProbeHead, ProbeModel
    from jurist.records import StateRequest

    judge = Judge(load_judge_config(JUDGE, {"judge_params.scoring": "LOGPROBS"}))
    head = ProbeHead(
        model=ProbeModel(name="m", weights=None, num_layers=4, hidden_size=2),
        layer=3,
        judge=judge.name,
        prompt_fingerprint=judge.prompt_hash,
        answer_fingerprint=judge.schema_hash,
        labels=judge.parts.label_texts,
        mean=(0.0, 0.0),
        scale=(1.0, 1.0),
        coef=((1.0, 0.0), (0.0, 1.0)),
        intercept=(0.0, 0.0),
    ).save(tmp_path / "head.json")
    asked: list[int | None] = []

    def state(request: StateRequest) -> list[float]:
        return [float(len(request.messages[-1].content) % 3), 1.0]

    def factory(config: InferenceConfig) -> Any:
        asked.append(config.use.hidden_states_layer)
        return ScriptedBackend(answer, labels=labels, states=state)

    spec = BenchSpec(
        judges=[JUDGE], rows=ROWS, modes=["logprobs", "probe"], overrides={"judge_params.probe": str(head)}
    )
    logprobs, probe = run_bench(spec, factory, progress=None)["results"]
    assert sorted(asked, key=str) == [3, None]  # one load for each: the probe's at the head's layer
    assert (logprobs["mode"], probe["mode"]) == ("logprobs", "probe")
    assert probe["warm"]["valid_rows"] == 12 and probe["warm"]["output_tokens"] == 0
    assert probe["warm"]["statuses"] == {"ok": 12, "missing_input": 1}
    assert logprobs["warm"]["valid_rows"] == 12
    refused = run_bench(BenchSpec(judges=[JUDGE], rows=ROWS, modes=["probe"]), factory, progress=None)
    assert "needs judge_params.probe" in refused["results"][0]["error"]


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0


@pytest.mark.skipif(not have("vllm", "matplotlib"), reason="vLLM or matplotlib not installed")
def test_bench_command_on_the_tiny_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        "judge_params:\n  prompt_template: 'Question: {question}'\n  judgment_type: BOOL\n"
        "  include_explanation: true\n  max_explanation_chars: 30\n"
        "inference_config:\n  engine_params: {gpu_memory_utilization: 0.05}\n"
    )
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({"question": f"Is {i} prime?"}) + "\n" for i in range(30)))
    out = tmp_path / "bench"
    command = [
        sys.executable, "-m", "jurist", "bench", "-c", str(judge), "-i", str(source), "-o", str(out),
        "--model", str(tiny_model_dir), "--modes", "generation,logprobs", "--rows", "16", "--cold-rows", "4",
        "--one-row", "--one-row-rows", "3",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "[bench]" in done.stderr  # progress
    bench = json.loads((out / "bench.json").read_text())
    assert [r["mode"] for r in bench["results"]] == ["generation", "logprobs"]
    for entry in bench["results"]:
        assert set(entry["warm"]) == METRICS
        assert entry["warm"]["rows"] == 16 and entry["load_seconds"] > 0
        assert entry["warm"]["prefix_cache_hit_rate"] is not None  # vLLM reports its cache
        assert entry["batched_over_one_row"] > 0
    assert bench["results"][0]["warm"]["latency_p95_s"] is not None  # vLLM streams: per-row latency
    assert bench["results"][1]["warm"]["parse_rate"] == 1.0
    check_png(out / "rows_per_s.png")
    check_png(out / "tokens_per_s.png")
    assert "| generation |" in (out / "bench.md").read_text()
