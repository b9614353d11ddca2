"""``transformers.generate`` plug-ins for engine NATIVE: the regex mask, penalties, a per-sequence seeded
sampler and stop strings.

transformers samples every sequence of a batch from one global random stream; :class:`SeededSampler`
draws each sequence's token from a ``torch.Generator`` seeded with that request's seed instead, so a seed
gives the same answer whatever else shares its batch. torch is imported inside the methods that use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class BatchKey:
    """Everything that must be equal for requests to share one ``generate`` call."""

    regex: str | None
    max_tokens: int
    temperature: float
    top_p: float
    top_k: int | None
    min_p: float
    frequency_penalty: float
    presence_penalty: float
    stop: tuple[str, ...]


class RegexMask:
    """Logits processor: one outlines_core ``Guide`` per sequence; masks every token its guide forbids.

    From the second step on, each sequence's last token advances its guide. A sequence that ended (an
    eos token, or a token its guide does not accept: the padding generate writes after a stopping
    criterion fired) is left unmasked; generate replaces its tokens with padding anyway.
    """

    def __init__(self, index: Any, batch: int, prompt_length: int, eos_ids: frozenset[int]) -> None:
        from outlines_core import Guide

        self._guides = [Guide(index) for _ in range(batch)]
        self._done = [False] * batch
        self._prompt_length = prompt_length
        self._eos_ids = eos_ids
        self._bitmask: torch.Tensor | None = None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        batch, vocab = scores.shape
        if input_ids.shape[1] > self._prompt_length:
            for row, token in enumerate(input_ids[:, -1].tolist()):
                if self._done[row]:
                    continue
                guide = self._guides[row]
                if token in self._eos_ids or not guide.accepts_tokens([token]):
                    self._done[row] = True
                else:
                    guide.advance(token_id=token, return_tokens=False)
        words = (vocab + 31) // 32
        if self._bitmask is None or self._bitmask.shape != (batch, words):
            self._bitmask = torch.zeros((batch, words), dtype=torch.int32)
        bitmask = self._bitmask
        for row, guide in enumerate(self._guides):
            if self._done[row]:
                bitmask[row].fill_(-1)
            else:
                bitmask[row].zero_()
                guide.write_mask_into(bitmask[row].data_ptr(), words, 4)
        shifts = torch.arange(32, dtype=torch.int32)
        allowed = ((bitmask.unsqueeze(-1) >> shifts) & 1).bool().view(batch, words * 32)[:, :vocab]
        allowed = allowed.to(scores.device)
        masked = scores.masked_fill(~allowed, -math.inf)
        # An earlier processor may have pushed every allowed token to -inf: keep the allowed set then.
        dead = torch.isneginf(masked).all(dim=-1)
        if bool(dead.any()):
            masked[dead] = torch.zeros_like(masked[dead]).masked_fill(~allowed[dead], -math.inf)
        return masked


class Penalties:
    """Logits processor: OpenAI-style frequency and presence penalties over the generated tokens."""

    def __init__(self, frequency: float, presence: float, prompt_length: int) -> None:
        self._frequency = frequency
        self._presence = presence
        self._prompt_length = prompt_length

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        generated = input_ids[:, self._prompt_length :]
        if generated.shape[1] == 0:
            return scores
        counts = torch.zeros_like(scores)
        counts.scatter_add_(
            1, generated.clamp(max=scores.shape[1] - 1), torch.ones_like(generated, dtype=scores.dtype)
        )
        return scores - self._frequency * counts - self._presence * (counts > 0).to(scores.dtype)


class SeededSampler:
    """Logits processor, last in line: temperature, top-k, top-p and min-p, then one draw per sequence
    from that sequence's own seeded ``torch.Generator``. Returns one-hot logits (0 for the drawn token,
    -inf elsewhere), so ``generate`` runs greedy and picks exactly the drawn token."""

    def __init__(self, key: BatchKey, seeds: Sequence[int], device: str) -> None:
        import torch

        self._key = key
        self._generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        key = self._key
        logits = scores.float() / key.temperature
        if key.top_k is not None and key.top_k < logits.shape[-1]:
            kth = torch.topk(logits, key.top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, -math.inf)
        probs = torch.softmax(logits, dim=-1)
        if key.top_p < 1.0:
            ordered, order = torch.sort(probs, dim=-1, descending=True)
            drop = (torch.cumsum(ordered, dim=-1) - ordered) > key.top_p
            probs = torch.zeros_like(probs).scatter(1, order, ordered.masked_fill(drop, 0.0))
        if key.min_p > 0.0:
            floor = probs.max(dim=-1, keepdim=True).values * key.min_p
            probs = probs.masked_fill(probs < floor, 0.0)
        out = torch.full_like(scores, -math.inf)
        for row, generator in enumerate(self._generators):
            weights = probs[row]
            if not bool(torch.isfinite(weights).all()) or float(weights.sum()) <= 0.0:
                choice = int(torch.argmax(scores[row]).item())
            else:
                choice = int(torch.multinomial(weights, 1, generator=generator).item())
            out[row, choice] = 0.0
        return out


class StopStrings:
    """Stopping criterion: a sequence stops once its recent text holds a stop string.

    ``stopped_at[row]`` records how many tokens the sequence had generated then.
    """

    def __init__(self, stop: Sequence[str], tokenizer: Any, prompt_length: int, batch: int) -> None:
        self._stop = tuple(stop)
        self._tokenizer = tokenizer
        self._prompt_length = prompt_length
        # every token carries at least one byte: this many tokens hold the longest stop string
        self._tail = max(len(s.encode()) for s in stop) + 4
        self.stopped_at: list[int | None] = [None] * batch

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        import torch

        generated: list[list[int]] = input_ids[:, self._prompt_length :].tolist()
        for row, ids in enumerate(generated):
            if self.stopped_at[row] is None:
                tail = self._tokenizer.decode(ids[-self._tail :], skip_special_tokens=True)
                if any(s in tail for s in self._stop):
                    self.stopped_at[row] = len(ids)
        return torch.tensor(
            [s is not None for s in self.stopped_at], dtype=torch.bool, device=input_ids.device
        )
