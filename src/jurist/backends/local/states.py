"""Hidden states of prompts, shared by engines VLLM and NATIVE (``judge_params.scoring: PROBE``).

A :class:`~jurist.records.StateRequest`'s prompt is the one LOGPROBS scores its labels after (the chat
template, then the answer prefix); the engine gives the state of its last token after the request's layer
(:class:`~jurist.records.StateRequest` says which state), or, for pooled requests, every token's state, of
which the mean over the request's ``text`` (its span found here) is taken. One forward pass per prompt and no
decoding step; a prompt longer than the context is ``too_long``, one whose chat template fails, or that does
not hold the text to pool, is ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jurist.records import HiddenState, Message, Pooling, StateRequest

States = Callable[[list[list[int]], int], Any]
"""The engine's part: token ids of prompts and a layer -> an array (prompts x hidden size) of their states."""
TokenStates = Callable[[list[list[int]], int, bool], Sequence[Any]]
"""The engine's part for pooled requests: token ids of prompts, a layer and ``whole`` -> each prompt's states
of its tokens (an array, tokens x hidden size, per prompt): every token's when ``whole``, else at least those
past the prefix the engine found in its cache (the states of a cached prefix are not computed again, so an
array may hold only the prompt's last tokens)."""


def text_span(
    prompt: str, text: str, encode: Callable[[str], list[int]], ids: Sequence[int] | None = None
) -> tuple[int, int] | str:
    """The tokens ``[start, end)`` of ``prompt``'s token ids (``ids``, else encoded here) that hold ``text``
    where it last occurs (its surrounding whitespace ignored): those past the tokens the prompt's text before
    it encodes to alike, up to the token that holds its last character (a token merged across either edge,
    a space before a word say, counts with the text); or why there are none."""
    wanted = text.strip()
    where = prompt.rfind(wanted) if wanted else -1
    if where < 0:
        return "the text to pool is not in the prompt (empty, or changed by the template)"
    ids = list(encode(prompt) if ids is None else ids)
    start = _shared(ids, encode(prompt[:where]))
    through = encode(prompt[: where + len(wanted)])
    shared = _shared(ids, through)
    end = shared if shared == len(through) else shared + 1
    return (start, end) if end > start else "the text to pool has no tokens of its own in the prompt"


def _shared(ids: Sequence[int], prefix: Sequence[int]) -> int:
    """How many leading tokens ``ids`` and ``prefix`` have alike."""
    count = 0
    for a, b in zip(ids, prefix, strict=False):
        if a != b:
            break
        count += 1
    return count


def pool(tokens: Any, span: tuple[int, int] | None, pooling: Pooling, length: int | None = None) -> Any:
    """A prompt's feature from the states of its last tokens (tokens x hidden size; all ``length`` of them
    when None): the last token's, the mean over ``span`` (counted in the whole prompt), or both (the last
    token's first), as float32."""
    import numpy as np

    states = np.asarray(tokens, dtype=np.float32)
    if pooling == "last" or span is None:
        return states[-1]
    skipped = 0 if length is None else length - len(states)
    if span[0] < skipped:
        raise ValueError(f"tokens {span[0]} to {skipped} of the span are not among the states given")
    mean = states[span[0] - skipped : span[1] - skipped].mean(axis=0, dtype=np.float64).astype(np.float32)
    return mean if pooling == "mean" else np.concatenate([states[-1], mean])


def hidden_states(
    requests: Sequence[StateRequest],
    chat_prompt: Callable[[Sequence[Message], str], str],
    encode: Callable[[str], list[int]],
    context_length: int,
    states: States,
    layer_problem: Callable[[int], str | None] | None = None,
    token_states: TokenStates | None = None,
) -> list[HiddenState]:
    """Each request's state, in request order. ``layer_problem(layer)``: why the engine cannot give states
    after that layer (None: it can; no function: it can give any). ``token_states``: every token's states,
    for pooled requests (None: the engine gives last tokens' alone, and a pooled request is an error).
    Identical prompts are run once: a pair's mirror sends the same two prompts, and reading each once keeps
    p_a(row) = 1 - p_a(mirror) exact where the engine's numerics vary with the batch (bfloat16)."""
    results: list[HiddenState | None] = [None] * len(requests)
    by_layer: dict[tuple[int, bool], dict[tuple[int, ...], list[int]]] = {}
    spans: dict[int, tuple[int, int]] = {}
    for index, request in enumerate(requests):
        try:
            text = chat_prompt(request.messages, request.answer_prefix)
            prompt = encode(text)
        except Exception as exc:  # a template that fails on one row fails that row only
            results[index] = HiddenState(None, "error", error=f"chat template failed: {exc}")
            continue
        problem = layer_problem(request.layer) if layer_problem is not None else None
        pooled = request.pooling != "last"
        if pooled and problem is None:
            span = text_span(text, request.text, encode, prompt) if token_states is not None else None
            if span is None:
                problem = f"this engine gives last tokens' states only, not {request.pooling} pooling"
            elif isinstance(span, str):
                problem = span
            else:
                spans[index] = span
        if len(prompt) >= context_length:
            error = f"prompt has {len(prompt)} tokens; the model's context is {context_length}"
            results[index] = HiddenState(None, "too_long", prompt_tokens=len(prompt), error=error)
        elif problem is not None:
            results[index] = HiddenState(None, "error", prompt_tokens=len(prompt), error=problem)
        else:
            by_layer.setdefault((request.layer, pooled), {}).setdefault(tuple(prompt), []).append(index)
    for (layer, pooled), distinct in by_layer.items():
        prompts = [list(p) for p in distinct]
        if pooled:
            assert token_states is not None  # a pooled request without them is an error above
            starts = [min(spans[i][0] for i in indexes) for indexes in distinct.values()]
            found = _pooled_states(token_states, prompts, layer, starts)
        else:
            found = states(prompts, layer)
        for row, (tokens, indexes) in enumerate(distinct.items()):
            for index in indexes:
                if pooled:
                    value = pool(found[row], spans[index], requests[index].pooling, len(tokens))
                else:
                    value = found[row]
                results[index] = HiddenState(value, "stop", prompt_tokens=len(tokens))
    return [r if r is not None else HiddenState(None, "error", error="not run") for r in results]


def _pooled_states(
    token_states: TokenStates, prompts: list[list[int]], layer: int, starts: list[int]
) -> list[Any]:
    """Each prompt's token states, read past the engine's cached prefix; a prompt whose span begins (at
    ``starts[row]``) inside that prefix (a response the engine has read before, say) is read again whole."""
    found = list(token_states(prompts, layer, False))
    short = [row for row, prompt in enumerate(prompts) if starts[row] < len(prompt) - len(found[row])]
    if short:
        for row, whole in zip(short, token_states([prompts[r] for r in short], layer, True), strict=True):
            found[row] = whole
    return found
