"""Label scoring for engine NATIVE (``judge_params.scoring: LOGPROBS``) with transformers.

Each label is tokenized as the continuation of the chat prompt and the answer's fixed prefix; the labels'
token trie (:mod:`jurist.backends.local.label_trie`) is walked one depth at a time, and each depth is one
batched forward pass: the last position's log-softmax over the full vocabulary, read at the trie's child
tokens.
Prompts are sorted by length and left-padded, with positions counted from each prompt's own start, so a
prompt's scores do not depend on what shares its batch beyond floating-point summation order.

The output projection runs in float32 (:class:`Float32Head`) unless the model already computes in float32:
from bfloat16 logits, label log-probabilities move in steps of about 1/8 nat and many rows tie exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jurist.backends.hf.states import padded_batches
from jurist.backends.local.label_trie import Step, split_labels, trie_scores
from jurist.records import LabelRequest, LabelScores, Message


def label_scores(
    requests: Sequence[LabelRequest],
    *,
    chat_prompt: Callable[[Sequence[Message], str], str],
    encode: Callable[[str], list[int]],
    context_length: int,
    step: Step,
) -> list[LabelScores]:
    """log P(label | prompt, answer prefix) for every label of every request (``too_long`` when the prompt
    leaves no room, ``error`` when its chat template fails)."""
    results: list[LabelScores | None] = [None] * len(requests)
    prompts: dict[int, list[int]] = {}
    continuations: dict[int, dict[str, list[int]]] = {}
    for index, request in enumerate(requests):
        try:
            base = chat_prompt(request.messages, request.answer_prefix)
            suffix = request.answer_suffix if request.with_suffix else ""
            prompt, labels = split_labels({label: encode(base + label + suffix) for label in request.labels})
        except Exception as exc:
            results[index] = LabelScores(None, "error", error=f"chat template failed: {exc}")
            continue
        if len(prompt) + 1 > context_length:
            error = f"prompt has {len(prompt)} tokens; the model's context is {context_length}"
            results[index] = LabelScores(None, "too_long", prompt_tokens=len(prompt), error=error)
            continue
        prompts[index], continuations[index] = prompt, labels
    for index, scores in trie_scores(prompts, continuations, step).items():
        results[index] = LabelScores(scores, "stop", prompt_tokens=len(prompts[index]))
    return [r if r is not None else LabelScores(None, "error", error="not run") for r in results]


class Float32Head:
    """A causal LM's output projection computed in float32 from its final (normed) hidden states, with the
    logit soft-capping (Gemma 2/3) or scaling (Cohere, Granite) its config declares. The float32 copy of the
    projection's weight is made once."""

    def __init__(self, model: Any) -> None:
        head = model.get_output_embeddings()
        self.base = model.base_model
        self.weight = head.weight.detach().float()
        bias = getattr(head, "bias", None)
        self.bias = bias.detach().float() if bias is not None else None
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.softcap: float | None = getattr(config, "final_logit_softcapping", None)
        self.scale: float | None = getattr(config, "logit_scale", None)
        self.divisor: float | None = getattr(config, "logits_scaling", None)

    def last_logits(self, **inputs: Any) -> Any:
        """float32 logits at the last position of each sequence of a batch."""
        import torch

        hidden = self.base(**inputs).last_hidden_state[:, -1, :].float()
        logits = torch.nn.functional.linear(hidden, self.weight, self.bias)
        if self.scale:
            logits = logits * self.scale
        if self.divisor:
            logits = logits / self.divisor
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits


def head_for(model: Any) -> Float32Head | None:
    """A :class:`Float32Head` for a model that computes in another dtype than float32 (None for a float32
    model: its own logits are float32)."""
    import torch

    if next(model.parameters()).dtype == torch.float32:
        return None
    return Float32Head(model)


def forward_step(
    model: Any, pad_id: int, device: str, batch_size: int, head: Float32Head | None = None
) -> Step:
    """A trie step on a transformers causal LM: batches of ``batch_size`` prompts, one forward pass each
    (the projection through ``head`` when given)."""

    def step(nodes: Sequence[tuple[list[int], list[int]]]) -> list[Mapping[int, float]]:
        import torch

        out: list[Mapping[int, float]] = [{} for _ in nodes]
        for batch, inputs in padded_batches([ids for ids, _ in nodes], batch_size, pad_id, device):
            with torch.inference_mode():
                if head is not None:
                    logits = head.last_logits(**inputs)
                else:
                    logits = model(**inputs, logits_to_keep=1).logits[:, -1, :]
                logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            for row, i in enumerate(batch):
                allowed = nodes[i][1]
                out[i] = dict(zip(allowed, logprobs[row, allowed].tolist(), strict=True))
        return out

    return step
