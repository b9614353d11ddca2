"""Pairwise judging: two responses to one question, judged in both orders in the same batch.

For every row the judge renders the prompt twice, response A shown first (order ``ab``) and response B
shown first (order ``ba``); the two requests are scheduled next to each other, so they share the
judge's prefix in the cache. Each order's verdict (a position label: the first or the second shown
response, or a tie) is mapped back to the original sides, then combined by the MT-Bench rule:

* both orders name the same side: that side wins, ``position_consistent`` is true;
* the orders disagree (including one tie and one win): the row is a ``tie``, flagged inconsistent,
  so a judge that always picks the first position produces ties, never wins (with
  ``pairwise_judge_params.inconsistent: inconclusive``, evaluatorq's rule, it is ``inconclusive``);
* an order that failed (parse error, truncation, too long...) or an errored side: ``inconclusive``.

``score`` is A's score: 1.0 (A wins), 0.0 (B wins), 0.5 (tie), None (inconclusive). In LOGPROBS
scoring each order's verdict is its most likely label, and ``score`` is ``p_a``, the probability that A
wins averaged over both orders: (P(first | A shown first) + P(second | A shown second)) / 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Literal

from jurist.answer.reading import Reading
from jurist.backends.base import ConstraintKind
from jurist.config.models import PairwiseJudgeParams
from jurist.config.templates import MissingValue, lookup
from jurist.judges.base import Answer, JudgeKind, Step
from jurist.judges.columns import Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.render.namespace import build_namespace, side_error, side_namespace

Winner = Literal["a", "b", "tie", "inconclusive"]
SCORE_A: dict[str, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}
ORDERS = ("ab", "ba")
DERIVED_FIELDS = frozenset({"question", "response_a", "response_b", "reference"})


def first_present(row: Mapping[str, Any], candidates: Sequence[str]) -> Any:
    """The value of the first candidate column (or dotted path) the row has a non-null value for."""
    for name in candidates:
        value = lookup(row, tuple(name.split(".")))
        if value is not None:
            return value
    return None


class PairwiseJudge(JudgeKind):
    """A judge of ``pairwise_judge_params`` configs: two requests per row, one combined output."""

    kind_name = "pairwise"
    section = "pairwise_judge_params"

    def __init__(self, parts: JudgeParts) -> None:
        super().__init__(parts)
        assert self.config.pairwise_judge_params is not None
        self.pair: PairwiseJudgeParams = self.config.pairwise_judge_params
        labels = self.pair.labels
        self._to_side = {
            "ab": {labels.first: "a", labels.second: "b", labels.tie: "tie"},
            "ba": {labels.first: "b", labels.second: "a", labels.tie: "tie"},
        }

    label = "pairwise"

    @property
    def required_fields(self) -> set[str]:
        """Pairwise placeholders are filled from the ``*_field`` candidates, not read as columns."""
        return self.parts.prompt.required_fields - DERIVED_FIELDS

    def missing_columns(self, columns: set[str]) -> list[str]:
        missing = super().missing_columns(columns)
        pair = self.pair
        needed = [("response A", pair.response_a_field), ("response B", pair.response_b_field)]
        reads = self.parts.prompt.required_fields
        if "question" in reads:
            needed.append(("the question", pair.question_field))
        if "reference" in reads:
            needed.append(("the reference", pair.reference_field))
        for what, candidates in needed:
            if not any(c.split(".")[0] in columns for c in candidates):
                missing.append(f"{' or '.join(repr(c) for c in candidates)} ({what})")
        return missing

    def namespaces(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The row's namespace for each order (A first, then B first)."""
        pair = self.pair
        base = build_namespace(row)
        a = first_present(row, pair.response_a_field)
        b = first_present(row, pair.response_b_field)
        if a is None:
            raise MissingValue(f"response A ({' / '.join(pair.response_a_field)})")
        if b is None:
            raise MissingValue(f"response B ({' / '.join(pair.response_b_field)})")
        side_a = side_namespace(a, first_present(row, pair.error_a_field), "response_a")
        side_b = side_namespace(b, first_present(row, pair.error_b_field), "response_b")
        common: dict[str, Any] = {}
        question = first_present(row, pair.question_field)
        if question is not None:
            common["question"] = question
        reference = first_present(row, pair.reference_field)
        if reference is not None:
            common["reference"] = reference
        return [
            {**base, **common, "response_a": side_a, "response_b": side_b},
            {**base, **common, "response_a": side_b, "response_b": side_a},
        ]

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        requests = tuple(
            self.parts.request(self.parts.prompt.render(ns), kinds) for ns in self.namespaces(row)
        )
        return Step(requests, self.finish)

    def target_error(self, row: Mapping[str, Any]) -> str | None:
        pair = self.pair
        errors = []
        for side, candidates, responses in (
            ("A", pair.error_a_field, pair.response_a_field),
            ("B", pair.error_b_field, pair.response_b_field),
        ):
            value = first_present(row, candidates)
            if value in (None, ""):
                value = side_error(first_present(row, responses))  # an errored side object
            if value not in (None, ""):
                errors.append(f"response {side} errored: {value}")
        return "; ".join(errors) or None

    def failure(self, status: Status, error: str) -> JudgeOutput:
        return JudgeOutput(status, {**self._empty_values(), "winner": "inconclusive"}, {}, error=error)

    def finish(self, answers: Sequence[Answer]) -> JudgeOutput:
        """Both orders' answers -> the winner by the MT-Bench rule."""
        orders = [self.parts.reader.read_answer(a) for a in answers]
        values = self._empty_values()
        explained = any(f.name == "explanation" for f in self.spec.fields)
        for key, reading in zip(ORDERS, orders, strict=True):
            values[f"{key}_judgment"] = reading.values.get("judgment")
            values[f"{key}_raw"] = reading.raw
            if explained:
                values[f"{key}_explanation"] = reading.values.get("explanation")
        tokens: dict[str, Any] = {
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in orders),
            "completion_tokens": sum(r.completion_tokens or 0 for r in orders),
        }
        failed = [(key, r) for key, r in zip(ORDERS, orders, strict=True) if not r.ok]
        if failed:
            error = "; ".join(f"order {key}: {r.error}" for key, r in failed)
            return JudgeOutput(
                failed[0][1].status, {**values, "winner": "inconclusive"}, {}, error=error, **tokens
            )
        sides = [self._to_side[key][r.values["judgment"]] for key, r in zip(ORDERS, orders, strict=True)]
        consistent = sides[0] == sides[1]
        winner = sides[0] if consistent else self.pair.inconsistent
        values.update(winner=winner, position_consistent=consistent)
        if not self.parts.logprob_scoring:
            return JudgeOutput("ok", values, {}, None, SCORE_A.get(winner), **tokens)
        first = [self._p(r, self.pair.labels.first) for r in orders]
        second = [self._p(r, self.pair.labels.second) for r in orders]
        p_a = (first[0] + second[1]) / 2  # A is shown first in order ab and second in order ba
        extras = {"p_a": p_a, "ab_p_first": first[0], "ba_p_first": first[1]}
        return JudgeOutput("ok", values, {}, None, p_a, extras=extras, **tokens)

    @staticmethod
    def _p(reading: Reading, label: str) -> float:
        return reading.distributions["judgment"].probs[label]

    def _empty_values(self) -> dict[str, Any]:
        return dict.fromkeys(self._value_names)

    def picked_first(self, verdict: str | None) -> bool | None:
        """Whether one order's verdict named the first-shown response (None for no verdict or a tie)."""
        if verdict is None or verdict == self.pair.labels.tie:
            return None
        return verdict == self.pair.labels.first

    @cached_property
    def _value_names(self) -> tuple[str, ...]:
        """The suffixes of the values the judge writes in ``field_values``, in column order."""
        names = ["winner", "position_consistent"]
        for key in ORDERS:
            names.append(f"{key}_judgment")
            if self.config.judge_params.include_explanation:
                names.append(f"{key}_explanation")
        return (*names, *(f"{key}_raw" for key in ORDERS))

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        columns = [
            field_column(name, "bool" if name == "position_consistent" else "string")
            for name in self._value_names
        ]
        if self.parts.logprob_scoring:
            columns += [extra_column("p_a"), extra_column("ab_p_first"), extra_column("ba_p_first")]
        return tuple(columns)
