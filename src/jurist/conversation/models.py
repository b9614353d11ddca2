"""What a conversation judge runs on: a jurist backend, a pipecat LLM service, or an inference config that
makes a backend when first needed.

:func:`conversation_backend` accepts a :class:`~jurist.backends.base.Backend` (used as it is, never closed
here), a pipecat LLM service (anything with ``run_inference``;
:class:`~jurist.conversation.pipecat.ServiceBackend`), a factory (a callable without arguments) that returns
any of these, an :class:`~jurist.config.inference.InferenceConfig`, a mapping of one (or a judge config's
mapping with an ``inference_config`` section), a path to a YAML/JSON file holding either, or a model name or
folder (a local vLLM engine). Anything but a backend becomes a lazy backend (:mod:`jurist.engine.lazy`):
nothing loads or connects until the first request. It also gives the model's identity for the verdict
cache, known without loading anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from jurist.backends import create_backend
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.conversation.pipecat import ServiceBackend, is_service
from jurist.engine.lazy import lazy
from jurist.errors import ConfigError
from jurist.models.default_model import DEFAULT_MODEL_LABEL

ModelLike = Backend | InferenceConfig | Mapping[str, Any] | str | Path | Any
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ResolvedModel:
    """A backend, whether this code made it (and so closes it), the inference config it came from (None for
    a backend given as it is) and the model's identity for caching."""

    backend: Backend
    owned: bool
    config: InferenceConfig | None
    identity: dict[str, Any]


def _config_from_mapping(data: Mapping[str, Any], source: str) -> InferenceConfig:
    section = data.get("inference_config", data)
    if not isinstance(section, Mapping):
        raise ConfigError("inference_config must be a mapping", source=source)
    try:
        return InferenceConfig.model_validate(dict(section))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise ConfigError(f"invalid inference config: {problems}", source=source) from None


def _config_from_file(path: Path) -> InferenceConfig:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read an inference config: {exc}", source=str(path)) from exc
    if not isinstance(data, Mapping):
        raise ConfigError("must hold a mapping (an inference config)", source=str(path))
    return _config_from_mapping(data, str(path))


def inference_config(model: InferenceConfig | Mapping[str, Any] | str | Path) -> InferenceConfig:
    """The inference config that ``model`` names (see the module's docstring)."""
    if isinstance(model, InferenceConfig):
        return model
    if isinstance(model, Mapping):
        return _config_from_mapping(model, "<python>")
    path = Path(str(model)).expanduser()
    if path.suffix.lower() in CONFIG_SUFFIXES:
        if not path.is_file():
            raise ConfigError("no such inference config file", source=str(model))
        return _config_from_file(path)
    return InferenceConfig.model_validate({"model": {"model_name": str(model)}})


def config_identity(config: InferenceConfig) -> dict[str, Any]:
    """The model a config runs, as the cache tells models apart (name or folder, engine, server, revision)."""
    return {
        "model": config.model.model_name or DEFAULT_MODEL_LABEL,
        "engine": config.engine.value,
        "url": config.remote_params.api_url,
        "revision": config.model.revision,
    }


def conversation_backend(model: ModelLike, *, factory: bool = True) -> ResolvedModel:
    """A backend for ``model``: the backend itself, a pipecat service wrapped as one, what a factory
    returns, or a lazy backend made from an inference config."""
    if isinstance(model, Backend):
        return ResolvedModel(model, False, None, {"model": model.model_id})
    if is_service(model):
        service = ServiceBackend(model)
        return ResolvedModel(service, False, None, {"model": service.model_id})
    if factory and callable(model) and not isinstance(model, type):
        return conversation_backend(model(), factory=False)
    if not isinstance(model, InferenceConfig | Mapping | str | Path):
        raise TypeError(
            "a conversation judge runs on a jurist Backend, a pipecat LLM service (with run_inference), a "
            "factory returning one of these, an InferenceConfig (or its mapping or file) or a model name; "
            f"got a {type(model).__name__}"
        )
    config = inference_config(model)
    backend = lazy(create_backend, config, lambda _seconds: None)
    return ResolvedModel(backend, True, config, config_identity(config))
