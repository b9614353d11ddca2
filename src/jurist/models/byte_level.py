"""SmolLM2's tokenizer built from its GGUF file: GPT-2-style byte-level BPE with single digits.

transformers' own GGUF tokenizer conversion of llama.cpp's ``smollm`` pre-tokenizer gives a tokenizer that
loses spaces and newlines (``' hello\\n  world'`` -> ``'hel','low','orld'``), so for that pre-tokenizer
jurist builds the tokenizer itself, as SmolLM2's own ``tokenizer.json`` is laid out: digits split one by
one, then ByteLevel without a prefix space. Other tokenizers come from transformers
(:mod:`jurist.models.gguf_convert`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from jurist.errors import BackendError
from jurist.models.gguf_meta import GgufInfo

if TYPE_CHECKING:
    from tokenizers import Tokenizer

BUILT_HERE: Final = frozenset({"smollm"})
"""llama.cpp pre-tokenizer names whose tokenizer :func:`build_byte_level_tokenizer` builds."""

_CONTROL, _USER_DEFINED = 3, 4  # gguf.TokenType.CONTROL / USER_DEFINED


def build_byte_level_tokenizer(info: GgufInfo) -> Tokenizer:
    """The byte-level BPE tokenizer of a GGUF file whose pre-tokenizer is in :data:`BUILT_HERE`."""
    from tokenizers import AddedToken, decoders, models, pre_tokenizers, processors
    from tokenizers import Tokenizer as RawTokenizer

    if info.tokenizer_model != "gpt2" or info.pre_tokenizer not in BUILT_HERE:
        raise BackendError(
            f"{info.path}: tokenizer model {info.tokenizer_model!r} with pre-tokenizer "
            f"{info.pre_tokenizer!r} is not built here (expected 'gpt2' with {sorted(BUILT_HERE)})"
        )
    merges: list[tuple[str, str]] = []
    for merge in info.merges:
        left, space, right = merge.partition(" ")
        if not space or not left or not right or " " in right:
            raise BackendError(f"{info.path}: malformed merge {merge!r}")
        merges.append((left, right))
    vocab = {token: index for index, token in enumerate(info.tokens)}
    if len(vocab) != len(info.tokens):
        raise BackendError(f"{info.path}: the vocabulary holds duplicate tokens")

    tokenizer = RawTokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    # llama.cpp's "smollm" pre-tokenizer splits every digit on its own before the GPT-2 regex, as
    # SmolLM2's tokenizer.json does with a Digits(individual_digits=True) step.
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), byte_level]
    )
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    pairs = list(zip(info.tokens, info.token_types, strict=True))
    tokenizer.add_special_tokens(
        [AddedToken(token, special=True, normalized=False) for token, t in pairs if t == _CONTROL]
    )
    tokenizer.add_tokens(
        [AddedToken(token, special=False, normalized=False) for token, t in pairs if t == _USER_DEFINED]
    )
    return tokenizer
