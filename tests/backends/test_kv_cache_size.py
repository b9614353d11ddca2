"""The KV cache of a vLLM engine on CPU: an explicit size, else a share of the memory node, else vLLM's own
VLLM_CPU_KVCACHE_SPACE (GiB), else a fifth of the node; a setting that is no size is refused by name."""

from __future__ import annotations

import pytest

pytest.importorskip("vllm")

from jurist.backends.local.placement import cpu_kv_cache_bytes
from jurist.backends.vllm.backend import cpu_kv_cache_size
from jurist.backends.vllm.params import CPU_MEMORY_SHARE, VLLMEngineParams
from jurist.errors import ConfigError

GIB = 2**30


def test_the_order_of_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1.5")
    assert cpu_kv_cache_size(VLLMEngineParams(kv_cache_memory_bytes=123456)) == 123456
    assert cpu_kv_cache_size(VLLMEngineParams(gpu_memory_utilization=0.1)) == cpu_kv_cache_bytes(0.1)
    assert cpu_kv_cache_size(VLLMEngineParams()) == int(1.5 * GIB)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "0")  # vLLM's "default"
    assert cpu_kv_cache_size(VLLMEngineParams()) == cpu_kv_cache_bytes(CPU_MEMORY_SHARE)
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE")
    assert cpu_kv_cache_size(VLLMEngineParams()) == cpu_kv_cache_bytes(CPU_MEMORY_SHARE)


@pytest.mark.parametrize("value", ["lots", "-2"])
def test_a_setting_that_is_no_size_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", value)
    with pytest.raises(ConfigError, match=f"VLLM_CPU_KVCACHE_SPACE='{value}' is not a KV-cache size in GiB"):
        cpu_kv_cache_size(VLLMEngineParams())
