"""A model cut after its first L transformer layers, for a probe head that reads layer L on vLLM.

vLLM's pooling runner returns the last token's state after the model's final norm. Loading only the first
L layers gives layer L's state and skips the cost of the layers above it; but vLLM 0.32 refuses
``hf_overrides={"num_hidden_layers": L}`` on a checkpoint that holds more layers ("There is no module or
parameter named 'layers.L'"). So :func:`truncated_model` writes, once, a folder whose config says L layers and
whose safetensors hold only the weights of layers below L (the embeddings, the final norm and the output
projection kept), with the tokenizer and chat template files beside them. It lives in jurist's model cache
under the source's weights fingerprint and L, written into a temporary folder and renamed into place.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import tempfile

from jurist.errors import BackendError
from jurist.models.cache import cache_root, file_lock
from jurist.models.weights import weights_fingerprint

LAYER_KEY = re.compile(r"(?:^|\.)layers\.(\d+)\.")
"""A weight of a transformer layer (``model.layers.<i>.``), as Llama, Qwen, Mistral and most decoders name
them."""
_PER_LAYER_LISTS = ("layer_types",)  # config lists with one entry per layer


def truncated_cache_dir() -> pathlib.Path:
    """``<jurist cache>/models/truncated``."""
    return cache_root() / "models" / "truncated"


def num_layers(folder: str | pathlib.Path) -> int:
    """The transformer layer count a model folder's config declares."""
    config = _config(pathlib.Path(folder))
    text = config.get("text_config", config)
    value = text.get("num_hidden_layers")
    if not isinstance(value, int):
        raise BackendError(f"{folder}: config.json declares no num_hidden_layers")
    return value


def truncated_model(folder: str | pathlib.Path, layers: int, *, cache_dir: pathlib.Path | None = None) -> str:
    """A folder holding the model of ``folder`` cut after ``layers`` layers (``folder`` itself when it has
    no more). Raises :class:`~jurist.errors.BackendError` for a folder that is not a local safetensors
    model."""
    source = pathlib.Path(folder)
    if not source.is_dir():
        raise BackendError(
            f"{folder}: a probe head on a middle layer needs the model as a local folder (e.g. "
            "huggingface-cli download, then name the folder)"
        )
    total = num_layers(source)
    if layers >= total:
        return str(source)
    if layers < 1:
        raise BackendError(f"a model cut after {layers} layers has none")
    shards = sorted(source.glob("*.safetensors"))
    fingerprint = weights_fingerprint(str(source))
    if not shards or fingerprint is None:
        raise BackendError(f"{source}: cutting a model after a layer needs a local folder of safetensors")
    cache = cache_dir if cache_dir is not None else truncated_cache_dir()
    target = cache / f"{fingerprint}-L{layers}"
    if (target / "config.json").is_file():
        return str(target)
    cache.mkdir(parents=True, exist_ok=True)
    with file_lock(cache / ".truncate.lock"):
        if (target / "config.json").is_file():
            return str(target)
        scratch = pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
        try:
            _write(source, shards, layers, scratch)
            scratch.rename(target)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    return str(target)


def _write(source: pathlib.Path, shards: list[pathlib.Path], layers: int, out: pathlib.Path) -> None:
    from safetensors import safe_open
    from safetensors.torch import save_file

    for item in source.iterdir():
        if item.is_file() and item.suffix != ".safetensors" and not item.name.endswith(".index.json"):
            shutil.copy2(item, out / item.name)
    config = _config(source)
    text = config.get("text_config", config)
    text["num_hidden_layers"] = layers
    for key in _PER_LAYER_LISTS:
        if isinstance(text.get(key), list):
            text[key] = text[key][:layers]
    (out / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    kept = {}
    for shard in shards:
        with safe_open(str(shard), "pt") as handle:  # type: ignore[no-untyped-call]
            for key in handle.keys():  # noqa: SIM118 (a safetensors handle is not a dict)
                found = LAYER_KEY.search(key)
                if found is None or int(found.group(1)) < layers:
                    kept[key] = handle.get_tensor(key)
    save_file(kept, str(out / "model.safetensors"), metadata={"format": "pt"})


def _config(folder: pathlib.Path) -> dict:  # type: ignore[type-arg]
    path = folder / "config.json"
    if not path.is_file():
        raise BackendError(f"{folder}: not a model folder (no config.json)")
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise BackendError(f"{path}: not a JSON object")
    return loaded
