"""Hidden states of prompts' last tokens, shared by engines VLLM and NATIVE (``judge_params.scoring: PROBE``).

A :class:`~jurist.records.StateRequest`'s prompt is the one LOGPROBS scores its labels after (the chat
template, then the answer prefix); the engine gives the state of its last token after the request's layer
(:class:`~jurist.records.StateRequest` says which state). One forward pass per prompt and no decoding step;
a prompt longer than the context is ``too_long``, one whose chat template fails is ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jurist.records import HiddenState, Message, StateRequest

States = Callable[[list[list[int]], int], Any]
"""The engine's part: token ids of prompts and a layer -> an array (prompts x hidden size) of their states."""


def hidden_states(
    requests: Sequence[StateRequest],
    chat_prompt: Callable[[Sequence[Message], str], str],
    encode: Callable[[str], list[int]],
    context_length: int,
    states: States,
    layer_problem: Callable[[int], str | None] = lambda _layer: None,
) -> list[HiddenState]:
    """Each request's state, in request order. ``layer_problem(layer)``: why the engine cannot give states
    after that layer (None: it can). Identical prompts are run once: a pair's mirror sends the same two
    prompts, and reading each once keeps p_a(row) = 1 - p_a(mirror) exact where the engine's numerics vary
    with the batch (bfloat16)."""
    results: list[HiddenState | None] = [None] * len(requests)
    by_layer: dict[int, dict[tuple[int, ...], list[int]]] = {}
    for index, request in enumerate(requests):
        try:
            prompt = encode(chat_prompt(request.messages, request.answer_prefix))
        except Exception as exc:  # a template that fails on one row fails that row only
            results[index] = HiddenState(None, "error", error=f"chat template failed: {exc}")
            continue
        problem = layer_problem(request.layer)
        if len(prompt) >= context_length:
            error = f"prompt has {len(prompt)} tokens; the model's context is {context_length}"
            results[index] = HiddenState(None, "too_long", prompt_tokens=len(prompt), error=error)
        elif problem is not None:
            results[index] = HiddenState(None, "error", prompt_tokens=len(prompt), error=problem)
        else:
            by_layer.setdefault(request.layer, {}).setdefault(tuple(prompt), []).append(index)
    for layer, distinct in by_layer.items():
        found = states([list(p) for p in distinct], layer)
        for row, (tokens, indexes) in enumerate(distinct.items()):
            for index in indexes:
                results[index] = HiddenState(found[row], "stop", prompt_tokens=len(tokens))
    return [r if r is not None else HiddenState(None, "error", error="not run") for r in results]
