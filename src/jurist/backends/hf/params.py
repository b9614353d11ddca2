"""``inference_config.engine_params`` for engine NATIVE (transformers): :class:`NativeEngineParams`, validated
before any model loads (:func:`engine_params`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from jurist.config.types import StrictModel
from jurist.errors import ConfigError

DEFAULT_BATCH_SIZE = 16


class NativeEngineParams(StrictModel):
    """``inference_config.engine_params`` for engine NATIVE."""

    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1, description="Sequences per generate call.")
    device: str | None = Field(default=None, description="cuda when available, else cpu, unless given.")
    head_dtype: Literal["auto", "float32", "model"] = Field(
        default="auto",
        description="The dtype label scores (LOGPROBS) project the last hidden state in: float32 (auto, the "
        "default: from bfloat16 or float16 logits many label probabilities tie exactly) or the model's own "
        "(model). Generation is not affected.",
    )


def engine_params(values: Mapping[str, Any]) -> NativeEngineParams:
    """Validate ``engine_params`` for engine NATIVE (a :class:`ConfigError` names the key)."""
    try:
        return NativeEngineParams.model_validate(dict(values))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(NativeEngineParams.model_fields)
            message = f"{key}: unknown key for engine NATIVE; allowed keys: {allowed}"
        else:
            message = f"{key}: {err['msg']} (got {err.get('input')!r})"
        raise ConfigError(message, field="inference_config.engine_params") from None
