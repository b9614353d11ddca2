"""Stages on distinct local vLLM engines stay loaded together: their memory shares must fit one device,
checked before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from jurist.cascade.engine import CascadeEngine
from jurist.cli import app
from jurist.config.cascade import CascadePlan
from jurist.errors import ConfigError


def stage(name: str, model: str, share: float | None) -> dict[str, Any]:
    engine_params = {} if share is None else {"gpu_memory_utilization": share}
    return {
        "name": name,
        "judge_params": {"prompt_template": "Is it true? {text}", "scoring": "LOGPROBS"},
        "inference_config": {"model": {"model_name": model}, "engine_params": engine_params},
    }


PLAN = CascadePlan(("small", "big"), (0.8, None))


@pytest.fixture(autouse=True)
def default_kv_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite sizes every CPU engine's KV cache with VLLM_CPU_KVCACHE_SPACE (tests/conftest.py); a stage
    without a share takes the default share here, as on a user's machine."""
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)


def test_shares_past_the_device_exit_2_before_loading_in_a_run_and_a_bench(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a"}\n')
    refs = []
    for name, share in (("small", 0.5), ("big", 0.6)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(stage(name, f"/nowhere/{name}", share)))
        refs += ["--cascade", str(path)]
    output = tmp_path / "o.parquet"
    args = ["judge", "dataset", "-i", str(rows), "-o", str(output), *refs, "--threshold", "0.8"]
    bench = ["bench", *refs, "--threshold", "0.8", "-i", str(rows), "-o", str(tmp_path / "bench"), "-q"]
    for command in (args, bench):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, result.output
        assert "would take 1.1 of the device's memory (stage 1 0.5, stage 2 0.6)" in result.output
        assert "gpu_memory_utilization" in result.output


def test_shares_that_fit_and_one_shared_engine_pass() -> None:
    CascadeEngine([stage("small", "/m/small", 0.3), stage("big", "/m/big", 0.6)], PLAN)
    # both stages on one model: one engine, whatever its share
    CascadeEngine([stage("small", "/m/one", 0.9), stage("big", "/m/one", 0.9)], PLAN)
    with pytest.raises(ConfigError, match="stay loaded together"):
        CascadeEngine([stage("small", "/m/small", 0.9), stage("big", "/m/big", None)], PLAN)


def test_a_stage_sized_by_vllm_s_cpu_kv_cache_setting_is_a_size_not_a_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "2")
    CascadeEngine([stage("small", "/m/small", 0.9), stage("big", "/m/big", None)], PLAN)
