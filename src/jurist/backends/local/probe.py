"""Label scores from a probe head (``judge_params.scoring: PROBE``), shared by engines VLLM and NATIVE.

A label request's prompt is the one LOGPROBS scores its labels after (the chat template, then the answer
prefix); the engine gives the hidden state of its last token at the head's layer
(:mod:`jurist.models.probe_head` says which state), and the head turns it into the labels' log-probabilities.
One forward pass per prompt and no decoding step; a prompt longer than the context is ``too_long``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jurist.models.probe_head import ProbeHead, load_head
from jurist.models.truncate import num_layers
from jurist.models.weights import weights_fingerprint
from jurist.records import LabelRequest, LabelScores, Message

States = Callable[[list[list[int]]], Any]
"""The engine's part: token ids of prompts -> an array (prompts x hidden size) of their last states."""


def prompt_ids(
    requests: Sequence[LabelRequest],
    chat_prompt: Callable[[Sequence[Message], str], str],
    encode: Callable[[str], list[int]],
) -> list[list[int] | str]:
    """Each request's prompt token ids (the answer prefix included), or why its chat template failed."""
    out: list[list[int] | str] = []
    for request in requests:
        try:
            out.append(encode(chat_prompt(request.messages, request.answer_prefix)))
        except Exception as exc:  # a template that fails on one row fails that row only
            out.append(f"chat template failed: {exc}")
    return out


def probe_scores(
    requests: Sequence[LabelRequest],
    head: ProbeHead,
    ids: Sequence[list[int] | str],
    context_length: int,
    states: States,
) -> list[LabelScores]:
    """The head's label log-probabilities for each request, in order."""
    results: list[LabelScores | None] = [None] * len(requests)
    sent: dict[int, tuple[int, ...]] = {}
    for index, (request, prompt) in enumerate(zip(requests, ids, strict=True)):
        if isinstance(prompt, str):
            results[index] = LabelScores(None, "error", error=prompt)
        elif len(prompt) >= context_length:
            error = f"prompt has {len(prompt)} tokens; the model's context is {context_length}"
            results[index] = LabelScores(None, "too_long", prompt_tokens=len(prompt), error=error)
        elif set(request.labels) != set(head.labels):
            error = f"the probe head scores {', '.join(head.labels)}, not {', '.join(request.labels)}"
            results[index] = LabelScores(None, "error", error=error)
        else:
            sent[index] = tuple(prompt)
    if sent:
        # one state per distinct prompt: a pair's mirror sends the same two prompts, and reading them once
        # keeps p_a(row) = 1 - p_a(mirror) exact where the engine's numerics vary with the batch (bfloat16)
        distinct: dict[tuple[int, ...], int] = {}
        for tokens in sent.values():
            distinct.setdefault(tokens, len(distinct))
        logprobs = head.log_probabilities(states([list(p) for p in distinct]))
        for index, tokens in sent.items():
            row = distinct[tokens]
            scores = {label: float(logprobs[row, k]) for k, label in enumerate(head.labels)}
            results[index] = LabelScores(scores, "stop", prompt_tokens=len(tokens))
    return [r if r is not None else LabelScores(None, "error", error="not run") for r in results]


def head_for_engine(path: str, model_name: str, folder: str) -> ProbeHead:
    """The head file an engine loading ``folder`` (a local folder or a hub id) scores with, refused (naming
    both) when it was fitted on another model."""
    head = load_head(path)
    local = Path(folder).is_dir()
    head.check_model(model_name, weights_fingerprint(folder), num_layers(folder) if local else None)
    return head
