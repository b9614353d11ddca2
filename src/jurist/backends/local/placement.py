"""Where a local engine runs: CPU or GPU, how much memory its KV cache gets, and its start-up environment."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from jurist.errors import ConfigError

KV_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"


def gpu_name() -> str:
    import torch

    return str(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else "gpu"


def vllm_on_cpu() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


@contextlib.contextmanager
def environment(defaults: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables that are unset, and restore the environment afterwards."""
    added = [key for key in defaults if key not in os.environ]
    for key in added:
        os.environ[key] = defaults[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def cpu_kv_cache_bytes(share: float) -> int:
    """The KV-cache size on CPU: ``share`` of the memory node the engine runs on, at most 80 % of what is
    available there now."""
    try:
        from vllm.utils.cpu_resource_utils import get_allowed_cpu_list, get_memory_node_info

        node = get_memory_node_info(get_allowed_cpu_list()[0].numa_node)
        total, available = int(node.total_memory), int(node.available_memory)
    except Exception:  # another vLLM layout: the whole machine's memory
        import psutil

        memory = psutil.virtual_memory()
        total, available = int(memory.total), int(memory.available)
    return max(1 << 28, min(int(total * share), int(available * 0.8)))


def cpu_kv_space_env() -> int | None:
    """``VLLM_CPU_KVCACHE_SPACE`` in bytes: vLLM's CPU platform reads it as a whole number of GiB and, where
    it is set, sizes the KV cache by it over any engine argument; None when it is unset or empty. A value
    vLLM would fail on (not a whole number, or under 1) is a :class:`~jurist.errors.ConfigError` naming it."""
    raw = os.environ.get(KV_SPACE_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(
            f"{KV_SPACE_ENV}={raw!r}: vLLM reads a whole number of GiB, at least 1, for the CPU KV cache "
            "(e.g. 4), and uses it over engine_params; unset it to size the cache with engine_params"
        )
    return int(raw) * 2**30
