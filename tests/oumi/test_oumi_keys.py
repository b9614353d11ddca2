"""Oumi's config keys: every key of Oumi's JudgeParams and InferenceConfig that its configs and docs use is
accepted. Keys that mean something in jurist are mapped; the others are dropped with one warning that names
the key and the file; unknown keys are still refused; jurist's own names keep working."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from jurist import ConfigError, load_judge_config
from jurist.config.inference import OUMI_ENGINES, InferenceConfig
from jurist.config.models import JudgeConfig
from jurist.config.types import InferenceEngine
from jurist.engine.metadata import judge_entry
from jurist.judges.judge import Judge


def write(tmp_path: Path, inference: dict[str, Any], name: str = "oumi_judge.yaml", **judge: Any) -> Path:
    data = {
        "judge_params": {"prompt_template": "Q: {request}\nA: {response}", **judge},
        "inference_config": inference,
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def oumi_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Oumi setting" in r.getMessage()]


# ------------------------------------------------------------------------------------------ mapped keys


def test_model_revision_is_revision(tmp_path: Path) -> None:
    config = load_judge_config(write(tmp_path, {"model": {"model_name": "m", "model_revision": "abc123"}}))
    assert config.inference_config.model.revision == "abc123"
    assert config.warnings == []


def test_oumis_and_jurists_name_for_one_key_must_agree(tmp_path: Path) -> None:
    model = {"model_name": "m", "model_revision": "a", "revision": "b"}
    with pytest.raises(ConfigError, match="model_revision"):
        load_judge_config(write(tmp_path, {"model": model}))
    assert load_judge_config(write(tmp_path, {"model": {**model, "revision": "a"}})).warnings == []


def test_device_map_places_a_native_model(tmp_path: Path) -> None:
    inference = {"engine": "NATIVE", "model": {"model_name": "m", "device_map": "cpu"}}
    config = load_judge_config(write(tmp_path, inference))
    assert config.inference_config.engine_params == {"device": "cpu"}
    assert config.warnings == []
    inference["engine_params"] = {"device": "cuda:0"}  # jurist's own key wins
    assert load_judge_config(write(tmp_path, inference)).inference_config.engine_params == {
        "device": "cuda:0"
    }


def test_device_map_auto_is_what_every_engine_does(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for engine in ("VLLM", "NATIVE"):
        inference = {"engine": engine, "model": {"model_name": "m", "device_map": "auto"}}
        config = load_judge_config(write(tmp_path, inference, name=f"{engine}.yaml"))
        assert config.inference_config.engine_params == {} and config.warnings == []
    assert oumi_warnings(caplog) == []


def test_remote_params_are_mapped(tmp_path: Path) -> None:
    remote = {
        "api_url": "http://127.0.0.1:9/v1",
        "api_key_env_varname": "MY_KEY",
        "max_retries": 7,
        "connection_timeout": 20.0,
        "politeness_policy": 60,
        "requests_per_minute": 100,
        "retry_backoff_base": 2.0,
        "retry_backoff_max": 10.0,
        "user_id": "team-a",
        "num_workers": 50,
    }
    config = load_judge_config(write(tmp_path, {"engine": "REMOTE_VLLM", "remote_params": remote}))
    params = config.inference_config.remote_params
    assert params.api_key_env == "MY_KEY" and params.timeout_s == 20.0 and params.max_retries == 7
    assert params.politeness_policy == 60.0 and params.requests_per_minute == 100
    assert (params.retry_backoff_base, params.retry_backoff_max) == (2.0, 10.0)
    assert params.user_id == "team-a" and params.num_workers == 50
    assert config.warnings == []


def test_an_inline_api_key_is_kept_out_of_results(tmp_path: Path) -> None:
    config = load_judge_config(
        write(tmp_path, {"engine": "OPENAI", "remote_params": {"api_key": "sk-secret"}})
    )
    assert config.inference_config.remote_params.api_key is not None
    assert config.inference_config.remote_params.api_key.get_secret_value() == "sk-secret"
    reloaded = load_judge_config(config)  # what the engine does with a loaded config
    assert reloaded.inference_config.remote_params.api_key.get_secret_value() == "sk-secret"  # type: ignore[union-attr]
    assert "sk-secret" not in str(judge_entry(Judge(config)))
    assert "sk-secret" not in repr(config)


def test_oumis_nulls_mean_the_default(tmp_path: Path) -> None:
    inference = {"engine": None, "remote_params": None, "generation": {"top_p": None, "stop_strings": None}}
    config = load_judge_config(write(tmp_path, inference))
    assert config.inference_config.engine is InferenceEngine.VLLM
    assert config.inference_config.generation.top_p == 1.0
    assert config.inference_config.generation.stop_strings == []


def test_prompt_template_placeholders_are_checked_against_the_template(tmp_path: Path) -> None:
    good = write(tmp_path, {}, prompt_template_placeholders=["request", "response"])
    assert Judge(load_judge_config(good)).required_fields == {"request", "response"}
    bad = write(tmp_path, {}, name="bad.yaml", prompt_template_placeholders=["request", "answer"])
    with pytest.raises(ConfigError, match="prompt_template_placeholders") as info:
        load_judge_config(bad)
    assert str(bad) in str(info.value)


def test_placeholders_are_counted_after_template_variables(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {},
        prompt_template="{lead} {response}",
        template_variables={"lead": "Judge this:"},
        prompt_template_placeholders=["response"],
    )
    assert load_judge_config(path).judge_params.prompt_template_placeholders == ["response"]


def test_settings_that_would_change_the_model_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="adapter_model"):
        load_judge_config(write(tmp_path, {"model": {"model_name": "m", "adapter_model": "lora/dir"}}))
    with pytest.raises(ConfigError, match="load_pretrained_weights"):
        load_judge_config(write(tmp_path, {"model": {"model_name": "m", "load_pretrained_weights": False}}))
    quiet = {"model_name": "m", "adapter_model": None, "load_pretrained_weights": True}
    assert load_judge_config(write(tmp_path, {"model": quiet})).warnings == []


# ------------------------------------------------------------------------------------------ warned keys

WARNED = [
    ("", "input_path", "in.jsonl"),
    ("", "output_path", "out.jsonl"),
    ("", "progress_path", "progress.json"),
    ("model", "device_map", "cuda"),
    ("model", "tokenizer_pad_token", "<|endoftext|>"),
    ("model", "tokenizer_kwargs", {"use_fast": False}),
    ("model", "processor_kwargs", {"size": 3}),
    ("model", "compile", True),
    ("model", "chat_template", "llama3-instruct"),
    ("model", "attn_implementation", "sdpa"),
    ("model", "enable_liger_kernel", True),
    ("model", "shard_for_eval", True),
    ("model", "freeze_layers", ["embed"]),
    ("model", "tool_call_parser", "hermes"),
    ("generation", "exclude_prompt_from_response", False),
    ("generation", "stop_token_ids", [2]),
    ("generation", "logit_bias", {"5": 1.0}),
    ("generation", "num_beams", 4),
    ("generation", "guided_decoding", {"regex": "Yes|No"}),
    ("generation", "skip_special_tokens", False),
    ("generation", "tool_choice", "auto"),
    ("generation", "parallel_tool_calls", False),
    ("remote_params", "input_tokens_per_minute", 1000),
    ("remote_params", "output_tokens_per_minute", 1000),
    ("remote_params", "use_adaptive_concurrency", True),
]


@pytest.mark.parametrize(
    ("section", "key", "value"), WARNED, ids=[f"{s}.{k}".strip(".") for s, k, _ in WARNED]
)
def test_keys_without_meaning_here_warn_once_naming_key_and_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, section: str, key: str, value: Any
) -> None:
    inference: dict[str, Any] = {"model": {"model_name": "m"}}
    if section:
        inference.setdefault(section, {})[key] = value
    else:
        inference[key] = value
    path = write(tmp_path, inference)
    dotted = f"inference_config.{section}.{key}" if section else f"inference_config.{key}"
    with caplog.at_level(logging.WARNING, logger="jurist"):
        config = load_judge_config(path)
    assert [w for w in config.warnings if dotted in w], config.warnings
    logged = [m for m in oumi_warnings(caplog) if dotted in m]
    assert len(logged) == 1, logged  # logged once per load, naming the file and the key
    assert str(path) in logged[0] and "ignored" in logged[0]
    assert load_judge_config(path).warnings == config.warnings  # each load lists it again


def test_use_sampling_false_warns_only_when_sampling(tmp_path: Path) -> None:
    greedy = {"generation": {"use_sampling": False, "temperature": 0.0}}
    assert load_judge_config(write(tmp_path, greedy)).warnings == []
    sampled = {"generation": {"use_sampling": False, "temperature": 0.7}}
    assert any(
        "use_sampling" in w for w in load_judge_config(write(tmp_path, sampled, name="s.yaml")).warnings
    )


def test_values_that_change_nothing_are_accepted_silently(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inference = {
        "model": {"model_name": "m", "chat_template": "auto", "compile": False, "device_map": "auto"},
        "generation": {
            "use_cache": True,
            "use_sampling": True,
            "num_beams": 1,
            "exclude_prompt_from_response": True,
            "skip_special_tokens": True,
            "parallel_tool_calls": True,
            "temperature": 0.5,
        },
        "remote_params": {"batch_completion_window": "24h", "use_adaptive_concurrency": False},
    }
    with caplog.at_level(logging.WARNING, logger="jurist"):
        config = load_judge_config(write(tmp_path, inference))
    assert config.warnings == [] and oumi_warnings(caplog) == []


def test_unknown_keys_are_still_refused(tmp_path: Path) -> None:
    for section in ("model", "generation", "remote_params"):
        path = write(tmp_path, {section: {"flux_capacitor": 1}}, name=f"{section}.yaml")
        with pytest.raises(ConfigError) as info:
            load_judge_config(path)
        message = str(info.value)
        assert f"inference_config.{section}.flux_capacitor: unknown key" in message and str(path) in message
    with pytest.raises(ConfigError, match=r"judge_params\.prompt_template_placeholder: unknown key"):
        load_judge_config(write(tmp_path, {}, name="jp.yaml", prompt_template_placeholder=["request"]))


def test_jurists_own_names_keep_working(tmp_path: Path) -> None:
    inference = {
        "engine": "REMOTE_VLLM",
        "model": {"model_name": "m", "revision": "r1"},
        "remote_params": {"api_url": "http://127.0.0.1:9/v1", "api_key_env": "K", "timeout_s": 5},
    }
    config = load_judge_config(write(tmp_path, inference))
    assert config.inference_config.model.revision == "r1"
    assert config.inference_config.remote_params.api_key_env == "K"
    assert config.inference_config.remote_params.timeout_s == 5.0


def test_python_objects_take_oumis_keys_too() -> None:
    config = InferenceConfig.model_validate(
        {"model": {"model_name": "m", "model_revision": "x", "compile": True}}
    )
    assert config.model.revision == "x"
    assert JudgeConfig.model_validate(
        {"judge_params": {"prompt_template": "{a}", "prompt_template_placeholders": ["a"]}}
    ).judge_params.prompt_template_placeholders == ["a"]


# ------------------------------------------------------------------------------------------ engines

PROVIDERS = [name for name, (_, url, _) in OUMI_ENGINES.items() if url is not None]


@pytest.mark.parametrize("name", PROVIDERS)
def test_oumis_hosted_engines_run_on_the_openai_backend(tmp_path: Path, name: str) -> None:
    config = load_judge_config(write(tmp_path, {"engine": name, "model": {"model_name": "m"}}))
    inference = config.inference_config
    _, url, key_env = OUMI_ENGINES[name]
    assert inference.engine is InferenceEngine.OPENAI and inference.provider == name
    assert inference.remote_params.api_url == url and inference.remote_params.api_key_env == key_env


def test_anthropic_uses_its_openai_compatible_endpoint_and_key(tmp_path: Path) -> None:
    config = load_judge_config(write(tmp_path, {"engine": "ANTHROPIC", "model": {"model_name": "claude"}}))
    remote = config.inference_config.remote_params
    assert remote.api_url == "https://api.anthropic.com/v1" and remote.api_key_env == "ANTHROPIC_API_KEY"


def test_a_provider_url_or_key_variable_in_the_config_wins(tmp_path: Path) -> None:
    remote = {"api_url": "http://127.0.0.1:9/v1", "api_key_env_varname": "OTHER"}
    config = load_judge_config(write(tmp_path, {"engine": "TOGETHER", "remote_params": remote}))
    assert config.inference_config.remote_params.api_url == "http://127.0.0.1:9/v1"
    assert config.inference_config.remote_params.api_key_env == "OTHER"


def test_google_gemini_is_gemini(tmp_path: Path) -> None:
    config = load_judge_config(write(tmp_path, {"engine": "GOOGLE_GEMINI"}))
    assert config.inference_config.provider == "GEMINI"


def test_your_own_servers_need_a_url(tmp_path: Path) -> None:
    for name in ("REMOTE", "SGLANG"):
        with pytest.raises(ConfigError, match=f"engine {name} needs inference_config.remote_params.api_url"):
            load_judge_config(write(tmp_path, {"engine": name}))
    remote = {"api_url": "http://127.0.0.1:6864/generate"}
    sglang = load_judge_config(write(tmp_path, {"engine": "SGLANG", "remote_params": remote}))
    assert sglang.inference_config.remote_params.api_url == "http://127.0.0.1:6864/v1"
    assert sglang.inference_config.remote_params.api_key_env is None


@pytest.mark.parametrize(
    ("name", "fragment"), [("LLAMACPP", "llama.cpp"), ("GOOGLE_VERTEX", "Vertex"), ("BEDROCK", "AWS")]
)
def test_engines_jurist_cannot_run_are_clear_errors(tmp_path: Path, name: str, fragment: str) -> None:
    path = write(tmp_path, {"engine": name})
    with pytest.raises(ConfigError) as info:
        load_judge_config(path)
    message = str(info.value)
    assert f"engine {name}" in message and fragment in message and str(path) in message
    assert "VLLM, NATIVE, REMOTE_VLLM, OPENAI" in message  # what is supported


def test_an_engine_override_takes_oumis_names(tmp_path: Path) -> None:
    config = load_judge_config(write(tmp_path, {}), {"inference_config.engine": "anthropic"})
    assert config.inference_config.engine is InferenceEngine.OPENAI
    assert config.inference_config.provider == "ANTHROPIC"
