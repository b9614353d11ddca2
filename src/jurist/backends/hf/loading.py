"""Loading a Hugging Face model and its tokenizer for engine NATIVE (causal LMs and sequence classifiers).

torch and transformers are imported inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from jurist.config.inference import ModelParams
from jurist.errors import BackendError

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
