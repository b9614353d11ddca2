"""The dtype a local engine computes in when the config sets none: by the CPU's bfloat16 instructions.

The rule is checked on flag sets of both kinds of CPU this project runs on (AVX2 only; AVX512-BF16/AMX),
this machine's reading is checked against torch's own CPU checks, and the real vLLM engine (on the tiny
model) is started as if on a CPU without bfloat16 instructions, with and without ``torch_dtype_str``.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import InferenceConfig
from jurist.backends.local import dtype as compute
from jurist.backends.local.dtype import bf16_features, choose_dtype, cpu_flags, model_dtype
from jurist.engine.run_text import format_info

EPYC_AVX2 = "fpu vme de pse tsc msr sse sse2 ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 bmi1 bmi2 sha_ni"
EPYC_GENOA = EPYC_AVX2 + " avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 avx512_vnni"
SAPPHIRE_RAPIDS = EPYC_AVX2 + " avx512f avx512_bf16 amx_bf16 amx_tile amx_int8"
GRAVITON3 = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid sve bf16 i8mm"


def cpuinfo(tmp_path: Path, key: str, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    processor = f"processor\t: 0\nmodel name\t: some cpu\n{key}\t\t: {flags}\n\n"
    path.write_text(processor * 2)
    return path


@pytest.mark.parametrize(
    ("key", "flags", "found"),
    [
        ("flags", EPYC_AVX2, ()),
        ("flags", EPYC_GENOA, ("avx512_bf16",)),
        ("flags", SAPPHIRE_RAPIDS, ("avx512_bf16", "amx_bf16")),
        ("Features", GRAVITON3, ("bf16",)),
    ],
    ids=["avx2-only", "avx512-bf16", "amx", "arm-bf16"],
)
def test_the_cpus_bf16_features_are_read_from_its_flags(
    tmp_path: Path, key: str, flags: str, found: tuple[str, ...]
) -> None:
    read = cpu_flags(cpuinfo(tmp_path, key, flags))
    assert "sse2" in read or "asimd" in read
    assert bf16_features(read) == found


def test_no_cpuinfo_reads_as_no_flags(tmp_path: Path) -> None:
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_the_rule_float32_without_bf16_instructions_and_the_config_always_wins() -> None:
    plain = choose_dtype(None, on_cpu=True, features=())
    assert plain.dtype == "float32"
    assert "no bfloat16 instructions" in plain.reason
    fast = choose_dtype(None, on_cpu=True, features=("avx512_bf16", "amx_bf16"))
    assert fast.dtype == "bfloat16" and "avx512_bf16, amx_bf16" in fast.reason
    assert choose_dtype(None, on_cpu=False).dtype == "auto"  # a GPU: the model's own dtype, as vLLM picks
    for requested in ("bfloat16", "float16", "float32", "auto"):
        chosen = choose_dtype(requested, on_cpu=True, features=())
        assert chosen.dtype == requested and chosen.reason == "set by model.torch_dtype_str"


def test_a_dtype_in_model_kwargs_wins_and_is_named() -> None:
    chosen = model_dtype("bfloat16", {"dtype": "float16"}, on_cpu=True)
    assert chosen.dtype == "float16" and chosen.reason == "set by model.model_kwargs.dtype"
    assert model_dtype("bfloat16", {}, on_cpu=True).dtype == "bfloat16"
    assert model_dtype(None, {}, on_cpu=False).dtype == "auto"


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"),
    reason="torch's bf16 checks are x86 ones",
)
@pytest.mark.skipif(not have("torch"), reason="torch not installed")
def test_this_machines_reading_agrees_with_torchs_own_checks() -> None:
    import torch

    ours = set(bf16_features())
    assert ("avx512_bf16" in ours) == bool(torch.cpu._is_avx512_bf16_supported())
    if torch.cpu._is_amx_tile_supported():  # AMX tiles come with AMX-BF16 on every CPU that has them
        assert "amx_bf16" in ours


def test_jurist_info_says_what_the_model_computed_in_and_why(tmp_path: Path) -> None:
    reason = choose_dtype(None, on_cpu=True, features=()).reason
    metadata = {
        "judges": [{"name": "t", "source": "generic/truthfulness", "scoring": "GENERATE"}],
        "models": {"t": {"engine": "vllm", "path": "/m", "dtype": "float32", "dtype_reason": reason}},
    }
    shown = format_info(tmp_path / "r.parquet", metadata, finished=True)
    assert f"    computed in float32: {reason}" in shown.splitlines()
    assert "dtype_reason" not in shown


@pytest.mark.engine
@pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")
@pytest.mark.parametrize(("requested", "computed"), [(None, "float32"), ("bfloat16", "bfloat16")])
def test_the_engine_on_a_cpu_without_bf16_instructions(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, requested: str | None, computed: str
) -> None:
    """The tiny model's weights are bfloat16; on an AVX2-only CPU the engine computes in float32 unless the
    config asks for bfloat16. This machine's flags are replaced by an AVX2-only CPU's."""
    from jurist import Engine
    from jurist.backends.vllm.backend import VLLMBackend

    monkeypatch.setattr(compute, "cpu_flags", lambda cpuinfo=None: frozenset(EPYC_AVX2.split()))
    model: dict[str, Any] = {"model_name": str(tiny_model_dir), "model_max_length": 512}
    if requested is not None:
        model["torch_dtype_str"] = requested
    backend = VLLMBackend(InferenceConfig.model_validate({"model": model}))
    try:
        described = backend.describe()
        judge = {"name": "t", "judge_params": {"prompt_template": "Is it true? {text}"}}
        table = Engine(judge, backend).run([{"text": "the sky is blue"}, {"text": "2 + 2 = 5"}])
    finally:
        backend.close()
    assert described["dtype"] == computed
    if requested is None:
        assert "no bfloat16 instructions" in described["dtype_reason"]
    else:
        assert described["dtype_reason"] == "set by model.torch_dtype_str"
    assert table["t.status"].to_pylist() == ["ok", "ok"]
