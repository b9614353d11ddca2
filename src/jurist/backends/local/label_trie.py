"""Scoring labels by their tokens: log P(label | prompt) as a sum over a token trie, one prefill step a depth.

Each label of a request is tokenized as the continuation of the prompt (and the answer's fixed prefix).
The labels form a token trie; at every depth one call asks, for every trie node, the log-probabilities of
exactly that node's child tokens after one step of the prompt extended by the node's path. A label's score
is the sum over its tokens, so labels that share first tokens are scored exactly. Tokens shared by every
label are folded into the prompt: they add the same constant to every label's score. The engine only
supplies the step (:data:`Step`); nothing here depends on one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from jurist.backends.local.chat import common_prefix

Step = Callable[[Sequence[tuple[list[int], list[int]]]], list[Mapping[int, float]]]
"""(prompt token ids, allowed next token ids) per node -> {token id: log-probability} per node."""


def split_labels(full: Mapping[str, list[int]]) -> tuple[list[int], dict[str, list[int]]]:
    """The tokens every label shares (the prompt), and each label's own continuation (at least one token)."""
    shared = common_prefix(list(full.values()))
    if any(len(ids) == shared for ids in full.values()):
        shared -= 1  # every label keeps at least one token of its own
    first = next(iter(full.values()))
    return first[:shared], {label: ids[shared:] for label, ids in full.items()}


def trie_scores(
    prompts: Mapping[int, list[int]], continuations: Mapping[int, Mapping[str, list[int]]], step: Step
) -> dict[int, dict[str, float]]:
    """log P(continuation | prompt) of every label of every request (by request key)."""
    scores: dict[int, dict[str, float]] = {key: dict.fromkeys(c, 0.0) for key, c in continuations.items()}
    depth = 0
    while True:
        nodes: dict[tuple[int, tuple[int, ...]], set[int]] = {}
        for key, labels in continuations.items():
            for ids in labels.values():
                if len(ids) > depth:
                    nodes.setdefault((key, tuple(ids[:depth])), set()).add(ids[depth])
        if not nodes:
            return scores
        order = list(nodes)
        steps = step([(prompts[key] + list(path), sorted(nodes[(key, path)])) for key, path in order])
        for (key, path), logprobs in zip(order, steps, strict=True):
            for label, ids in continuations[key].items():
                if len(ids) > depth and tuple(ids[:depth]) == path:
                    scores[key][label] += float(logprobs[ids[depth]])
        depth += 1
