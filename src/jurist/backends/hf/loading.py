"""Loading a Hugging Face model and its tokenizer for engine NATIVE (causal LMs and sequence classifiers).

torch and transformers are imported inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jurist.backends.hf.params import NativeEngineParams, engine_params
from jurist.config.inference import InferenceConfig, ModelParams
from jurist.errors import BackendError
from jurist.models.resolve import ResolvedModel, resolve_model

# torch_dtype_str -> name of the torch dtype ("auto": the dtype the checkpoint was saved in).
_DTYPES: Mapping[str, str] = MappingProxyType(
    {
        "auto": "auto",
        "float32": "float32",
        "fp32": "float32",
        "float": "float32",
        "bfloat16": "bfloat16",
        "bf16": "bfloat16",
        "float16": "float16",
        "fp16": "float16",
        "half": "float16",
    }
)


def require_native() -> Any:
    """torch, once torch and transformers are both known to import (BackendError naming the extra
    otherwise)."""
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise BackendError(
            f"engine NATIVE needs torch and transformers ({exc}); install jurist[native]"
        ) from exc
    return torch


def load_pretrained(
    params: ModelParams, name: str, model_class: Any, device: str, failure: str
) -> tuple[Any, Any]:
    """The tokenizer and the ``model_class`` model of ``name``, as ``params`` ask (tokenizer name, revision,
    remote code, ``torch_dtype_str`` for ``device``, model kwargs); BackendError ``<failure>: <why>`` when
    either cannot load."""
    import torch
    from transformers import AutoTokenizer

    dtype = resolve_dtype(params.torch_dtype_str, device)
    common: dict[str, Any] = {"trust_remote_code": params.trust_remote_code}
    if params.revision is not None:
        common["revision"] = params.revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(params.tokenizer_name or name, **common)
        model = model_class.from_pretrained(
            name,
            dtype=dtype if dtype == "auto" else getattr(torch, dtype),
            **common,
            **params.model_kwargs,
        )
    except Exception as exc:
        raise BackendError(f"{failure}: {exc}") from exc
    return tokenizer, model


def resolve_dtype(value: str | None, device: str) -> str:
    """The torch dtype name for ``torch_dtype_str`` (None: float32 on CPU, bfloat16 on CUDA)."""
    if value is None:
        return "bfloat16" if device.startswith("cuda") else "float32"
    resolved = _DTYPES.get(value.strip().lower())
    if resolved is None:
        raise BackendError(
            f"model.torch_dtype_str {value!r} is not a dtype; use one of auto, float32, bfloat16, float16"
        )
    return resolved


@dataclass(frozen=True)
class Loaded:
    """A NATIVE model as both transformers backends start from it: the engine parameters, the resolved
    model (its path and label), the checked batch size, the device, the tokenizer and the model."""

    params: NativeEngineParams
    resolved: ResolvedModel
    batch_size: int
    device: str
    tokenizer: Any
    model: Any


def load_native(
    config: InferenceConfig,
    model_class_name: str,
    failure: str,
    *,
    batch_size: int | None,
    device: str | None,
) -> Loaded:
    """Load ``config``'s model as transformers' ``model_class_name`` (``AutoModelForCausalLM``,
    ``AutoModelForSequenceClassification``): the model name resolved (a GGUF file converted, the embedded
    default for None), ``batch_size`` and ``device`` overriding ``engine_params``, the device CUDA when torch
    sees one; BackendError ``<failure>: <why>`` when it cannot load (``{name}`` in ``failure``: the model's
    path), or for a batch size under 1."""
    ep = engine_params(config.engine_params)
    torch = require_native()
    import transformers

    resolved = resolve_model(config.model.model_name)
    size = batch_size or ep.batch_size
    if size < 1:
        raise BackendError(f"batch_size must be at least 1, got {size}")
    where = device or ep.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model_class = getattr(transformers, model_class_name)
    tokenizer, model = load_pretrained(
        config.model, resolved.path, model_class, where, failure.format(name=repr(resolved.path))
    )
    return Loaded(ep, resolved, size, where, tokenizer, model)
