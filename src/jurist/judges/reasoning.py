"""A judge that thinks before it answers: two rounds per request (``judge_params.reasoning``).

:func:`think_first` takes a row's first :class:`~jurist.judges.base.Step` (one request per order or
sample) and puts a reasoning round before it. For every request it first sends a free generation request
on the same messages: the assistant's turn begins with the reasoning's ``start`` marker, the model writes
up to ``budget_tokens`` tokens and stops at the ``end`` marker. Then it sends the original request, its
assistant turn beginning with ``start + reasoning + end`` and a newline (a generation request's
``prefix``, a label request's ``answer_prefix`` put before the answer's own), so the answer is decoded
under the judge's usual constraint, or its labels scored, right after the reasoning, on a prompt whose
beginning the engine has cached. Each request thinks on its own: a pairwise judge's two orders, a
sampled judge's samples.

A reasoning that the budget cut (``finish_reason`` ``length``) is ended with the ``end`` marker and the
answer still follows: the row says so in ``reasoning_cut`` (how many of its requests were cut), never
silently. A model that ends its turn without the marker (end of sequence) has finished thinking: the marker
is appended and it is not counted as cut. A reasoning request that fails (an error, a prompt over the
context) fails its request: the original finish sees a failed answer of the kind it expects, so the row
gets that status, and no answer is asked for without the reasoning.

The row's output gets ``reasoning`` (the texts; see :func:`reasoning_columns`), ``reasoning_tokens`` (their
sum) and ``reasoning_cut``; its ``prompt_tokens`` are the first round's prompts and its
``completion_tokens`` the reasoning's and the answers' tokens together, what one thinking call costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa

from jurist.config.reasoning import ReasoningParams
from jurist.judges.base import Step
from jurist.judges.columns import Column, extra_column
from jurist.judges.outputs import JudgeOutput
from jurist.records import Answer, Completion, GenerationRequest, LabelRequest, LabelScores, Request

REASONING = "reasoning"
REASONING_TOKENS = "reasoning_tokens"
REASONING_CUT = "reasoning_cut"
FAILED = ("error", "too_long")


def reasoning_columns(params: ReasoningParams, several: bool) -> tuple[Column, ...]:
    """The columns a reasoning judge adds: ``reasoning`` (a string, or a list of strings for a judge that
    sends several requests per row, in request order; absent with ``keep: length``),
    ``reasoning_tokens`` and ``reasoning_cut`` (int64)."""
    counts = (extra_column(REASONING_TOKENS, "int64"), extra_column(REASONING_CUT, "int64"))
    if params.keep == "length":
        return counts
    if not several:
        return (extra_column(REASONING, "string"), *counts)
    return (Column(REASONING, pa.list_(pa.string()), lambda o, _p: o.extras.get(REASONING)), *counts)


def reasoning_request(
    request: Request, params: ReasoningParams, temperature: float, seed: int | None
) -> GenerationRequest:
    """The first-round request of ``request``: its messages, no constraint, ``budget_tokens`` at most,
    stopping at the end marker; sampled as the original is (a label request's: with ``temperature``)."""
    if isinstance(request, GenerationRequest):
        return replace(
            request,
            max_tokens=params.budget_tokens,
            stop=(params.end,),
            constraint=None,
            logprobs=None,
            min_tokens=0,
            prefix=params.start,
        )
    if isinstance(request, LabelRequest):
        return GenerationRequest(
            request.messages,
            params.budget_tokens,
            temperature=temperature,
            seed=seed,
            stop=(params.end,),
            prefix=params.start,
        )
    raise TypeError(
        f"a reasoning phase comes before generation or label requests, not {type(request).__name__}"
    )


def think_first(
    step: Step, params: ReasoningParams, *, several: bool, temperature: float = 0.0, seed: int | None = None
) -> Step:
    """``step`` with a reasoning round before it (see the module); ``several``: whether the judge sends
    several requests per row (its ``reasoning`` column is then a list)."""
    originals = step.requests
    first = tuple(reasoning_request(r, params, temperature, seed) for r in originals)

    def answer(thoughts: Sequence[Answer]) -> Step:
        completions = [
            t if isinstance(t, Completion) else Completion("", "error", error="no reasoning")
            for t in thoughts
        ]
        usable = [i for i, c in enumerate(completions) if c.finish_reason not in FAILED]
        follow = tuple(_after(originals[i], params, completions[i].text) for i in usable)

        def finish(answers: Sequence[Answer]) -> JudgeOutput | Step:
            given: dict[int, Answer] = dict(zip(usable, answers, strict=True))
            merged = [
                given[i] if i in given else _failed(originals[i], completions[i])
                for i in range(len(originals))
            ]
            result = step.finish(merged)
            if isinstance(result, Step):  # no kind that thinks asks for a third round
                raise TypeError("a judge with a reasoning phase needs one answer round after it")
            return _with_reasoning(result, completions, usable, params, several)

        return Step(follow, finish)

    return Step(first, answer)


def _after(request: Request, params: ReasoningParams, text: str) -> Request:
    """The original request, its answer to follow the ended reasoning in the same assistant turn."""
    thought = f"{params.start}{_without_end(text, params.end)}{params.end}\n"
    if isinstance(request, GenerationRequest):
        return replace(request, prefix=thought + request.prefix)
    if isinstance(request, LabelRequest):
        return replace(request, answer_prefix=thought + request.answer_prefix)
    raise TypeError(f"no reasoning before a {type(request).__name__}")


def _without_end(text: str, end: str) -> str:
    """The reasoning up to its end marker (an engine that keeps the stop string in the text: cut there)."""
    found = text.find(end)
    return text if found < 0 else text[:found]


def _failed(request: Request, thought: Completion) -> Answer:
    """A failed answer of the kind ``request`` expects, carrying the reasoning's failure."""
    error = f"the reasoning failed: {thought.error or thought.finish_reason}"
    if isinstance(request, LabelRequest):
        return LabelScores(None, thought.finish_reason, thought.prompt_tokens, error)
    return Completion("", thought.finish_reason, prompt_tokens=thought.prompt_tokens, error=error)


def _with_reasoning(
    output: JudgeOutput,
    thoughts: Sequence[Completion],
    usable: Sequence[int],
    params: ReasoningParams,
    several: bool,
) -> JudgeOutput:
    """``output`` with the reasoning's columns and its tokens counted."""
    kept = [thoughts[i] for i in usable]
    texts = [_without_end(t.text, params.end) for t in thoughts]
    tokens = sum(t.completion_tokens for t in thoughts)
    extras = {
        **output.extras,
        REASONING_TOKENS: tokens,
        REASONING_CUT: sum(t.finish_reason == "length" for t in kept),
    }
    if params.keep == "text":
        extras[REASONING] = texts if several else texts[0]
    prompt = sum(t.prompt_tokens for t in thoughts)
    answered = output.completion_tokens or 0
    return replace(output, extras=extras, prompt_tokens=prompt, completion_tokens=answered + tokens)
