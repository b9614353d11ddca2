"""The KV cache of a vLLM engine on CPU: vLLM's own VLLM_CPU_KVCACHE_SPACE (whole GiB) where set, which
vLLM 0.32's CPU platform puts over the engine arguments; else an explicit size, else a share of the memory
node, else a fifth of it. A value vLLM would fail on is refused by name, and a size is no share."""

from __future__ import annotations

import pytest

pytest.importorskip("vllm")

from jurist.backends.local.placement import cpu_kv_cache_bytes
from jurist.backends.vllm.params import CPU_MEMORY_SHARE, VLLMEngineParams, cpu_kv_cache_size, memory_share
from jurist.config.inference import InferenceConfig
from jurist.errors import ConfigError

GIB = 2**30


def test_the_order_of_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "2")
    for params in (
        VLLMEngineParams(kv_cache_memory_bytes=123456),
        VLLMEngineParams(gpu_memory_utilization=0.1),
    ):
        assert cpu_kv_cache_size(params) == 2 * GIB
    assert memory_share(InferenceConfig(engine_params={"gpu_memory_utilization": 0.1})) is None
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE")
    assert cpu_kv_cache_size(VLLMEngineParams(kv_cache_memory_bytes=123456)) == 123456
    assert cpu_kv_cache_size(VLLMEngineParams(gpu_memory_utilization=0.1)) == cpu_kv_cache_bytes(0.1)
    assert cpu_kv_cache_size(VLLMEngineParams()) == cpu_kv_cache_bytes(CPU_MEMORY_SHARE)
    assert memory_share(InferenceConfig(engine_params={"gpu_memory_utilization": 0.1})) == 0.1


@pytest.mark.parametrize("value", ["lots", "0", "1.5", "-2"])
def test_a_value_vllm_would_fail_on_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", value)
    with pytest.raises(ConfigError, match=f"VLLM_CPU_KVCACHE_SPACE='{value}': vLLM reads a whole number"):
        cpu_kv_cache_size(VLLMEngineParams())
