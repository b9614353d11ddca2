"""What a GGUF file says about itself: architecture, tokenizer, special tokens, chat template, context.

GGUF is the llama.cpp / Ollama file format: one file holding the (usually quantized) tensors and the
tokenizer's vocabulary, merges and special tokens as metadata. :func:`read_gguf` reads the metadata only
(the ``gguf`` package memory-maps the file; no tensor is dequantized) and is what a conversion checks
before it spends minutes on the weights.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any, Final

from jurist.errors import BackendError

GGUF_MAGIC: Final = b"GGUF"
PIP_GGUF: Final = "pip install gguf"


@dataclass(frozen=True)
class GgufInfo:
    """The metadata of one GGUF file that a conversion needs (token ids index :attr:`tokens`)."""

    path: pathlib.Path
    architecture: str
    name: str | None
    tokenizer_model: str
    pre_tokenizer: str
    tokens: tuple[str, ...]
    token_types: tuple[int, ...]
    merges: tuple[str, ...]
    eos_id: int | None
    pad_id: int | None
    bos_id: int | None
    unk_id: int | None
    add_bos: bool
    chat_template: str | None
    context_length: int | None

    def token(self, index: int | None) -> str | None:
        """The text of token ``index`` (None for None or an id outside the vocabulary)."""
        if index is None or not 0 <= index < len(self.tokens):
            return None
        return self.tokens[index]

    @property
    def eos_token(self) -> str | None:
        return self.token(self.eos_id)

    @property
    def pad_token(self) -> str | None:
        return self.token(self.pad_id)

    @property
    def bos_token(self) -> str | None:
        return self.token(self.bos_id)


def import_gguf() -> Any:
    """Import and return the ``gguf`` module, or raise a BackendError naming the pip command."""
    try:
        import gguf
    except ImportError as exc:
        raise BackendError(f"reading a GGUF file needs the package gguf: {PIP_GGUF}") from exc
    return gguf


def is_gguf_file(path: pathlib.Path) -> bool:
    """Whether ``path`` is a file that starts with the GGUF magic bytes."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def read_gguf(path: pathlib.Path) -> GgufInfo:
    """Read a GGUF file's metadata.

    Raises:
        BackendError: the file is missing, is not a GGUF file, ``gguf`` is not installed, or the file holds
            no tokenizer (the message names the file).
    """
    if not path.is_file():
        raise BackendError(f"{path}: no such GGUF file")
    if not is_gguf_file(path):
        raise BackendError(f"{path}: not a GGUF file (it does not start with the bytes 'GGUF')")
    gguf = import_gguf()
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # a truncated or damaged file: the reader raises its own types
        raise BackendError(f"{path}: cannot read the GGUF file: {type(exc).__name__}: {exc}") from exc
    architecture = (_strings(reader, "general.architecture") or [""])[0]
    tokens = tuple(_strings(reader, "tokenizer.ggml.tokens"))
    model = (_strings(reader, "tokenizer.ggml.model") or [""])[0]
    if not architecture:
        raise BackendError(f"{path}: the GGUF file names no architecture (general.architecture)")
    if not tokens or not model:
        raise BackendError(f"{path}: the GGUF file holds no tokenizer (tokenizer.ggml.tokens / .model)")
    add_bos = _integers(reader, "tokenizer.ggml.add_bos_token")
    templates = _strings(reader, "tokenizer.chat_template")
    return GgufInfo(
        path=path,
        architecture=architecture,
        name=next(iter(_strings(reader, "general.name")), None),
        tokenizer_model=model,
        pre_tokenizer=(_strings(reader, "tokenizer.ggml.pre") or ["default"])[0],
        tokens=tokens,
        token_types=tuple(_integers(reader, "tokenizer.ggml.token_type")),
        merges=tuple(_strings(reader, "tokenizer.ggml.merges")),
        eos_id=_integer(reader, "tokenizer.ggml.eos_token_id"),
        pad_id=_integer(reader, "tokenizer.ggml.padding_token_id"),
        bos_id=_integer(reader, "tokenizer.ggml.bos_token_id"),
        unk_id=_integer(reader, "tokenizer.ggml.unknown_token_id"),
        add_bos=bool(add_bos[0]) if add_bos else False,
        chat_template=templates[0] if templates else None,
        context_length=_integer(reader, f"{architecture}.context_length"),
    )


def _field_parts(reader: Any, key: str) -> list[Any]:
    """The value parts of a GGUF metadata field (one per array item; one for a scalar)."""
    field = reader.fields.get(key)
    return [] if field is None else [field.parts[index] for index in field.data]


def _strings(reader: Any, key: str) -> list[str]:
    """A GGUF string or string-array field as a list of str (empty when the key is missing)."""
    return [bytes(part).decode("utf-8") for part in _field_parts(reader, key)]


def _integers(reader: Any, key: str) -> list[int]:
    """A GGUF integer (or bool) or integer-array field as a list of int (empty when the key is missing)."""
    return [int(part[0]) for part in _field_parts(reader, key)]


def _integer(reader: Any, key: str) -> int | None:
    """A scalar GGUF integer field, or None when the key is missing."""
    values = _integers(reader, key)
    return values[0] if values else None
