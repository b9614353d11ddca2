"""``judge_params.reasoning``: a judge that thinks before it answers (:class:`ReasoningParams`).

The judge first writes free text, up to ``budget_tokens`` tokens, after ``start`` (``<think>`` by default)
and until it writes ``end`` (``</think>``); then the answer is decoded after that text, in the same
assistant turn, under the judge's usual constraint (or its label probabilities read there, in LOGPROBS
scoring). :mod:`jurist.judges.reasoning` runs the two phases.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from jurist.config.types import StrictModel

THINK_STARTS: tuple[str, ...] = ("<think>", "<seed:think>", "[THINK]", "<|begin_of_thought|>")
"""Markers that open a think block in open models' chat templates (Qwen3, QwQ and DeepSeek-R1's
distills; Seed-OSS; Magistral; Bespoke-Stratos). A chat template whose generation prompt ends
with one opens the block itself: the reasoning is not opened twice there
(:func:`jurist.backends.local.chat.join`)."""


class ReasoningParams(StrictModel):
    """How a judge reasons before its answer (a jurist extension of ``judge_params``)."""

    budget_tokens: int = Field(
        ge=1,
        le=65536,
        description="The most tokens the reasoning may take; a reasoning the budget cuts is ended there "
        "(the end marker appended), the answer still follows, and the row's reasoning_cut counts it.",
    )
    start: str = Field(
        default="<think>",
        description="The text the reasoning opens with, written for the model (empty where the model's "
        "chat template opens the think block itself).",
    )
    end: str = Field(
        default="</think>",
        description="The text that ends the reasoning: the model's own stops it; appended when the budget "
        "ran out or the model ended its turn without it.",
    )
    keep: Literal["text", "length"] = Field(
        default="text",
        description="text: the reasoning column holds what the judge wrote; length: only its token count "
        "(reasoning_tokens), for runs where the text would be most of the output.",
    )

    @model_validator(mode="after")
    def _end_marker(self) -> ReasoningParams:
        if not self.end.strip():
            raise ValueError("judge_params.reasoning.end is empty: the reasoning needs a marker that ends it")
        return self
