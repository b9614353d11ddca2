"""Sequence-classification models (reward models, classifiers) on transformers: engine NATIVE.

The conversation of each request is rendered with the model's chat template (no generation prompt, as a
reward model scores a finished answer), batched with right padding (the classifier reads the last real
token) and run through ``AutoModelForSequenceClassification``; each request gets the model's raw outputs
(its logits, one per label). A conversation longer than the context is ``too_long`` and not run; a batch
that raises gives its requests ``error``. :func:`is_sequence_classifier` tells, from a model's
configuration, whether engine NATIVE needs this backend rather than the causal-LM one.

torch and transformers are imported inside the functions that use them.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Sequence
from typing import Any

from jurist.backends.hf.loading import load_native
from jurist.backends.local.chat import ChatRenderer
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError
from jurist.models.default_model import DEFAULT_MODEL_LABEL
from jurist.models.resolve import resolve_model
from jurist.models.weights import weights_fingerprint
from jurist.records import Completion, ConstraintKind, GenerationRequest, RewardRequest, RewardScores

logger = logging.getLogger("jurist")


def is_sequence_classifier(config: InferenceConfig) -> bool:
    """Whether the configured model is a ``*ForSequenceClassification`` (False for the default model, or
    when its configuration cannot be read here)."""
    name = config.model.model_name
    if name is None:
        return False
    try:
        from transformers import AutoConfig

        path = resolve_model(name).path  # a catalogue name or a GGUF file is the folder it resolves to
        model_config = AutoConfig.from_pretrained(
            path, revision=config.model.revision, trust_remote_code=config.model.trust_remote_code
        )
    except Exception:
        return False
    return any(
        a.endswith("ForSequenceClassification") for a in getattr(model_config, "architectures", None) or ()
    )


class TransformersRewardBackend:
    """A transformers sequence classifier behind the backend protocol: it scores, it does not generate."""

    constraint_kinds: tuple[ConstraintKind, ...] = ()

    def __init__(
        self, config: InferenceConfig, *, batch_size: int | None = None, device: str | None = None
    ) -> None:
        params = config.model
        if params.model_name is None:
            raise BackendError(
                "a reward judge needs inference_config.model.model_name (a sequence classifier)"
            )
        loaded = load_native(
            config,
            "AutoModelForSequenceClassification",
            "could not load {name} as a sequence classifier",
            batch_size=batch_size,
            device=device,
        )
        self._path, self._model_id = loaded.resolved.path, loaded.resolved.label
        self._revision = params.revision
        self.batch_size = loaded.batch_size
        self.device = loaded.device
        tokenizer, model = loaded.tokenizer, loaded.model
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.config.pad_token_id = tokenizer.pad_token_id
        tokenizer.padding_side = "right"
        self._model: Any = model.to(self.device).eval()
        self._tokenizer = tokenizer
        self._chat = ChatRenderer(tokenizer, params.chat_template_kwargs)
        text_config = (
            model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        )
        context: Any = params.model_max_length or getattr(text_config, "max_position_embeddings", None)
        self.context_length = int(context or 2048)

    @property
    def model_id(self) -> str:
        return self._model_id if self._model_id is not None else DEFAULT_MODEL_LABEL

    def describe(self) -> dict[str, Any]:
        return {
            "engine": "transformers (sequence classification)",
            "path": self._path,
            "revision": self._revision,
            "weights": weights_fingerprint(self._path),
            "device": self.device,
            "labels": None if self._model is None else self._model.config.num_labels,
        }

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        error = f"{self._model_id} is a sequence classifier: it scores conversations, it does not generate"
        return [Completion("", "error", error=error) for _ in requests]

    def score_rewards(self, requests: Sequence[RewardRequest]) -> list[RewardScores]:
        """The model's raw outputs for each conversation, in request order."""
        import torch

        if self._model is None:
            raise BackendError("the reward backend is closed")
        results: list[RewardScores | None] = [None] * len(requests)
        encoded: list[tuple[int, list[int]]] = []
        for index, request in enumerate(requests):
            ids = self._tokenizer.encode(
                self._chat.text(request.messages, generation_prompt=False), add_special_tokens=False
            )
            if len(ids) > self.context_length:
                error = (
                    f"the conversation has {len(ids)} tokens; the model's context is {self.context_length}"
                )
                results[index] = RewardScores(None, "too_long", len(ids), error=error)
            else:
                encoded.append((index, ids))
        encoded.sort(key=lambda item: len(item[1]))
        for start in range(0, len(encoded), self.batch_size):
            batch = encoded[start : start + self.batch_size]
            try:
                padded = self._tokenizer.pad({"input_ids": [ids for _, ids in batch]}, return_tensors="pt")
                with torch.inference_mode():
                    logits = self._model(
                        input_ids=padded["input_ids"].to(self.device),
                        attention_mask=padded["attention_mask"].to(self.device),
                    ).logits.float()
                for row, (index, ids) in enumerate(batch):
                    results[index] = RewardScores(tuple(logits[row].tolist()), "stop", prompt_tokens=len(ids))
            except Exception as exc:
                logger.exception("reward backend: a batch of %d conversations failed", len(batch))
                for index, ids in batch:
                    results[index] = RewardScores(
                        None, "error", len(ids), error=f"{type(exc).__name__}: {exc}"
                    )
        return [r if r is not None else RewardScores(None, "error", error="not run") for r in results]

    def close(self) -> None:
        if self._model is None:
            return
        self._model = None
        gc.collect()
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()
