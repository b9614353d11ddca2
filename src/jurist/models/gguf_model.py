"""Any GGUF file as a model: converted once into a cache folder keyed by the file's sha256.

``--model path/to/model.gguf`` (or ``inference_config.model.model_name: path/to/model.gguf``) reaches
:func:`gguf_model_path`, which returns ``<cache>/models/gguf/<sha256[:16]>-v<version>``, converting the file
there first if no finished conversion is present (:mod:`jurist.models.gguf_convert`). The same bytes under
another name or path reuse the conversion; a file changed in place is hashed and converted again. The
hash is remembered per (path, size, mtime), so naming an unchanged multi-GB file again costs no re-read.
"""

from __future__ import annotations

import pathlib
import shutil
from dataclasses import dataclass

from jurist.errors import BackendError
from jurist.models.cache import cache_root, file_lock, remembered_sha256
from jurist.models.gguf_convert import (
    CONVERSION_VERSION,
    TMP_PREFIX,
    Progress,
    convert_atomically,
    is_converted,
    read_manifest,
    to_stderr,
)
from jurist.models.gguf_meta import is_gguf_file

_LOCK_NAME = ".convert.lock"
_HASHES = ".hashes"


def gguf_cache_dir() -> pathlib.Path:
    """``<jurist cache>/models/gguf``: where converted GGUF files live."""
    return cache_root() / "models" / "gguf"


def looks_like_gguf(name: str) -> bool:
    """Whether a model name is meant as a GGUF file (it ends in ``.gguf``)."""
    return name.lower().endswith(".gguf")


def gguf_model_path(
    file: str | pathlib.Path, *, cache_dir: pathlib.Path | None = None, progress: Progress = to_stderr
) -> pathlib.Path:
    """The HF folder converted from the GGUF file ``file``, converting it on first use.

    Raises:
        BackendError: the file is missing or not a GGUF file, its architecture or tokenizer cannot be
            converted (the message names which), or the cache cannot be written.
    """
    source = pathlib.Path(file).expanduser()
    if not source.is_file():
        raise BackendError(f"{source}: no such GGUF file")
    if not is_gguf_file(source):
        raise BackendError(f"{source}: not a GGUF file (it does not start with the bytes 'GGUF')")
    cache = (cache_dir if cache_dir is not None else gguf_cache_dir()).expanduser()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackendError(f"cannot create the model cache folder {cache}: {exc}") from exc
    sha256 = remembered_sha256(source, cache / _HASHES)
    target = cache / f"{sha256[:16]}-v{CONVERSION_VERSION}"
    if is_converted(target):
        return target
    with file_lock(cache / _LOCK_NAME) as locked:
        if is_converted(target):  # another process converted it while we waited
            return target
        if locked:  # only converters hold the lock: leftovers of a killed conversion can go
            for leftover in cache.glob(f"{TMP_PREFIX}*"):
                shutil.rmtree(leftover, ignore_errors=True)
            shutil.rmtree(target, ignore_errors=True)  # a folder without its manifest is unfinished
        convert_atomically(source, target, model_id=source.name, sha256=sha256, progress=progress)
    return target


@dataclass(frozen=True)
class Conversion:
    """A finished conversion in the cache: its folder and what its manifest says."""

    folder: pathlib.Path
    source: str
    sha256: str
    architecture: str | None
    size_bytes: int


def conversions(cache_dir: pathlib.Path | None = None) -> list[Conversion]:
    """The finished conversions in the GGUF cache, by folder name."""
    cache = cache_dir if cache_dir is not None else gguf_cache_dir()
    if not cache.is_dir():
        return []
    found = []
    for folder in sorted(cache.iterdir()):
        if folder.name.startswith(".") or not is_converted(folder):
            continue
        manifest = read_manifest(folder)
        found.append(
            Conversion(
                folder=folder,
                source=str(manifest.get("source", "")),
                sha256=str(manifest.get("source_sha256", "")),
                architecture=manifest.get("architecture"),
                size_bytes=sum(f.stat().st_size for f in folder.iterdir() if f.is_file()),
            )
        )
    return found
