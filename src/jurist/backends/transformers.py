"""The transformers backend (engine ``NATIVE``): for machines without vLLM.

The model runs through ``transformers``' own ``model.generate``; every request's answer is constrained
with ``outlines_core`` (the regular-expression engine of outlines 1.x):

* **Constraint.** A request's :class:`~jurist.backends.base.Constraint` becomes one full-match regex
  (``regex``, else the alternation of ``choices``, else the regex outlines derives from ``json_schema``).
  It is compiled once per backend into an ``outlines_core.Index`` over the tokenizer's vocabulary, given as
  the raw bytes of each token (so byte-level BPE pieces of one UTF-8 character are handled exactly) and
  without special tokens (so no ``<|im_start|>`` can appear inside an answer). A logits processor keeps one
  ``outlines_core.Guide`` per sequence of the batch, advances it with each sequence's last token and masks
  every logit the guide does not allow (left padding is harmless: the guides only see generated tokens).
* **Batching.** Requests are grouped by everything that shapes one ``generate`` call (constraint, sampling
  parameters, penalties, stop strings, ``max_tokens``); within a group they are sorted by prompt length
  (less padding) and cut into batches of ``batch_size``, left-padded. Completions come back in request
  order. A batch generates at most ``context - longest prompt`` tokens, so that no position passes the
  model's context.
* **Sampling.** ``temperature == 0`` is greedy. Otherwise temperature, top-k, top-p and min-p are applied
  by this module's own sampler, which draws each sequence's token from a ``torch.Generator`` seeded with
  that request's ``seed`` (a random seed from torch's global generator when ``seed`` is None) and hands
  ``generate`` a one-hot choice. Every request thus has its own random stream: a seed gives the same answer
  whatever else shares its batch (up to floating-point differences that padding can cause), and requests
  with different seeds still share a batch.
* **Stop strings** end a sequence early (a stopping criterion checks each sequence's recent text) and
  the answer is cut before the first stop string.

``completion_tokens`` counts the generated tokens kept, plus the end-of-sequence token when one was
generated. Log-probabilities (``logprobs``, ``label_tokens``) are not computed by this backend.

torch, transformers and outlines_core are imported only inside functions, so importing this module is
free on machines without them.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from jurist.backends.base import Completion, Constraint, FinishReason, GenerationRequest
from jurist.config import InferenceConfig
from jurist.errors import BackendError

if TYPE_CHECKING:
    import torch

logger = logging.getLogger("jurist")

DEFAULT_BATCH_SIZE = 16
# torch_dtype_str -> name of the torch dtype ("auto": the dtype the checkpoint was saved in).
_DTYPES: Mapping[str, str] = MappingProxyType(
    {
        "auto": "auto",
        "float32": "float32",
        "fp32": "float32",
        "float": "float32",
        "bfloat16": "bfloat16",
        "bf16": "bfloat16",
        "float16": "float16",
        "fp16": "float16",
        "half": "float16",
    }
)
_SENTENCEPIECE_SPACE = "\u2581"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@dataclass(frozen=True)
class _GroupKey:
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


@dataclass(frozen=True)
class _Item:
    """One request ready to run: its position in the call, the request and its prompt token ids."""

    position: int
    request: GenerationRequest
    prompt_ids: tuple[int, ...]


class TransformersBackend:
    """A transformers causal LM behind the :class:`~jurist.backends.base.Backend` protocol.

    ``config.model``: ``model_name`` (a local folder or hub id; None means the embedded default model),
    ``tokenizer_name``, ``revision``, ``trust_remote_code``, ``model_kwargs`` (passed to
    ``from_pretrained``), ``torch_dtype_str`` (auto, float32, bfloat16, float16; default float32 on CPU and
    bfloat16 on CUDA) and ``model_max_length`` (the context; default the model config's
    ``max_position_embeddings``). ``batch_size``: sequences per ``generate`` call (default
    ``engine_params.max_num_seqs``, else 16). ``device``: ``cuda`` when available, else ``cpu``, unless given.

    Raises :class:`~jurist.errors.BackendError` when torch or transformers is missing, the dtype is
    unknown, or the model, its tokenizer or its chat template cannot be loaded.
    """

    def __init__(
        self, config: InferenceConfig, *, batch_size: int | None = None, device: str | None = None
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise BackendError(
                f"engine NATIVE needs torch and transformers ({exc}); install jurist[native]"
            ) from exc

        params = config.model
        if params.model_name is None:
            from jurist.default_model import DEFAULT_MODEL_LABEL, default_model_path

            name = str(default_model_path())
            self._model_id = DEFAULT_MODEL_LABEL
        else:
            name = params.model_name
            self._model_id = name
        size = batch_size or config.engine_params.max_num_seqs or DEFAULT_BATCH_SIZE
        if size < 1:
            raise BackendError(f"batch_size must be at least 1, got {size}")
        self.batch_size = size
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = _resolve_dtype(params.torch_dtype_str, self.device)

        common: dict[str, Any] = {"trust_remote_code": params.trust_remote_code}
        if params.revision is not None:
            common["revision"] = params.revision
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(params.tokenizer_name or name, **common)
            model: Any = AutoModelForCausalLM.from_pretrained(
                name,
                dtype=dtype if dtype == "auto" else getattr(torch, dtype),
                **common,
                **params.model_kwargs,
            )
        except Exception as exc:
            raise BackendError(f"could not load model {name!r} with transformers: {exc}") from exc
        if not getattr(tokenizer, "chat_template", None):
            raise BackendError(f"the tokenizer of {name!r} has no chat template; jurist sends chat messages")

        eos_ids = _eos_ids(tokenizer.eos_token_id, model.generation_config.eos_token_id)
        if not eos_ids:
            raise BackendError(
                f"model {name!r} has no end-of-sequence token (tokenizer or generation config)"
            )
        pad_id = tokenizer.pad_token_id
        self._eos_id: int = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else min(eos_ids)
        self._eos_ids = frozenset(eos_ids)
        self._pad_id: int = pad_id if pad_id is not None else self._eos_id
        # A neutral generation config: no sampling, penalty or banned-token default of the checkpoint can
        # slip into generate(); this module applies what each request asks for.
        model.generation_config = GenerationConfig(  # type: ignore[no-untyped-call]
            eos_token_id=sorted(self._eos_ids), pad_token_id=self._pad_id, bos_token_id=None
        )
        model.to(self.device)
        model.eval()
        self._model: Any = model
        self._tokenizer: Any = tokenizer

        text_config = (
            model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        )
        context = params.model_max_length or getattr(text_config, "max_position_embeddings", None)
        if context is None:
            limit = getattr(tokenizer, "model_max_length", None)
            context = limit if isinstance(limit, int) and limit < 10**8 else 2048
        self.context_length: int = int(context)
        self._vocabulary: Any = None  # outlines_core.Vocabulary, built on the first constrained request
        self._indexes: dict[str, Any] = {}  # regex -> outlines_core.Index

    # ------------------------------------------------------------------------------------ protocol
    @property
    def model_id(self) -> str:
        """The model's name or path, as configured (the default model's folder when none was)."""
        return self._model_id

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One completion per request, in request order.

        A prompt longer than the context (its tokens + 1 > ``context_length``) gets ``too_long`` and is not
        run; a request whose chat template or constraint fails, or whose batch raises, gets ``error``.
        """
        if self._model is None:
            raise BackendError("the transformers backend is closed")
        results: list[Completion | None] = [None] * len(requests)
        groups: dict[_GroupKey, list[_Item]] = {}
        for position, request in enumerate(requests):
            try:
                prompt_ids = self._encode(request)
            except Exception as exc:
                results[position] = Completion("", "error", error=f"chat template failed: {exc}")
                continue
            try:
                key = _group_key(request)
            except Exception as exc:
                results[position] = Completion(
                    "", "error", prompt_tokens=len(prompt_ids), error=f"bad constraint: {exc}"
                )
                continue
            n = len(prompt_ids)
            if n + 1 > self.context_length:
                results[position] = Completion(
                    "",
                    "too_long",
                    prompt_tokens=n,
                    error=f"prompt has {n} tokens; the model's context is {self.context_length}",
                )
                continue
            groups.setdefault(key, []).append(_Item(position, request, prompt_ids))

        for key, items in groups.items():
            items.sort(key=lambda item: len(item.prompt_ids))
            for start in range(0, len(items), self.batch_size):
                batch = items[start : start + self.batch_size]
                try:
                    completions = self._run_batch(key, batch)
                except Exception as exc:
                    logger.exception("transformers backend: a batch of %d requests failed", len(batch))
                    message = f"{type(exc).__name__}: {exc}"
                    completions = [
                        Completion("", "error", prompt_tokens=len(item.prompt_ids), error=message)
                        for item in batch
                    ]
                for item, completion in zip(batch, completions, strict=True):
                    results[item.position] = completion
        return [c if c is not None else Completion("", "error", error="not run") for c in results]

    def close(self) -> None:
        """Free the model (and the compiled constraints); the backend cannot generate afterwards."""
        if self._model is None:
            return
        self._model = None
        self._indexes.clear()
        self._vocabulary = None
        gc.collect()
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    # ------------------------------------------------------------------------------------- helpers
    def _encode(self, request: GenerationRequest) -> tuple[int, ...]:
        """The prompt's token ids: the chat template with a generation prompt, no extra special tokens."""
        text = self._tokenizer.apply_chat_template(
            [m.as_dict() for m in request.messages], tokenize=False, add_generation_prompt=True
        )
        ids = self._tokenizer.encode(text, add_special_tokens=False)
        return tuple(int(i) for i in ids)

    def _index(self, regex: str) -> Any:
        """The compiled ``outlines_core.Index`` of a regex (compiled once per backend)."""
        index = self._indexes.get(regex)
        if index is None:
            from outlines_core import Index, Vocabulary  # type: ignore[import-untyped]

            if self._vocabulary is None:
                self._vocabulary = Vocabulary(self._eos_id, _token_bytes(self._tokenizer, self._eos_ids))
            index = Index(regex, self._vocabulary)
            self._indexes[regex] = index
        return index

    def _run_batch(self, key: _GroupKey, batch: Sequence[_Item]) -> list[Completion]:
        """Run one left-padded batch through ``generate`` and read each sequence's answer."""
        import torch
        from transformers import LogitsProcessorList, StoppingCriteriaList

        longest = max(len(item.prompt_ids) for item in batch)
        input_ids = torch.full((len(batch), longest), self._pad_id, dtype=torch.long)
        attention = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, item in enumerate(batch):
            n = len(item.prompt_ids)
            input_ids[row, longest - n :] = torch.tensor(item.prompt_ids, dtype=torch.long)
            attention[row, longest - n :] = 1
        max_new = min(key.max_tokens, self.context_length - longest)

        processors: list[Any] = []
        if key.frequency_penalty or key.presence_penalty:
            processors.append(_Penalties(key.frequency_penalty, key.presence_penalty, longest))
        if key.regex is not None:
            processors.append(_RegexMask(self._index(key.regex), len(batch), longest, self._eos_ids))
        if key.temperature > 0:
            seeds = [
                item.request.seed
                if item.request.seed is not None
                else int(torch.randint(0, 2**62, (1,)).item())
                for item in batch
            ]
            processors.append(_SeededSampler(key, seeds, self.device))
        stopper = _StopStrings(key.stop, self._tokenizer, longest, len(batch)) if key.stop else None

        with torch.inference_mode():
            output = self._model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                max_new_tokens=max_new,
                do_sample=False,
                num_beams=1,
                logits_processor=LogitsProcessorList(processors),
                stopping_criteria=StoppingCriteriaList([stopper] if stopper else []),
            )
        generated: list[list[int]] = output[:, longest:].tolist()

        completions: list[Completion] = []
        for row, item in enumerate(batch):
            ids = generated[row]
            end = next((i for i, token in enumerate(ids) if token in self._eos_ids), None)
            kept = ids[:end] if end is not None else ids
            if stopper is not None and stopper.stopped_at[row] is not None:
                kept = kept[: stopper.stopped_at[row]]
            text = self._tokenizer.decode(kept, skip_special_tokens=True, clean_up_tokenization_spaces=False)
            text, hit_stop = _cut_at_stop(text, key.stop)
            finished = hit_stop or end is not None or len(kept) < max_new
            reason: FinishReason = "stop" if finished else "length"
            completions.append(
                Completion(
                    text,
                    reason,
                    prompt_tokens=len(item.prompt_ids),
                    completion_tokens=len(kept) + (1 if end is not None and not hit_stop else 0),
                )
            )
        return completions


# ------------------------------------------------------------------------------------------ requests


def _resolve_dtype(value: str | None, device: str) -> str:
    """The torch dtype name for ``torch_dtype_str`` (None: float32 on CPU, bfloat16 on CUDA)."""
    if value is None:
        return "bfloat16" if device.startswith("cuda") else "float32"
    resolved = _DTYPES.get(value.strip().lower())
    if resolved is None:
        raise BackendError(
            f"model.torch_dtype_str {value!r} is not a dtype; use one of auto, float32, bfloat16, float16"
        )
    return resolved


def _eos_ids(tokenizer_eos: int | None, generation_eos: int | list[int] | None) -> set[int]:
    """Every id that ends a sequence: the tokenizer's eos and the generation config's."""
    ids: set[int] = set()
    if tokenizer_eos is not None:
        ids.add(int(tokenizer_eos))
    if isinstance(generation_eos, int):
        ids.add(generation_eos)
    elif generation_eos is not None:
        ids.update(int(i) for i in generation_eos)
    return ids


def constraint_regex(constraint: Constraint | None) -> str | None:
    """The full-match regex a constraint stands for: ``regex``, else ``choices``, else ``json_schema``."""
    if constraint is None:
        return None
    if constraint.regex is not None:
        return constraint.regex
    if constraint.choices:
        return "(?:" + "|".join(re.escape(c) for c in sorted(constraint.choices, key=len, reverse=True)) + ")"
    if constraint.json_schema is not None:
        from outlines_core.json_schema import build_regex_from_schema  # type: ignore[import-untyped]

        regex: str = build_regex_from_schema(json.dumps(dict(constraint.json_schema)), r"[ ]?")
        return regex
    return None


def _group_key(request: GenerationRequest) -> _GroupKey:
    """The batch group of a request; sampling parameters are irrelevant (and dropped) when greedy."""
    greedy = request.temperature <= 0
    return _GroupKey(
        regex=constraint_regex(request.constraint),
        max_tokens=request.max_tokens,
        temperature=0.0 if greedy else request.temperature,
        top_p=1.0 if greedy else request.top_p,
        top_k=None if greedy or not request.top_k or request.top_k < 0 else request.top_k,
        min_p=0.0 if greedy else request.min_p,
        frequency_penalty=request.frequency_penalty,
        presence_penalty=request.presence_penalty,
        stop=tuple(s for s in request.stop if s),
    )


def _cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """The text before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


# ---------------------------------------------------------------------------------------- vocabulary


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


def _token_bytes(tokenizer: Any, eos_ids: frozenset[int]) -> dict[bytes, list[int]]:
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


# ------------------------------------------------------------------------- generate() plug-ins


class _RegexMask:
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


class _Penalties:
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


class _SeededSampler:
    """Logits processor, last in line: temperature, top-k, top-p and min-p, then one draw per sequence
    from that sequence's own seeded ``torch.Generator``. Returns one-hot logits (0 for the drawn token,
    -inf elsewhere), so ``generate`` runs greedy and picks exactly the drawn token."""

    def __init__(self, key: _GroupKey, seeds: Sequence[int], device: str) -> None:
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


class _StopStrings:
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
