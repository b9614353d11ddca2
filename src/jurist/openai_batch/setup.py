"""A batch run on a local engine from what ``jurist batch`` is given: one chat model (``--model``, or the
one every ``--model-map`` entry names), an engine with its parameters, and an optional embedding model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.errors import ConfigError
from jurist.models.resolve import prepare_models
from jurist.openai_batch.requests import Served
from jurist.openai_batch.runner import BatchRun, Embedder


def inference_config(model: str | None, engine: str | None, params: dict[str, str]) -> InferenceConfig:
    """The inference config of a batch run's chat or embedding model (``--engine-param`` values are read as
    YAML scalars)."""
    data: dict[str, Any] = {"model": {"model_name": model}}
    if engine is not None:
        data["engine"] = engine
    if params:
        data["engine_params"] = {k: yaml.safe_load(v) for k, v in params.items()}
    try:
        return InferenceConfig.model_validate(data)
    except ValueError as exc:
        raise ConfigError(f"--model/--engine/--engine-param: {exc}") from None


def local_batch_run(
    *,
    model: str | None,
    model_map: Mapping[str, str],
    engine: str | None,
    engine_params: Mapping[str, str],
    embedding_model: str | None,
    max_tokens: int,
    chunk_size: int,
) -> BatchRun:
    """The run: ``model_map`` maps a line's ``body.model`` to the local model (one chat model per run);
    ``engine_params`` values are read as YAML scalars; a GGUF model is converted now, before any line."""
    from jurist.backends import constraint_kinds, create_backend

    targets = set(model_map.values()) | ({model} if model else set())
    if len(targets) > 1:
        raise ConfigError(
            f"one chat model per run; --model and --model-map name {', '.join(sorted(targets))}"
        )
    params = dict(engine_params)
    chat_config = inference_config(next(iter(targets), None), engine, params)
    embed_config = inference_config(embedding_model, None, params) if embedding_model else None
    served = Served(
        model=model,
        model_map=dict(model_map),
        embeddings=embed_config is not None,
        constraint_kinds=constraint_kinds(chat_config),
        default_max_tokens=max_tokens,
    )

    def chat() -> Backend:
        return create_backend(chat_config)

    def embedder() -> Embedder:
        from jurist.backends.vllm.embed import VLLMEmbedder

        assert embed_config is not None
        return VLLMEmbedder(embed_config)

    options: dict[str, Any] = {
        "model": chat_config.model.model_name,
        "engine": chat_config.engine.value,
        "engine_params": chat_config.engine_params,
        "model_map": dict(model_map),
        "embedding_model": embedding_model,
        "max_tokens": max_tokens,
        "chunk_size": chunk_size,
    }
    prepare_models([chat_config.model.model_name])
    return BatchRun(
        chat,
        served,
        embedder=embedder if embed_config is not None else None,
        chunk_size=chunk_size,
        options=options,
    )
