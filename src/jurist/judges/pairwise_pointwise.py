"""Pairwise judging in pointwise mode (``pairwise_judge_params.mode: pointwise``): each response judged alone.

A side-by-side judge favours the answer shown first (small ones name it 74-98 % of the time on LLMBar). In
pointwise mode no prompt holds both responses: the row's two requests are the request (and its reference)
with response A, then with response B, under one one-response prompt, scheduled next to each other so that
they share its prefix in the cache. The prompt is built in, in the spirit of ``pairwise/preference``
(:data:`SYSTEM_INSTRUCTION`, :data:`PROMPT_TEMPLATE`; ``pointwise_system_instruction`` and
``pointwise_prompt_template`` replace them); each answer is a Yes or No (with the config's explanation
setting and response format). The winner:

* LOGPROBS: ``s_a`` = P(Yes | A alone), ``s_b`` = P(Yes | B alone); ``p_a = (1 + s_a - s_b) / 2``, so that
  ``p_a`` of a row and of its mirror (A and B swapped) add up to 1 by construction; A wins when
  ``s_a - s_b > tie_band``, B when ``s_b - s_a > tie_band``, else a tie. ``score`` is ``p_a``.
* generation: each side's Yes is 1 and No 0, and the same rule decides (Yes against No wins, two Yes or two
  No are a tie); ``score`` is 1.0, 0.5 or 0.0 as in both-orders mode.

The row writes the same ``winner``, ``score``, ``p_a`` (LOGPROBS) and ``status`` columns as a both-orders
judge, so filters, preference pairs, estimates, cascades and reports read it unchanged; per side it writes
``a_judgment``/``b_judgment`` (booleans), their explanations and raw answers, and ``a_p_yes``/``b_p_yes``.
A side whose answer failed (parse error, truncation, too long) or that errored makes the row
``inconclusive`` with that side's status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Final

from jurist.answer.fields import OutputField
from jurist.answer.spec import judgment_field
from jurist.config.models import JudgeConfig
from jurist.config.types import JudgmentType
from jurist.judges.base import Step
from jurist.judges.columns import Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput
from jurist.judges.pairwise import SCORE_A, PairwiseJudge
from jurist.records import Answer, ConstraintKind

SIDES: Final = ("a", "b")
SIDES_AS_SHOWN: Final = ("response_a", "response_b")  # the namespace keys of the sides, in request order

SYSTEM_INSTRUCTION: Final = """\
You judge one AI assistant response to a user request and decide whether it is a good response.

Judge first whether the response does what the request asks: it answers the actual question, follows
every explicit instruction (format, length, language, constraints) and does not add things the user did
not ask for. Then consider correctness, helpfulness and clarity.

Be impartial. Length says nothing about quality: a longer response is not better unless the extra content
is needed. Do not favour a response because of its style or tone, or because it sounds confident.

Answer 'Yes' if the response is a good response to the request, 'No' if it is not."""
"""The built-in system instruction of a pointwise-mode prompt."""

PROMPT_TEMPLATE: Final = "[User request]\n{question}\n\n[Response]\n{response}"
"""The built-in one-response prompt; a judge whose pairwise prompt reads ``{reference}`` gets it too."""

REFERENCE_PART: Final = "\n\n[Reference answer]\n{reference}"


def pointwise_config(config: JudgeConfig) -> JudgeConfig:
    """The config of one response's prompt: the pairwise config with its system instruction and prompt
    replaced (the built-in ones, or ``pointwise_*``), a Yes/No judgment and no examples (a pairwise
    example holds two responses)."""
    pair = config.pairwise_judge_params
    assert pair is not None
    jp = config.judge_params
    template = pair.pointwise_prompt_template
    if template is None:
        template = PROMPT_TEMPLATE + (REFERENCE_PART if "{reference}" in jp.prompt_template else "")
    system = pair.pointwise_system_instruction
    update: dict[str, Any] = {
        "system_instruction": SYSTEM_INSTRUCTION if system is None else system,
        "prompt_template": template,
        "judgment_type": JudgmentType.BOOL,
        "judgment_scores": None,
        "examples": [],
    }
    return config.model_copy(update={"judge_params": jp.model_copy(update=update)})


def p_a_alone(yes_a: Any, yes_b: Any) -> Any:
    """A's probability of winning from each response judged alone: ``(1 + P(Yes | A) - P(Yes | B)) / 2``
    (floats, or arrays of them), so p_a of a pair and of its mirror add up to one."""
    return (1 + yes_a - yes_b) / 2


class PointwisePairJudge(PairwiseJudge):
    """A pairwise judge in pointwise mode: one request per response, each alone; one combined output."""

    @classmethod
    def parts_config(cls, config: JudgeConfig) -> JudgeConfig:
        return pointwise_config(config)

    @classmethod
    def judgment_field(cls, config: JudgeConfig) -> OutputField:
        """Yes or No: whether the one response shown is a good one."""
        return judgment_field(config)

    label = "pairwise (pointwise mode)"
    shows_order = False
    prompts = SIDES
    leading = ("winner",)

    @property
    def required_fields(self) -> set[str]:
        """The one-response prompt's placeholders come from the pairwise ``*_field`` candidates."""
        return self.parts.prompt.required_fields - {"question", "response", "reference"}

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        """Two requests: the request with response A alone, then with response B alone."""
        both = self.namespaces(row)[0]  # order ab: each side under its own name
        common = {k: v for k, v in both.items() if k not in ("response_a", "response_b")}
        messages = [self.parts.prompt.render({**common, "response": both[side]}) for side in SIDES_AS_SHOWN]
        return Step(tuple(self.parts.request(m, kinds) for m in messages), self.finish)

    def finish(self, answers: Sequence[Answer]) -> JudgeOutput:
        """Each side's Yes/No (and P(Yes) in LOGPROBS) -> the winner by their difference."""
        readings = [self.parts.read(a) for a in answers]
        values = self._empty_values()
        explained = any(f.name == "explanation" for f in self.spec.fields)
        for side, reading in zip(SIDES, readings, strict=True):
            values[f"{side}_judgment"] = reading.values.get("judgment")
            values[f"{side}_raw"] = reading.raw
            if explained:
                values[f"{side}_explanation"] = reading.values.get("explanation")
        tokens: dict[str, Any] = {
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in readings),
            "completion_tokens": sum(r.completion_tokens or 0 for r in readings),
        }
        failed = [(side, r) for side, r in zip(SIDES, readings, strict=True) if not r.ok]
        if failed:
            error = "; ".join(f"response {side.upper()}: {r.error}" for side, r in failed)
            return JudgeOutput(
                failed[0][1].status, {**values, "winner": "inconclusive"}, {}, error=error, **tokens
            )
        yes: list[float] = []
        for reading in readings:
            found = reading.distributions.get("judgment") if self.parts.reads_labels else None
            yes.append(float(found.probs["Yes"]) if found is not None else float(reading.values["judgment"]))
        p_a = p_a_alone(yes[0], yes[1])
        winner = self.by_probability(p_a, 1.0 - p_a)
        values["winner"] = winner
        if not self.scores_probability:
            return JudgeOutput("ok", values, {}, None, SCORE_A[winner], **tokens)
        extras = {"p_a": p_a, "a_p_yes": yes[0], "b_p_yes": yes[1]}
        return JudgeOutput("ok", values, {}, None, p_a, extras=extras, **tokens)

    def picked_first(self, verdict: str | None) -> bool | None:
        """No response is shown first in pointwise mode."""
        return None

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        columns = [
            field_column(name, "bool" if name.endswith("_judgment") else "string")
            for name in self._value_names
        ]
        if self.scores_probability:
            columns += [extra_column("p_a"), extra_column("a_p_yes"), extra_column("b_p_yes")]
        return tuple(columns)

    def describe(self) -> list[str]:
        """As any judge's, after a line saying how the two responses are judged."""
        return [
            "mode pointwise: each response alone with the request (two prompts per row, neither holds both); "
            "the winner by P(Yes) of A against B"
            + (f" (a tie within {self.pair.tie_band})" if self.pair.tie_band else ""),
            *super().describe(),
        ]
