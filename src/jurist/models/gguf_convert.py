"""Converting a GGUF file into a Hugging Face folder that vLLM and transformers load.

- weights: dequantized with transformers' GGUF reader into a model built from the file's own config, and
  stored in bfloat16 (``model.safetensors``): half the disk and memory of float32, and what vLLM computes
  in on GPUs and on CPUs with bfloat16 instructions. The compute dtype is chosen when the model loads,
  not here (:mod:`jurist.backends.local.dtype`): on a CPU without AVX512-BF16 or AMX, vLLM's bfloat16
  runs through a slow fallback, so jurist loads these weights in float32 there. The path does not need
  ``accelerate`` (which ``from_pretrained(..., gguf_file=...)`` would)
  and works for every architecture transformers reads from GGUF (:func:`supported_architectures`: llama,
  mistral, qwen2, qwen3, phi3, gemma2/3, ...); another architecture is refused, naming it, before any
  tensor is read.
- tokenizer: transformers' own GGUF tokenizer conversion (correct for Qwen, Llama, Mistral, Gemma, Phi),
  except for llama.cpp's ``smollm`` pre-tokenizer, which it gets wrong and which jurist builds itself
  (:mod:`jurist.models.byte_level`). Either way the result is checked against the file before it is kept
  (:func:`jurist.models.tokenizer_check.verify_converted_tokenizer`).
- ``generation_config.json``: stops on the file's eos token, so engines stop at the end of the turn.

The conversion runs offline (``HF_HUB_OFFLINE=1``, local files only), into a temporary folder that is
renamed into place once verified: a killed conversion leaves only a ``.converting-*`` folder, which the
next converter removes. Steps are reported through ``progress`` (stderr by default). Heavy libraries
(torch, transformers, gguf, tokenizers) are imported inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from jurist.errors import BackendError
from jurist.models.byte_level import BUILT_HERE, build_byte_level_tokenizer
from jurist.models.gguf_meta import GgufInfo, import_gguf, read_gguf
from jurist.models.tokenizer_check import verify_converted_tokenizer

CONVERSION_VERSION: Final = 2  # raise when the conversion's output changes: old caches are then rebuilt
WEIGHTS_DTYPE: Final = "bfloat16"  # what the weights are stored in (not always what an engine computes in)
MANIFEST_NAME: Final = "jurist_conversion.json"  # written last: a folder holding it is complete
TMP_PREFIX: Final = ".converting-"
PIP_TRANSFORMERS: Final = "pip install torch transformers tokenizers (or jurist's `cpu` / `native` extra)"
REQUIRED_FILES: Final = (
    "config.json",
    "model.safetensors",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    MANIFEST_NAME,
)

Progress = Callable[[str], None]


def to_stderr(message: str) -> None:
    """The default progress report: one line on stderr."""
    print(f"jurist: {message}", file=sys.stderr, flush=True)


def supported_architectures() -> tuple[str, ...]:
    """The GGUF architectures transformers converts (``general.architecture`` values), sorted."""
    try:
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
    except ImportError as exc:
        raise BackendError(
            f"converting a GGUF file needs torch and transformers: {PIP_TRANSFORMERS}"
        ) from exc
    return tuple(sorted(a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer")))


def is_converted(folder: pathlib.Path) -> bool:
    """Whether ``folder`` holds a finished conversion (its manifest, written last, and every file)."""
    return all((folder / name).is_file() for name in REQUIRED_FILES)


def check_convertible(info: GgufInfo) -> None:
    """Refuse, before any tensor is read, a file whose architecture transformers does not convert or that
    has no chat template or eos token (the message names the file and what it holds)."""
    known = supported_architectures()
    architecture = info.architecture.replace("-", "").lower()
    if not any(architecture == a.replace("_", "") or info.architecture == a for a in known):
        raise BackendError(
            f"{info.path}: GGUF architecture {info.architecture!r} is not one transformers converts "
            f"(supported: {', '.join(known)})"
        )
    if not info.chat_template:
        raise BackendError(f"{info.path}: the GGUF file holds no chat template (tokenizer.chat_template)")
    if info.eos_token is None:
        raise BackendError(f"{info.path}: the GGUF file names no eos token (tokenizer.ggml.eos_token_id)")


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Set ``HF_HUB_OFFLINE=1`` for the ``with`` body and restore the previous value afterwards."""
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def convert_atomically(
    source: pathlib.Path,
    target: pathlib.Path,
    *,
    model_id: str,
    sha256: str,
    extra: Mapping[str, Any] | None = None,
    progress: Progress = to_stderr,
    info: GgufInfo | None = None,
) -> None:
    """Convert the GGUF file ``source`` into a temporary sibling of ``target``, verify it, rename it to
    ``target``. ``model_id``, ``sha256`` (the file's) and ``extra`` go into the manifest; ``info``: the
    file's metadata, where the caller has read it already (reading it again takes seconds).

    Raises:
        BackendError: the file cannot be converted or the result fails a check; nothing is left at
            ``target`` then.
    """
    started = time.perf_counter()
    info = info if info is not None else read_gguf(source)
    check_convertible(info)
    size_mb = source.stat().st_size / 1e6
    progress(f"converting {source.name} ({size_mb:,.0f} MB, {info.architecture}) into {target}")
    temporary = pathlib.Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=target.parent))
    try:
        with hub_offline():
            _convert(info, temporary, progress)
            progress("checking the tokenizer against the file")
            verify_converted_tokenizer(temporary, info)
        seconds = time.perf_counter() - started
        _write_manifest(info, temporary, model_id=model_id, sha256=sha256, seconds=seconds, extra=extra)
        temporary.chmod(0o755)  # mkdtemp makes it private; the cache may be shared through JURIST_CACHE_DIR
        for file in temporary.iterdir():
            file.chmod(0o644)
        try:
            os.rename(temporary, target)
        except OSError:
            if not is_converted(target):  # not "someone else finished first"
                raise
        progress(f"converted {source.name} in {seconds:.0f} s")
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(f"converting {source} into {target} failed: {exc}") from exc
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _convert(info: GgufInfo, out_dir: pathlib.Path, progress: Progress) -> None:
    """Write the HF folder of the GGUF file ``info.path`` into the existing folder ``out_dir``."""
    import_gguf()
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
    except ImportError as exc:
        raise BackendError(
            f"converting a GGUF file needs torch and transformers: {PIP_TRANSFORMERS}"
        ) from exc
    source = info.path
    eos_id = info.eos_id
    pad_id = info.pad_id if info.pad_id is not None else eos_id

    progress("dequantizing the weights")
    config = AutoConfig.from_pretrained(str(source.parent), gguf_file=source.name, local_files_only=True)
    config.eos_token_id = eos_id
    config.pad_token_id = pad_id
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]
    parsed = load_gguf_checkpoint(str(source), return_tensors=True, model_to_load=model)  # type: ignore[no-untyped-call]
    tensors = parsed["tensors"]
    result = model.load_state_dict(tensors, strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if result.unexpected_keys or set(result.missing_keys) - tied:
        raise BackendError(
            f"{source}: the GGUF's tensors do not match {type(model).__name__}: "
            f"missing {sorted(set(result.missing_keys) - tied)}, unexpected {sorted(result.unexpected_keys)}"
        )
    model.tie_weights()
    model.generation_config = GenerationConfig(  # type: ignore[no-untyped-call]
        bos_token_id=None, eos_token_id=eos_id, pad_token_id=pad_id
    )
    model = model.to(getattr(torch, WEIGHTS_DTYPE))
    progress(f"writing the weights in {WEIGHTS_DTYPE}")
    model.save_pretrained(str(out_dir))
    del model, parsed, tensors

    progress("building the tokenizer")
    _save_tokenizer(info, out_dir)
    missing = [name for name in REQUIRED_FILES if name != MANIFEST_NAME and not (out_dir / name).is_file()]
    if missing:
        raise BackendError(f"converting {source} wrote no {', '.join(missing)}")


def _save_tokenizer(info: GgufInfo, out_dir: pathlib.Path) -> None:
    """Write the tokenizer files: built here for the pre-tokenizers transformers gets wrong, else
    transformers' own GGUF tokenizer."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    source = info.path
    context = info.context_length or 8192
    if info.pre_tokenizer in BUILT_HERE:
        eos = info.eos_token
        tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
            tokenizer_object=build_byte_level_tokenizer(info),
            bos_token=None,
            eos_token=eos,
            pad_token=info.pad_token or eos,
            unk_token=info.token(info.unk_id),
            clean_up_tokenization_spaces=False,
            model_max_length=context,
            chat_template=info.chat_template,
        )
        tokenizer.save_pretrained(str(out_dir))
        # transformers 5 writes its own class name ("TokenizersBackend"); the generic name loads in 4.x too.
        config_path = out_dir / "tokenizer_config.json"
        tokenizer_config = json.loads(config_path.read_text(encoding="utf-8"))
        tokenizer_config["tokenizer_class"] = "PreTrainedTokenizerFast"
        config_path.write_text(
            json.dumps(tokenizer_config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        return
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            str(source.parent), gguf_file=source.name, local_files_only=True
        )
    except Exception as exc:  # transformers raises many types for a tokenizer it cannot convert
        raise BackendError(
            f"{source}: transformers cannot convert tokenizer model {info.tokenizer_model!r} "
            f"(pre-tokenizer {info.pre_tokenizer!r}): {exc}"
        ) from exc
    tokenizer.model_max_length = context
    if tokenizer.chat_template is None:
        tokenizer.chat_template = info.chat_template
    tokenizer.save_pretrained(str(out_dir))


def _write_manifest(
    info: GgufInfo,
    out_dir: pathlib.Path,
    *,
    model_id: str,
    sha256: str,
    seconds: float,
    extra: Mapping[str, Any] | None,
) -> None:
    """Write ``jurist_conversion.json``: the source file, its size, mtime and sha256, the tool versions."""
    import transformers

    stat = info.path.stat()
    manifest = {
        "model_id": model_id,
        "source": str(info.path),
        "source_size": stat.st_size,
        "source_mtime_ns": stat.st_mtime_ns,
        "source_sha256": sha256,
        "architecture": info.architecture,
        "gguf_name": info.name,
        "tokenizer": f"{info.tokenizer_model}/{info.pre_tokenizer}",
        "conversion_version": CONVERSION_VERSION,
        "weights_dtype": WEIGHTS_DTYPE,
        "transformers_version": transformers.__version__,
        "gguf_version": package_version("gguf"),
        **dict(extra or {}),
        "conversion_seconds": round(seconds, 1),
    }
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def package_version(distribution: str) -> str | None:
    """An installed distribution's version, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def read_manifest(folder: pathlib.Path) -> dict[str, Any]:
    """The manifest of a converted folder (empty when missing or unreadable)."""
    try:
        value = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
