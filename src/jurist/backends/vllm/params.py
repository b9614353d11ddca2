"""``inference_config.engine_params`` for engine VLLM: the arguments jurist sets or passes to vLLM's engine
(:class:`VLLMEngineParams`), validated before any model loads, their defaults, and the memory share an
engine of a config takes (:func:`memory_share`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from jurist.backends.local.placement import cpu_kv_cache_bytes, cpu_kv_space_env, vllm_on_cpu
from jurist.backends.vllm.watchdog import DEFAULT_STALL_S
from jurist.config.inference import InferenceConfig
from jurist.config.types import StrictModel
from jurist.errors import ConfigError
from jurist.records import EngineUse, GenerationRequest

DEFAULT_STRUCTURED_BACKEND = "guidance"
CPU_MEMORY_SHARE = 0.2
GPU_MEMORY_SHARE = 0.9
# prefix caching reuses whole blocks: vLLM's CPU default of 128 tokens recomputes up to 127 tokens of every
# shared prefix; 32 is the smallest block the CPU attention kernel takes (measured in the README)
CPU_BLOCK_SIZE = 32


class VLLMEngineParams(StrictModel):
    """``inference_config.engine_params`` for engine VLLM: the vLLM engine arguments jurist sets or passes."""

    gpu_memory_utilization: float | None = Field(
        default=None,
        gt=0.0,
        le=1.0,
        description="Share of GPU memory vLLM reserves (default 0.9); on CPU, the share of the memory node "
        "given to the KV cache (default 0.2; vLLM's VLLM_CPU_KVCACHE_SPACE, where set, overrides it).",
    )
    kv_cache_memory_bytes: int | None = Field(default=None, ge=1, description="An explicit KV-cache size.")
    tensor_parallel_size: int = Field(default=1, ge=1)
    """GPUs one engine spreads the model over."""
    enable_prefix_caching: bool = True
    """Reuse the KV cache of shared prompt prefixes (judge instructions, rubrics, few-shot turns)."""
    enforce_eager: bool | None = Field(default=None, description="Default: on CPU, off on GPU.")
    max_num_seqs: int | None = Field(default=None, ge=1)
    """Sequences the engine decodes at once (vLLM's default when unset)."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """Tokens per engine step (vLLM's default when unset)."""
    block_size: int | None = Field(
        default=None,
        ge=1,
        description="Tokens per KV-cache block, the granularity of prefix caching (default: 32 on CPU, "
        "vLLM's own choice on GPU).",
    )
    structured_outputs_backend: str | None = Field(
        default=None,
        description="vLLM structured-output backend: guidance (default), outlines, xgrammar, auto.",
    )
    batch_invariant: bool = Field(
        default=False,
        description="vLLM's batch-invariant mode (VLLM_BATCH_INVARIANT=1): a row's verdict at temperature 0 "
        "does not depend on what shares its batch. CUDA, ROCm and XPU devices only; set it on the first "
        "engine of a process.",
    )
    head_dtype: Literal["auto", "float32", "model"] = Field(
        default="auto",
        description="The dtype of the lm_head projection (vLLM's hf_overrides head_dtype). auto (default): "
        "float32 when a judge on the engine reads label probabilities (LOGPROBS scoring or "
        "label_probabilities: from bfloat16 logits they move in steps of about 1/8 nat and tie), else the "
        "model's dtype (on CPU, vLLM casts the weight to float32 at every decoding step: generating with a "
        "float32 head measured 3.4x slower). float32 or model: always that.",
    )
    stall_timeout_s: float | None = Field(
        default=DEFAULT_STALL_S,
        gt=0,
        description="When vLLM's engine core runs in a process of its own (vLLM's default on GPUs): how long "
        "one engine step may take before the run stops as stalled (exit 2, committed chunks kept); null: "
        "no bound. A dead engine process stops the run within about a second either way.",
    )
    stream_window: int | None = Field(
        default=None,
        ge=1,
        description="Requests kept in the engine while streaming (default: 2 x max_num_seqs).",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Other vLLM engine arguments, passed as is."
    )


def memory_share(config: InferenceConfig) -> float | None:
    """The share of the device's memory an engine of this config takes: its ``gpu_memory_utilization``, else
    the default of the device vLLM runs on; None when it sets ``kv_cache_memory_bytes`` or, on CPU,
    ``VLLM_CPU_KVCACHE_SPACE`` is set (a size, not a share), or vLLM is not installed (then the share given,
    if any)."""
    ep = engine_params(config.engine_params)
    if ep.kv_cache_memory_bytes is not None:
        return None
    try:
        on_cpu = vllm_on_cpu()
    except ImportError:
        return ep.gpu_memory_utilization
    if on_cpu and cpu_kv_space_env() is not None:
        return None  # VLLM_CPU_KVCACHE_SPACE: a size, which vLLM puts over the share
    if ep.gpu_memory_utilization is not None:
        return ep.gpu_memory_utilization
    return CPU_MEMORY_SHARE if on_cpu else GPU_MEMORY_SHARE


def lm_head_dtype(ep: VLLMEngineParams, use: EngineUse) -> str:
    """The lm_head's dtype: ``engine_params.head_dtype``, whose ``auto`` is float32 on an engine whose judges
    read label probabilities (``use.label_scores``) and the model's own (``auto``) otherwise."""
    return "float32" if ep.head_dtype == "auto" and use.label_scores else ep.head_dtype


def engine_params(values: Mapping[str, Any]) -> VLLMEngineParams:
    """Validate ``engine_params`` for engine VLLM (a :class:`ConfigError` names the key and allowed ones)."""
    try:
        return VLLMEngineParams.model_validate(dict(values))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(
                    f"{key}: unknown key; allowed keys: {', '.join(VLLMEngineParams.model_fields)}"
                )
            else:
                problems.append(f"{key}: {err['msg']} (got {err.get('input')!r})")
        raise ConfigError("; ".join(problems), field="inference_config.engine_params") from None


def server_fields(request: GenerationRequest) -> dict[str, Any]:
    """The fields of an OpenAI-style request body that only ``vllm serve`` reads: the constraint and the
    sampling parameters OpenAI's API lacks."""
    body: dict[str, Any] = {}
    constraint = request.constraint
    if constraint is not None:
        if constraint.regex is not None:
            body["structured_outputs"] = {"regex": constraint.regex}
        elif constraint.choices is not None:
            body["structured_outputs"] = {"choice": list(constraint.choices)}
        else:
            body["structured_outputs"] = {"json": dict(constraint.json_schema or {})}
    if request.top_k is not None:
        body["top_k"] = request.top_k
    if request.min_p:
        body["min_p"] = request.min_p
    if request.prefix:  # the last assistant message is the answer's start: continue it
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
    return body


def cpu_kv_cache_size(ep: VLLMEngineParams) -> int:
    """The KV cache of an engine on CPU, in bytes: ``VLLM_CPU_KVCACHE_SPACE`` GiB where set (vLLM's CPU
    platform puts it over the engine arguments), else ``kv_cache_memory_bytes``, else
    ``gpu_memory_utilization`` of the memory node, else :data:`CPU_MEMORY_SHARE` of it
    (:func:`~jurist.backends.local.placement.cpu_kv_cache_bytes`)."""
    from_env = cpu_kv_space_env()
    if from_env is not None:
        return from_env
    if ep.kv_cache_memory_bytes is not None:
        return ep.kv_cache_memory_bytes
    if ep.gpu_memory_utilization is not None:
        return cpu_kv_cache_bytes(ep.gpu_memory_utilization)
    return cpu_kv_cache_bytes(CPU_MEMORY_SHARE)
