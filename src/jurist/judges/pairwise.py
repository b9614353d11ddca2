"""Pairwise judging: two responses to one question, judged in both orders in the same batch.

For every row the judge renders the prompt twice, response A shown first (order ``ab``) and response B
shown first (order ``ba``); the two requests are scheduled next to each other, so they share the
judge's prefix in the cache. Each order's verdict (a position label: the first or the second shown
response, or a tie) is mapped back to the original sides; ``position_consistent`` says whether the two
name the same side. The winner follows ``pairwise_judge_params.decision``:

``both_orders`` (the MT-Bench rule; the default when the judge generates its answer)
  both orders name the same side: that side wins; the orders disagree (including one tie and one win):
  the row is a ``tie`` (with ``inconsistent: inconclusive``, evaluatorq's rule, ``inconclusive``), so a
  judge that always picks the first position produces ties, never wins.
``probability`` (LOGPROBS or repeated samples only, and their default)
  ``p_a`` = (P(first | A shown first) + P(second | A shown second)) / 2 and ``p_b`` likewise: the side with
  the higher one wins, a tie when ``|p_a - p_b| <= tie_band`` (or, with ``allow_tie``, when the averaged
  tie probability is above both). A judge that leans to the first position still ranks the two sides by
  how much more it likes one than the other; measured on LLMBar this is the better rule for small judges
  (the benchmarking guide).

With ``judge_params.samples`` N > 1 each order is generated N times (distinct seeds) and its probabilities
are the shares of its N samples per label (a sample that failed counts for no label); each order's verdict
is its most common label (its first sample giving it supplies the explanation), ``sample_agreement`` the
averaged share of the winner and ``samples_ok`` the usable samples of both orders.

An order that failed (parse error, truncation, too long; with samples: none usable) or an errored side:
``inconclusive``. ``score`` is A's score: 1.0 (A wins), 0.0 (B wins), 0.5 (tie), None (inconclusive); with
probabilities it is ``p_a`` whatever the decision, and each order's ``judgment`` is its most likely label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

from jurist.answer.fields import OutputField
from jurist.answer.reading import Reading
from jurist.config.models import JudgeConfig
from jurist.config.pairwise import Decision, PairwiseJudgeParams
from jurist.config.templates import MissingValue, lookup
from jurist.config.types import JudgmentType
from jurist.judges.base import OneCallKind, Step
from jurist.judges.columns import Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.judges.pointwise import AGREEMENT, USABLE
from jurist.records import Answer, ConstraintKind
from jurist.render.namespace import build_namespace, side_error, side_namespace

Winner = Literal["a", "b", "tie", "inconclusive"]
SCORE_A: dict[str, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}
ORDERS = ("ab", "ba")
DERIVED_FIELDS = frozenset({"question", "response_a", "response_b", "reference"})


@dataclass(frozen=True)
class _Order:
    """One order's verdict: the reading it comes from, its label shares (None: one generated answer) and
    how many of its answers were usable."""

    reading: Reading
    shares: dict[str, float] | None
    usable: int


def first_present(row: Mapping[str, Any], candidates: Sequence[str]) -> Any:
    """The value of the first candidate column (or dotted path) the row has a non-null value for."""
    plain = type(row) is dict
    for name in candidates:
        # a plain row's column is its own value (what lookup finds for a one-step path)
        value = row.get(name) if plain and "." not in name else lookup(row, tuple(name.split(".")))
        if value is not None:
            return value
    return None


def order_average(in_ab: Any, in_ba: Any) -> Any:
    """A response's probability of winning over both orders: the mean of its label's probability in order ab
    and in order ba (floats, or arrays of them). With each order's labels summing to one, p_a of a pair and
    p_a of its mirror add up to one."""
    return (in_ab + in_ba) / 2


class PairwiseJudge(OneCallKind):
    """A judge of ``pairwise_judge_params`` configs: two requests per row, one combined output."""

    kind_name = "pairwise"
    section = "pairwise_judge_params"

    @classmethod
    def judgment_field(cls, config: JudgeConfig) -> OutputField:
        """The label of the better response (``pairwise_judge_params.labels``; a tie only if allowed)."""
        pair = config.pairwise_judge_params
        assert pair is not None
        labels = pair.answer_labels
        scores = {pair.labels.first: 1.0, pair.labels.second: 0.0, pair.labels.tie: 0.5}
        description = (
            f"{pair.labels.first} if the first response is better, {pair.labels.second} if the second is"
        )
        if pair.allow_tie:
            description += f", {pair.labels.tie} if they are equally good"
        return OutputField(
            "judgment",
            "judgment",
            JudgmentType.ENUM,
            description,
            tuple(labels),
            {label: scores[label] for label in labels},
            max_chars=config.judge_params.max_explanation_chars,
        )

    def __init__(self, parts: JudgeParts) -> None:
        super().__init__(parts)
        assert self.config.pairwise_judge_params is not None
        self.pair: PairwiseJudgeParams = self.config.pairwise_judge_params
        self.decision: Decision = self.pair.decision_for(self.config.judge_params)
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
        # the row's derived families only where the prompt reads them: its other values are the row's own
        base = build_namespace(row) if self.parts.prompt.reads_roots else dict(row)
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

    @property
    def samples(self) -> int:
        """How many times each order is judged (``judge_params.samples``)."""
        return self.config.judge_params.samples

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        messages = [self.parts.prompt.render(ns) for ns in self.namespaces(row)]
        if self.samples > 1:
            requests = tuple(
                self.parts.generation_request(m, kinds, k) for m in messages for k in range(self.samples)
            )
            return Step(requests, self.finish)
        return Step(tuple(self.parts.request(m, kinds) for m in messages), self.finish)

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
        """Both orders' answers (with samples: N per order) -> the winner by the judge's decision."""
        n = self.samples
        readings = [self.parts.read(a) for a in answers]
        orders = [self._order(readings[:n]), self._order(readings[n:])]
        values = self._empty_values()
        explained = any(f.name == "explanation" for f in self.spec.fields)
        for key, order in zip(ORDERS, orders, strict=True):
            values[f"{key}_judgment"] = order.reading.values.get("judgment")
            values[f"{key}_raw"] = order.reading.raw
            if explained:
                values[f"{key}_explanation"] = order.reading.values.get("explanation")
        tokens: dict[str, Any] = {
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in readings),
            "completion_tokens": sum(r.completion_tokens or 0 for r in readings),
        }
        failed = [(key, o.reading) for key, o in zip(ORDERS, orders, strict=True) if not o.reading.ok]
        if failed:
            error = "; ".join(f"order {key}: {r.error}" for key, r in failed)
            return JudgeOutput(
                failed[0][1].status, {**values, "winner": "inconclusive"}, {}, error=error, **tokens
            )
        sides = [self._to_side[k][o.reading.values["judgment"]] for k, o in zip(ORDERS, orders, strict=True)]
        consistent = sides[0] == sides[1]
        winner: Winner = sides[0] if consistent else self.pair.inconsistent  # type: ignore[assignment]
        ab, ba = orders[0].shares, orders[1].shares
        if ab is None or ba is None:  # one generated answer per order: no probabilities
            values.update(winner=winner, position_consistent=consistent)
            return JudgeOutput("ok", values, {}, None, SCORE_A.get(winner), **tokens)
        labels = self.pair.labels
        p_a = order_average(ab[labels.first], ba[labels.second])  # A: shown first in order ab, second in ba
        p_b = order_average(ab[labels.second], ba[labels.first])
        p_tie = (ab.get(labels.tie, 0.0) + ba.get(labels.tie, 0.0)) / 2
        if self.decision == "probability":
            winner = self.by_probability(p_a, p_b, p_tie)
        values.update(winner=winner, position_consistent=consistent)
        extras: dict[str, Any] = {"p_a": p_a, "ab_p_first": ab[labels.first], "ba_p_first": ba[labels.first]}
        if n > 1:
            extras[AGREEMENT] = {"a": p_a, "b": p_b, "tie": p_tie}.get(winner)
            extras[USABLE] = sum(o.usable for o in orders)
        return JudgeOutput("ok", values, {}, None, p_a, extras=extras, **tokens)

    def _order(self, readings: Sequence[Reading]) -> _Order:
        """One order's verdict: its one reading (and its label distribution in LOGPROBS), or the vote of its
        samples (the first sample giving the most common label; shares of the N samples per label, a
        failed sample counting for none)."""
        if len(readings) == 1:
            reading = readings[0]
            found = reading.distributions.get("judgment") if self.parts.reads_labels else None
            shares = dict(found.probs) if found is not None and reading.ok else None
            return _Order(reading, shares, int(reading.ok))
        usable = [r for r in readings if r.ok]
        if not usable:
            first = readings[0]
            error = f"none of {len(readings)} samples was usable; the first: {first.error}"
            return _Order(replace(first, error=error), None, 0)
        counts = Counter(r.values["judgment"] for r in usable)
        label = counts.most_common(1)[0][0]  # ties: the label given first
        chosen = next(r for r in usable if r.values["judgment"] == label)
        shares = {name: counts.get(name, 0) / len(readings) for name in self.pair.answer_labels}
        return _Order(chosen, shares, len(usable))

    def by_probability(self, p_a: float, p_b: float, p_tie: float = 0.0) -> Winner:
        """The winner from the order-averaged probabilities of A, B and a tie (the ``probability``
        decision)."""
        tied = self.pair.allow_tie and p_tie > max(p_a, p_b)
        if tied or abs(p_a - p_b) <= self.pair.tie_band:
            return "tie"
        return "a" if p_a > p_b else "b"

    shows_order: bool = True
    """Whether the two responses are shown side by side in two orders (False in pointwise mode, where no
    prompt holds both: no order columns, no position bias)."""

    @property
    def scores_probability(self) -> bool:
        """Whether the judge gives ``p_a``: label probabilities (LOGPROBS) or the vote shares of samples."""
        return self.parts.reads_labels or self.samples > 1

    def _empty_values(self) -> dict[str, Any]:
        return dict.fromkeys(self._value_names)

    def picked_first(self, verdict: str | None) -> bool | None:
        """Whether one order's verdict named the first-shown response (None for no verdict or a tie)."""
        if verdict is None or verdict == self.pair.labels.tie:
            return None
        return verdict == self.pair.labels.first

    prompts: tuple[str, ...] = ORDERS
    """The name of each of a row's prompts: its order (or, in pointwise mode, its side)."""
    leading: tuple[str, ...] = ("winner", "position_consistent")
    """The values before the prompts' own."""

    @cached_property
    def _value_names(self) -> tuple[str, ...]:
        """The suffixes of the values the judge writes in ``field_values``, in column order: the leading
        ones, each prompt's judgment (and explanation), then each prompt's raw answer."""
        names = list(self.leading)
        for key in self.prompts:
            names.append(f"{key}_judgment")
            if self.config.judge_params.include_explanation:
                names.append(f"{key}_explanation")
        return (*names, *(f"{key}_raw" for key in self.prompts))

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        columns = [
            field_column(name, "bool" if name == "position_consistent" else "string")
            for name in self._value_names
        ]
        if self.scores_probability:
            columns += [extra_column("p_a"), extra_column("ab_p_first"), extra_column("ba_p_first")]
        if self.samples > 1:
            columns += [extra_column(AGREEMENT), extra_column(USABLE, "int64")]
        return tuple(columns)
