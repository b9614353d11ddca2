"""A tokenizer's vocabulary as raw bytes, for outlines_core's regex index (engine NATIVE).

outlines_core matches a regex byte by byte, so it needs each token's bytes: byte-level BPE pieces map
character by character to bytes (GPT-2's table); SentencePiece pieces write a space as ``\u2581`` and a byte
as ``<0xNN>``. Special tokens are left out, so a constraint can never admit them inside an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SENTENCEPIECE_SPACE = "\u2581"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _unicode_to_byte() -> dict[str, int]:
    """The inverse of GPT-2's ``bytes_to_unicode``: byte-level BPE writes byte ``b`` as this character."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    shift = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + shift)] = b
            shift += 1
    return table


def _is_byte_level(tokenizer: Any) -> bool:
    """Whether a fast tokenizer decodes with a ByteLevel decoder (GPT-2-style byte-level BPE)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    try:
        decoder = json.loads(backend.to_str()).get("decoder")
    except Exception:
        return False
    pending = [decoder]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if node.get("type") == "ByteLevel":
                return True
            pending.extend(node.get("decoders") or [])
    return False


def token_bytes(tokenizer: Any, eos_ids: frozenset[int]) -> dict[bytes, list[int]]:
    """The vocabulary for outlines_core: each ordinary token's raw bytes -> its ids.

    Special tokens (eos, pad, chat markers) are left out, so a constraint can never admit them inside an
    answer; eos is given to ``Vocabulary`` separately. Byte-level BPE pieces map character by character to
    bytes; other tokenizers use the piece's text (SentencePiece's ``\u2581`` as a space, ``<0xNN>`` as that
    byte). A piece whose text cannot be recovered (a replacement character) is left out.
    """
    special = set(getattr(tokenizer, "all_special_ids", ())) | set(eos_ids)
    added: dict[int, str] = {}
    for token_id, token in getattr(tokenizer, "added_tokens_decoder", {}).items():
        if getattr(token, "special", False):
            special.add(int(token_id))
        else:
            added[int(token_id)] = str(token.content)
    byte_level = _is_byte_level(tokenizer)
    byte_of = _unicode_to_byte()
    out: dict[bytes, list[int]] = {}
    for piece, token_id in tokenizer.get_vocab().items():
        if token_id in special:
            continue
        data: bytes | None
        if token_id in added:
            data = added[token_id].encode()
        elif byte_level and all(c in byte_of for c in piece):
            data = bytes(byte_of[c] for c in piece)
        else:
            data = _piece_bytes(tokenizer, piece)
        if data:
            out.setdefault(data, []).append(int(token_id))
    return out


def _piece_bytes(tokenizer: Any, piece: str) -> bytes | None:
    """The bytes of a non-byte-level piece (SentencePiece and similar), or None when unknown."""
    match = _BYTE_PIECE.fullmatch(piece)
    if match:
        return bytes([int(match.group(1), 16)])
    if _SENTENCEPIECE_SPACE in piece:
        text = piece.replace(_SENTENCEPIECE_SPACE, " ")
    else:
        text = str(tokenizer.convert_tokens_to_string([piece]))
    if "\ufffd" in text and "\ufffd" not in piece:
        return None
    return text.encode()
