"""Pairwise judging: two responses to one question, judged in both orders in the same batch.

For every row the judge renders the prompt twice, response A shown first (order ``ab``) and response B
shown first (order ``ba``); the two requests are scheduled next to each other, so they share the
judge's prefix in the cache. Each order's verdict (a position label: the first or the second shown
response, or a tie) is mapped back to the original sides, then combined by the MT-Bench rule:

* both orders name the same side: that side wins, ``position_consistent`` is true;
* the orders disagree (including one tie and one win): the row is a ``tie``, flagged inconsistent,
  so a judge that always picks the first position produces ties, never wins;
* an order that failed (parse error, truncation, too long...) or an errored side: ``inconclusive``.

``score`` is A's score: 1.0 (A wins), 0.0 (B wins), 0.5 (tie), None (inconclusive). In LOGPROBS
scoring each order's verdict is its most likely label, and ``score`` is ``p_a``, the probability that A
wins averaged over both orders: (P(first | A shown first) + P(second | A shown second)) / 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from jurist.config import JudgeConfig, PairwiseJudgeParams
from jurist.judge import Answer, Judge, Request
from jurist.results import JudgeOutput
from jurist.templates import MissingValue, TextWithFields, build_namespace, lookup

Winner = Literal["a", "b", "tie", "inconclusive"]
SCORE_A: dict[str, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}
ORDERS = ("ab", "ba")


def first_present(row: Mapping[str, Any], candidates: Sequence[str]) -> Any:
    """The value of the first candidate column (or dotted path) the row has a non-null value for."""
    for name in candidates:
        value = lookup(row, tuple(name.split(".")))
        if value is not None:
            return value
    return None


def _side(text: Any, error: Any) -> TextWithFields:
    """A response as ``{response_a}`` (its text) and as an evaluatorq side namespace (``.output.*``)."""
    fields = {
        "output": {"response": text, "error": "" if error is None else str(error)},
        "input": {"all_messages": [], "expected_output": "", "system_instructions": ""},
    }
    return TextWithFields(str(text), fields)


class PairwiseJudge(Judge):
    """A judge of ``pairwise_judge_params`` configs: two requests per row, one combined output."""

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        assert config.pairwise_judge_params is not None
        self.pair: PairwiseJudgeParams = config.pairwise_judge_params
        labels = self.pair.labels
        self._to_side = {
            "ab": {labels.first: "a", labels.second: "b", labels.tie: "tie"},
            "ba": {labels.first: "b", labels.second: "a", labels.tie: "tie"},
        }

    @property
    def required_fields(self) -> set[str]:
        """Pairwise placeholders are filled from the ``*_field`` candidates, not read as columns."""
        derived = {"question", "response_a", "response_b", "reference"}
        return self.prompt.required_fields - derived

    def missing_columns(self, columns: set[str]) -> list[str]:
        missing = super().missing_columns(columns)
        pair = self.pair
        needed = [("response A", pair.response_a_field), ("response B", pair.response_b_field)]
        if "question" in self.prompt.required_fields:
            needed.append(("the question", pair.question_field))
        if "reference" in self.prompt.required_fields:
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
        side_a = _side(a, first_present(row, pair.error_a_field))
        side_b = _side(b, first_present(row, pair.error_b_field))
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

    def requests_for(self, row: Mapping[str, Any]) -> list[Request]:
        return [self.request(self.prompt.render(ns)) for ns in self.namespaces(row)]

    def target_error(self, row: Mapping[str, Any]) -> str | None:
        errors = []
        for side, candidates in (("A", self.pair.error_a_field), ("B", self.pair.error_b_field)):
            value = first_present(row, candidates)
            if value not in (None, ""):
                errors.append(f"response {side} errored: {value}")
        return "; ".join(errors) or None

    def target_failure(self, error: str) -> JudgeOutput:
        output = self.failure("target_error", error)
        output.field_values["winner"] = "inconclusive"
        return output

    def combine(self, completions: Sequence[Answer]) -> JudgeOutput:
        orders = [super(PairwiseJudge, self).combine([c]) for c in completions]
        values: dict[str, Any] = self._empty_values()
        for key, output in zip(ORDERS, orders, strict=True):
            values[f"{key}_judgment"] = output.field_values.get("judgment")
            values[f"{key}_raw"] = output.raw
            if "explanation" in output.field_values:
                values[f"{key}_explanation"] = output.field_values.get("explanation")
        tokens: dict[str, Any] = {
            "prompt_tokens": sum(o.prompt_tokens or 0 for o in orders),
            "completion_tokens": sum(o.completion_tokens or 0 for o in orders),
        }
        failed = [(key, o) for key, o in zip(ORDERS, orders, strict=True) if not o.ok]
        if failed:
            status = failed[0][1].status
            error = "; ".join(f"order {key}: {o.error}" for key, o in failed)
            values["winner"] = "inconclusive"
            return JudgeOutput(status, values, {}, error=error, **tokens)
        sides = [
            self._to_side[key][o.field_values["judgment"]] for key, o in zip(ORDERS, orders, strict=True)
        ]
        consistent = sides[0] == sides[1]
        winner = sides[0] if consistent else "tie"
        values["winner"] = winner
        values["position_consistent"] = consistent
        if not self.logprob_scoring:
            return JudgeOutput("ok", values, {}, None, SCORE_A[winner], **tokens)
        labels = self.pair.labels
        first = [o.extras[f"judgment_p.{labels.first}"] for o in orders]
        second = [o.extras[f"judgment_p.{labels.second}"] for o in orders]
        # A is shown first in order ab and second in order ba
        p_a = (first[0] + second[1]) / 2
        extras = {"p_a": p_a, "ab_p_first": first[0], "ba_p_first": first[1]}
        return JudgeOutput("ok", values, {}, None, p_a, extras=extras, **tokens)

    def failure(self, status: str, error: str) -> JudgeOutput:
        values = self._empty_values()
        values["winner"] = "inconclusive"
        return JudgeOutput(status, values, {}, error=error)  # type: ignore[arg-type]

    def _empty_values(self) -> dict[str, Any]:
        return dict.fromkeys(self.column_names)

    def value_columns(self) -> list[tuple[str, str]]:
        columns = [("winner", "string"), ("position_consistent", "bool")]
        for key in ORDERS:
            columns.append((f"{key}_judgment", "string"))
            if self.config.judge_params.include_explanation:
                columns.append((f"{key}_explanation", "string"))
        columns += [(f"{key}_raw", "string") for key in ORDERS]
        if self.logprob_scoring:
            columns += [("p_a", "float64"), ("ab_p_first", "float64"), ("ba_p_first", "float64")]
        return columns

    def row_values(self, output: JudgeOutput) -> dict[str, Any]:
        values = {**output.field_values, **output.extras}
        return {name: values.get(name) for name in self.column_names}


def picked_first(verdict: str | None, judge: PairwiseJudge) -> bool | None:
    """Whether one order's verdict named the first-shown response (None for no verdict or a tie)."""
    if verdict is None or verdict == judge.pair.labels.tie:
        return None
    return verdict == judge.pair.labels.first
