"""The transformers backend (engine ``NATIVE``): for machines without vLLM.

The model runs through ``transformers``' own ``model.generate``; every request's answer is constrained
with ``outlines_core`` (the regular-expression engine of outlines 1.x):

* **Constraint.** A request's :class:`~jurist.records.Constraint` becomes one full-match regex
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
  by a sampler of jurist's own (:class:`~jurist.backends.hf.plugins.SeededSampler`): transformers draws
  every sequence of a batch from one global random stream, where a judge wants each request's ``seed`` to
  give the same answer whatever else shares its batch. The sampler draws each sequence's token from a
  ``torch.Generator`` seeded with that request's ``seed`` (a random seed from torch's global generator when
  ``seed`` is None) and hands ``generate`` a one-hot choice (up to floating-point differences that padding
  can cause); requests with different seeds still share a batch.
* **Stop strings** end a sequence early (a stopping criterion checks each sequence's recent text) and
  the answer is cut before the first stop string.

``completion_tokens`` counts the generated tokens kept, plus the end-of-sequence token when one was
generated. Log-probabilities of generated tokens (``logprobs``) are not computed by this backend; label
scoring (``score_labels``, ``judge_params.scoring: LOGPROBS``) is: one batched forward pass per depth of the
labels' token trie. :meth:`TransformersBackend.from_model` wraps a model already in memory.

``inference_config.engine_params`` for engine NATIVE (:mod:`jurist.backends.hf.params`): ``batch_size``
(sequences per ``generate`` call, default 16), ``device``, ``head_dtype`` (label scores projected in
float32 by default, :class:`~jurist.backends.hf.labels.Float32Head`). Hidden states (``hidden_states``,
``judge_params.scoring: PROBE``) after any layer come from the same model
(:mod:`jurist.backends.local.states`, :mod:`jurist.backends.hf.states`).

torch, transformers and outlines_core are imported only inside functions, so importing this module is
free on machines without them.
"""

from __future__ import annotations

import gc
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.backends.hf.labels import forward_step, head_for, label_scores
from jurist.backends.hf.loading import load_native
from jurist.backends.hf.params import DEFAULT_BATCH_SIZE
from jurist.backends.hf.plugins import BatchKey, Penalties, RegexMask, SeededSampler, StopStrings
from jurist.backends.hf.states import last_states, token_states
from jurist.backends.hf.vocab import token_bytes
from jurist.backends.local.chat import ChatRenderer
from jurist.backends.local.states import hidden_states
from jurist.backends.schema_regex import compile_schema
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError
from jurist.models.weights import weights_fingerprint
from jurist.records import (
    Completion,
    Constraint,
    ConstraintKind,
    FinishReason,
    GenerationRequest,
    HiddenState,
    LabelRequest,
    LabelScores,
    StateRequest,
)

logger = logging.getLogger("jurist")

CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = ("regex", "choice", "json_schema")
"""What the transformers backend enforces (through outlines-core), in its order of preference."""


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
    ``max_position_embeddings``). ``batch_size`` and ``device`` override ``engine_params``
    (:class:`~jurist.backends.hf.params.NativeEngineParams`).

    Raises :class:`~jurist.errors.BackendError` when torch or transformers is missing, the dtype is
    unknown, or the model, its tokenizer or its chat template cannot be loaded.
    """

    constraint_kinds = CONSTRAINT_KINDS

    def __init__(
        self, config: InferenceConfig, *, batch_size: int | None = None, device: str | None = None
    ) -> None:
        loaded = load_native(
            config,
            "AutoModelForCausalLM",
            "could not load model {name} with transformers",
            batch_size=batch_size,
            device=device,
        )
        params, resolved = config.model, loaded.resolved
        name = resolved.path
        self._revision = params.revision
        self._model_id = resolved.label
        self.batch_size = loaded.batch_size
        self.head_dtype: str = loaded.params.head_dtype
        self.device = loaded.device
        self._path = name
        model, tokenizer = loaded.model, loaded.tokenizer
        self._setup(model, tokenizer, name, params.model_max_length, params.chat_template_kwargs)

    @classmethod
    def from_model(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str = "in-memory model",
        batch_size: int = DEFAULT_BATCH_SIZE,
        context_length: int | None = None,
        head_dtype: str = "auto",
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> TransformersBackend:
        """Wrap a model and tokenizer already in memory (e.g. random weights built on the GPU): nothing is
        loaded, the model stays on its device; ``chat_template_kwargs`` go to its chat template."""
        backend = cls.__new__(cls)
        backend._model_id = backend._path = model_id
        backend._revision = None
        backend.batch_size = batch_size
        backend.head_dtype = head_dtype
        backend.device = str(next(model.parameters()).device)
        backend._setup(model, tokenizer, model_id, context_length, chat_template_kwargs)
        return backend

    def _setup(
        self,
        model: Any,
        tokenizer: Any,
        name: str,
        model_max_length: int | None,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        """Check the tokenizer, neutralise the generation config, place the model, find the context;
        ``template_kwargs``: the chat template's variables."""
        from transformers import GenerationConfig

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
        self._float_head: Any = None  # hf_labels.Float32Head, made on the first label request
        self._tokenizer: Any = tokenizer
        self._chat = ChatRenderer(tokenizer, template_kwargs)

        text_config = (
            model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        )
        context = model_max_length or getattr(text_config, "max_position_embeddings", None)
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

    def describe(self) -> dict[str, Any]:
        """The model as loaded (path, revision, a fingerprint of its weights) and where it runs."""
        return {
            "engine": "transformers",
            "path": self._path,
            "revision": self._revision,
            "weights": weights_fingerprint(self._path),
            "num_layers": int(self.text_config.num_hidden_layers) if self._model is not None else None,
            "device": self.device,
            "batch_size": self.batch_size,
            "label_head_dtype": self._label_head_dtype(),
        }

    def _label_head_dtype(self) -> str | None:
        """The dtype label scores are projected in: float32, or the model's own dtype."""
        if self._model is None:
            return None
        own = str(next(self._model.parameters()).dtype).removeprefix("torch.")
        return own if self.head_dtype == "model" else "float32"

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One completion per request, in request order.

        A prompt longer than the context (its tokens + 1 > ``context_length``) gets ``too_long`` and is not
        run; a request whose chat template or constraint fails, or whose batch raises, gets ``error``.
        """
        if self._model is None:
            raise BackendError("the transformers backend is closed")
        results: list[Completion | None] = [None] * len(requests)
        groups: dict[BatchKey, list[_Item]] = {}
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

    def score_labels(self, requests: Sequence[LabelRequest]) -> list[LabelScores]:
        """log P(label | prompt, answer prefix) for every label (``judge_params.scoring: LOGPROBS``): one
        batched forward pass per depth of the labels' token trie (:mod:`jurist.backends.hf.labels`)."""
        if self._model is None:
            raise BackendError("the transformers backend is closed")
        return label_scores(
            requests,
            chat_prompt=self._chat.prompt,
            encode=self._encode_text,
            context_length=self.context_length,
            step=forward_step(self._model, self._pad_id, self.device, self.batch_size, self._head()),
        )

    def hidden_states(self, requests: Sequence[StateRequest]) -> list[HiddenState]:
        """Each prompt's last-token state after its request's layer, or its pooled state
        (:func:`jurist.backends.local.states.hidden_states`)."""
        if self._model is None:
            raise BackendError("the transformers backend is closed")
        every = lambda prompts, layer, _whole: token_states(  # noqa: E731 (every token's, always)
            self._model, prompts, layer, pad_id=self._pad_id, batch_size=self.batch_size, device=self.device
        )
        last = lambda prompts, layer: self.states(prompts, [layer])[0][:, 0]  # noqa: E731
        context = self.context_length
        return hidden_states(requests, self._chat.prompt, self._encode_text, context, last, None, every)

    def prompt_ids(self, requests: Sequence[LabelRequest]) -> list[list[int] | str]:
        """The token ids of label requests' prompts (chat template, then answer prefix), or why not."""
        out: list[list[int] | str] = []
        for request in requests:
            try:
                out.append(self._encode_text(self._chat.prompt(request.messages, request.answer_prefix)))
            except Exception as exc:  # a template that fails on one row fails that row only
                out.append(f"chat template failed: {exc}")
        return out

    def states(
        self, prompts: Sequence[Sequence[int]], layers: Sequence[int], token_ids: Sequence[int] = ()
    ) -> Any:
        """Last-token states of prompts at ``layers`` and the next-token log-probabilities of ``token_ids``
        (:func:`jurist.backends.hf.states.last_states`)."""
        if self._model is None:
            raise BackendError("the transformers backend is closed")
        return last_states(
            self._model,
            prompts,
            layers,
            pad_id=self._pad_id,
            batch_size=self.batch_size,
            device=self.device,
            token_ids=token_ids,
        )

    @property
    def text_config(self) -> Any:
        """The model's (text) config: ``num_hidden_layers``, ``hidden_size``, ..."""
        config = self._model.config
        return config.get_text_config() if hasattr(config, "get_text_config") else config

    def _encode_text(self, text: str) -> list[int]:
        return [int(i) for i in self._tokenizer.encode(text, add_special_tokens=False)]

    def _head(self) -> Any:
        """The float32 projection label scores use (made on first use; None: the model's own logits)."""
        if self._float_head is None and self.head_dtype != "model":
            self._float_head = head_for(self._model)
        return self._float_head

    def close(self) -> None:
        """Free the model (and the compiled constraints); the backend cannot generate afterwards."""
        if self._model is None:
            return
        self._model = None
        self._float_head = None
        self._indexes.clear()
        self._vocabulary = None
        gc.collect()
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    # ------------------------------------------------------------------------------------- helpers
    def _encode(self, request: GenerationRequest) -> tuple[int, ...]:
        """The prompt's token ids: the chat template with a generation prompt, then the request's prefix,
        no extra special tokens."""
        text = self._chat.prompt(request.messages, request.prefix)
        ids = self._tokenizer.encode(text, add_special_tokens=False)
        return tuple(int(i) for i in ids)

    def _index(self, regex: str) -> Any:
        """The compiled ``outlines_core.Index`` of a regex (compiled once per backend)."""
        index = self._indexes.get(regex)
        if index is None:
            from outlines_core import Index, Vocabulary  # type: ignore[import-untyped]

            if self._vocabulary is None:
                self._vocabulary = Vocabulary(self._eos_id, token_bytes(self._tokenizer, self._eos_ids))
            index = Index(regex, self._vocabulary)
            self._indexes[regex] = index
        return index

    def _run_batch(self, key: BatchKey, batch: Sequence[_Item]) -> list[Completion]:
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
            processors.append(Penalties(key.frequency_penalty, key.presence_penalty, longest))
        if key.regex is not None:
            processors.append(RegexMask(self._index(key.regex), len(batch), longest, self._eos_ids))
        if key.temperature > 0:
            seeds = [
                item.request.seed
                if item.request.seed is not None
                else int(torch.randint(0, 2**62, (1,)).item())
                for item in batch
            ]
            processors.append(SeededSampler(key, seeds, self.device))
        stopper = StopStrings(key.stop, self._tokenizer, longest, len(batch)) if key.stop else None

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
    """The full-match regex a constraint stands for: ``regex``, else ``choices``, else ``json_schema`` (its
    exact whitespace-free regex, :func:`jurist.backends.schema_regex.compile_schema`; where there is none,
    the regex outlines-core derives, one optional space between tokens)."""
    if constraint is None:
        return None
    if constraint.regex is not None:
        return constraint.regex
    if constraint.choices:
        return "(?:" + "|".join(re.escape(c) for c in sorted(constraint.choices, key=len, reverse=True)) + ")"
    if constraint.json_schema is not None:
        from outlines_core.json_schema import build_regex_from_schema  # type: ignore[import-untyped]

        exact = compile_schema(constraint.json_schema).regex
        if exact is not None:
            return exact
        regex: str = build_regex_from_schema(json.dumps(dict(constraint.json_schema)), r"[ ]?")
        return regex
    return None


def _group_key(request: GenerationRequest) -> BatchKey:
    """The batch group of a request; sampling parameters are irrelevant (and dropped) when greedy."""
    greedy = request.temperature <= 0
    return BatchKey(
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
