"""The dtype a local engine computes in, when the user has not chosen one: by what the machine can do.

On a GPU the model's own dtype (vLLM's ``auto``). On a CPU, bfloat16 only where the CPU has instructions
for it (AVX512-BF16 or AMX on x86, BF16 on Arm): without them vLLM's CPU build runs bfloat16 through a
slow fallback ("Failed to create oneDNN linear, fallback to torch linear"); measured on an AVX2-only AMD
EPYC, Qwen2.5-Coder-0.5B prefilled 23 tokens/s in bfloat16 and 139 in float32. Elsewhere float32.
``inference_config.model.torch_dtype_str`` (or a ``dtype`` in ``model_kwargs``) always wins.

The choice carries its reason, which the engine writes into the run's metadata (``jurist info``) and its
start-up log line.
"""

from __future__ import annotations

import pathlib
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

BF16_FLAGS: Final = ("avx512_bf16", "amx_bf16", "bf16")
"""The CPU feature flags (as Linux's /proc/cpuinfo names them) that make bfloat16 fast: x86's AVX512-BF16
and AMX-BF16 (vLLM's oneDNN kernels use them), Arm's BF16 (vLLM lists bfloat16 as native there; not
measured in this project)."""

CPUINFO: Final = pathlib.Path("/proc/cpuinfo")


@dataclass(frozen=True)
class DtypeChoice:
    """What the engine is asked to compute in (``dtype``: a torch dtype name or ``auto``) and why."""

    dtype: str
    reason: str


def cpu_flags(cpuinfo: pathlib.Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (x86 ``flags``, Arm ``Features``); empty where the
    file is absent or unreadable (not Linux)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def bf16_features(flags: Iterable[str] | None = None) -> tuple[str, ...]:
    """The bfloat16 features this CPU has (a subset of :data:`BF16_FLAGS`), from ``flags`` (default: this
    machine's /proc/cpuinfo). Where the flags cannot be read at all, torch's own checks answer
    (``torch.cpu._is_avx512_bf16_supported``, ``_is_amx_tile_supported``), if torch is there."""
    known = frozenset(flags) if flags is not None else cpu_flags()
    if known:
        return tuple(flag for flag in BF16_FLAGS if flag in known)
    try:
        import torch

        found = []
        if torch.cpu._is_avx512_bf16_supported():
            found.append("avx512_bf16")
        if torch.cpu._is_amx_tile_supported():
            found.append("amx_bf16")
        return tuple(found)
    except (ImportError, AttributeError):  # no torch, or a torch without these checks
        return ()


def choose_dtype(
    requested: str | None,
    *,
    on_cpu: bool,
    features: Iterable[str] | None = None,
    setting: str = "model.torch_dtype_str",
) -> DtypeChoice:
    """The dtype to compute in and why.

    Args:
        requested: the dtype the user set (``torch_dtype_str``, or ``dtype`` in ``model_kwargs``); None
            when unset.
        on_cpu: whether the engine runs on the CPU.
        features: the CPU's bfloat16 features (default: :func:`bf16_features` of this machine).
        setting: the name of the setting ``requested`` came from, for the reason.
    """
    if requested is not None:
        return DtypeChoice(requested, f"set by {setting}")
    if not on_cpu:
        return DtypeChoice("auto", "the model's own dtype (GPU)")
    found = tuple(features) if features is not None else bf16_features()
    if found:
        return DtypeChoice("bfloat16", f"this CPU has bfloat16 instructions ({', '.join(found)})")
    return DtypeChoice(
        "float32",
        f"this CPU ({platform.machine() or 'unknown'}) has no bfloat16 instructions (AVX512-BF16, AMX or "
        "Arm BF16): vLLM's bfloat16 falls back to slow kernels there",
    )


def model_dtype(torch_dtype_str: str | None, model_kwargs: Mapping[str, Any], *, on_cpu: bool) -> DtypeChoice:
    """:func:`choose_dtype` for a model's settings: a ``dtype`` in ``model_kwargs`` (passed to the engine
    over everything else) wins over ``torch_dtype_str``."""
    given = model_kwargs.get("dtype")
    if given is not None:
        return choose_dtype(str(given), on_cpu=on_cpu, setting="model.model_kwargs.dtype")
    return choose_dtype(torch_dtype_str, on_cpu=on_cpu)
