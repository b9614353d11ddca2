"""Oumi's own config files, copied unchanged into tests/data/oumi (see its NOTICE): every judge config of
Oumi's configs/projects/judges loads and renders a row (the rule-based ones judge it), and real Oumi
inference configs load as a judge's inference_config: mapped, warned about, or refused with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jurist import ConfigError, Engine, ScriptedBackend, load_judge_config
from jurist.config.types import InferenceEngine, JudgmentType, ResponseFormat
from jurist.judges.judge import Judge

DATA = Path(__file__).parents[1] / "data" / "oumi"
JUDGES = sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.yaml"))
JUDGES = [name for name in JUDGES if not name.startswith("inference/")]
ROW = {
    "request": "Write a function that adds two numbers.",
    "response": "def add(a, b):\n    return a + b  # call 555-1234 on error",
    "context": "Paris is the capital of France.",
    "question": "What is the capital of France?",
    "answer": "Paris.",
}


def test_every_judge_config_of_oumi_is_here() -> None:
    assert len(JUDGES) == 15
    assert {name.split("/")[0] for name in JUDGES} == {"code", "doc_qa", "generic", "rule_based"}
    assert (DATA / "NOTICE").read_text().count("<- configs/projects/judges/") == 15
    assert "Apache License" in (DATA / "LICENSE").read_text()


@pytest.mark.parametrize("name", JUDGES)
def test_each_oumi_judge_loads_and_renders_a_row(name: str) -> None:
    path = DATA / name
    config = load_judge_config(path)
    judge = Judge(config)
    assert config.warnings == []
    assert config.name == path.stem
    raw = yaml.safe_load(path.read_text())
    if "rule_judge_params" in raw:
        assert not judge.needs_model
        assert judge.start(ROW).requests == ()  # judged on the spot, no model
        table = Engine(config, ScriptedBackend([])).run([ROW])
        assert table[f"{config.name}.status"].to_pylist() == ["ok"]
        return
    jp = raw["judge_params"]
    assert config.judge_params.judgment_type is JudgmentType(jp["judgment_type"])
    assert config.judge_params.response_format is ResponseFormat(jp["response_format"])
    assert config.judge_params.include_explanation is jp["include_explanation"]
    messages = judge.render(ROW)
    assert messages[0].role == "system" and messages[-1].role == "user"
    assert "[BEGIN DATA]" in messages[-1].content
    for field in judge.required_fields:
        assert str(ROW[field]) in messages[-1].content
    for value in jp.get("template_variables", {}).values():  # format_compliance's variables are filled
        assert str(value) in messages[0].content
    assert "{" + "response_format}" not in messages[0].content
    inference = config.inference_config
    assert inference.engine is InferenceEngine.OPENAI and inference.model.model_name == "gpt-4o"
    assert inference.generation.max_new_tokens == 8192 and inference.generation.temperature == 0.0


def test_oumis_judges_read_the_columns_oumi_documents() -> None:
    reads = {name: Judge(load_judge_config(DATA / name)).required_fields for name in JUDGES}
    assert reads["generic/format_compliance.yaml"] == {"response"}
    assert reads["generic/truthfulness.yaml"] == {"request", "response"}
    assert reads["code/security.yaml"] == {"request", "response"}
    assert reads["doc_qa/relevance.yaml"] == {"context", "question", "answer"}
    assert reads["rule_based/regex_match_phone.yaml"] == {"response"}


def as_judge(tmp_path: Path, name: str) -> Path:
    """An Oumi inference config (or the inference_config section of another Oumi config), unchanged, as a
    judge's inference_config."""
    raw = yaml.safe_load((DATA / "inference" / name).read_text())
    inference = raw.get("inference_config", raw) if "strategy" in raw else raw
    path = tmp_path / Path(name).name
    path.write_text(
        yaml.safe_dump({"judge_params": {"prompt_template": "{request}"}, "inference_config": inference})
    )
    return path


INFERENCE: list[tuple[str, dict[str, Any]]] = [
    (
        "apis/anthropic/infer_claude_3_5_sonnet.yaml",
        {"engine": "OPENAI", "provider": "ANTHROPIC", "api_url": "https://api.anthropic.com/v1"},
    ),
    (
        "apis/anthropic/infer_claude_sonnet_tool_calling.yaml",
        {"provider": "ANTHROPIC", "warns": ["generation.tool_choice"]},
    ),
    (
        "apis/atlascloud/infer_deepseek_v3.yaml",
        {"engine": "OPENAI", "api_key_env": "ATLASCLOUD_API_KEY", "provider": None},
    ),
    ("apis/gemini/infer_gemini_2_5_pro.yaml", {"provider": "GEMINI", "api_key_env": "GEMINI_API_KEY"}),
    (
        "recipes/llama4/inference/scout_instruct_together_infer.yaml",
        {"provider": "TOGETHER", "api_url": "https://api.together.xyz/v1"},
    ),
    (
        "recipes/llama3_1/inference/8b_sglang_infer.yaml",
        {"provider": "SGLANG", "api_url": "http://127.0.0.1:6864/v1", "warns": ["model.attn_implementation"]},
    ),
    (
        "recipes/llama3_1/inference/8b_rvllm_infer.yaml",
        {
            "engine": "REMOTE_VLLM",
            "api_url": "http://localhost:6864/v1/chat/completions",
            "warns": ["model.attn_implementation"],
        },
    ),
    (
        "recipes/llama3_1/inference/8b_infer.yaml",
        {"engine": "NATIVE", "warns": ["model.attn_implementation"]},
    ),
    (
        "recipes/gpt_oss/inference/20b_vllm_infer.yaml",
        {"engine": "VLLM", "warns": ["generation.skip_special_tokens"]},
    ),
    ("examples/synthesis/question_answer_synth.yaml", {"provider": "ANTHROPIC", "politeness_policy": 60.0}),
]


@pytest.mark.parametrize(("name", "expected"), INFERENCE, ids=[n for n, _ in INFERENCE])
def test_oumi_inference_configs_load_as_a_judges_inference_config(
    tmp_path: Path, name: str, expected: dict[str, Any]
) -> None:
    path = as_judge(tmp_path, name)
    config = load_judge_config(path)
    inference = config.inference_config
    if "engine" in expected:
        assert inference.engine is InferenceEngine(expected["engine"])
    if "provider" in expected:
        assert inference.provider == expected["provider"]
    remote = inference.remote_params
    for key in ("api_url", "api_key_env", "politeness_policy"):
        if key in expected:
            assert getattr(remote, key) == expected[key]
    warned = sorted(w.split(" ", 1)[0].removeprefix("inference_config.") for w in config.warnings)
    assert warned == sorted(expected.get("warns", []))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("recipes/llama4/inference/scout_instruct_gguf_macos_infer.yaml", "engine LLAMACPP"),
        ("apis/vertex/infer_llama_3_3_70b.yaml", "engine GOOGLE_VERTEX"),
    ],
)
def test_oumi_engines_jurist_cannot_run_are_refused_with_the_reason(
    tmp_path: Path, name: str, fragment: str
) -> None:
    path = as_judge(tmp_path, name)
    with pytest.raises(ConfigError) as info:
        load_judge_config(path)
    assert fragment in str(info.value) and str(path) in str(info.value)
