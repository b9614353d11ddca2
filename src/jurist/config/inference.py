"""The ``inference_config`` section: the judge model, the engine that runs it, and sampling.

``engine_params`` is a mapping that this package does not interpret: each engine's backend validates its
own keys (vLLM's are in :mod:`jurist.backends.vllm`), so that an engine's argument names live in that
engine's module only.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from jurist.config.types import InferenceEngine, StrictModel


class ModelParams(StrictModel):
    """The judge model. ``model_name`` is a Hugging Face id or a local folder; None means the embedded
    default (SmolLM2-135M-Instruct)."""

    model_name: str | None = None
    tokenizer_name: str | None = None
    revision: str | None = None
    model_max_length: int | None = Field(default=None, ge=16, description="vLLM max_model_len.")
    torch_dtype_str: str | None = Field(default=None, description="auto, bfloat16, float16, float32.")
    trust_remote_code: bool = False
    model_kwargs: dict[str, Any] = Field(default_factory=dict)


class GenerationParams(StrictModel):
    """Sampling parameters. ``max_new_tokens`` None means: the output schema's bound (guided) or 1024."""

    max_new_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int | None = None
    min_p: float = Field(default=0.0, ge=0.0, le=1.0)
    seed: int | None = None
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    stop_strings: list[str] = Field(default_factory=list)
    batch_size: int | None = Field(default=None, ge=1, description="Rows per inference call (a chunk).")


class RemoteParams(StrictModel):
    """An OpenAI-compatible server, for engines REMOTE_VLLM and OPENAI."""

    api_url: str | None = None
    api_key_env: str | None = Field(default=None, description="Environment variable that holds the key.")
    num_workers: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)


class InferenceConfig(StrictModel):
    """Which model judges, on which engine, with which sampling parameters."""

    model: ModelParams = Field(default_factory=ModelParams)
    engine: InferenceEngine = InferenceEngine.VLLM
    generation: GenerationParams = Field(default_factory=GenerationParams)
    remote_params: RemoteParams = Field(default_factory=RemoteParams)
    engine_params: dict[str, Any] = Field(
        default_factory=dict,
        description="Settings of the local engine, validated by that engine's backend (see the README).",
    )
