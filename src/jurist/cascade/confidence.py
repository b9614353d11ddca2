"""What a cascade stage's confidence and verdict are, per judge kind, and whether stages judge alike.

========================================  ==================================================================
judge                                     confidence of a row
========================================  ==================================================================
pointwise, LOGPROBS (or label             the probability of the most likely label of the judgment
probabilities of a generated label)       (``<judge>.judgment_confidence``)
pairwise, LOGPROBS (or sampled:           the order-averaged probability of the winning side (``p_a`` for A,
``judge_params.samples`` N > 1)           ``1 - p_a`` for B; with samples, the vote shares); ties count 0, and
                                          so do orders that disagree when the winner needs both orders
                                          (``decision: both_orders``)
pairwise, generated once per order        agreement of the two orders: 1 when both name the same side, else 0
pointwise, generated with                 the share of the row's N samples that gave the verdict (a sample
``judge_params.samples`` N > 1            that failed counts against it): ``<judge>.sample_agreement``
========================================  ==================================================================

A row whose output is not ``ok`` has no confidence (None): it is never kept by a threshold. Pointwise
judges that generate one answer per row and read no label probabilities give no confidence: such a judge
may be the last stage of a cascade without ``--abstain`` (which decides every row that reaches it, so
nothing reads its confidence; its rows' ``confidence`` is null), and is refused as any other stage, or as
the last with ``--abstain`` (naming both ways to give one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.pointwise import AGREEMENT

JUDGMENT = "judgment"


@dataclass(frozen=True)
class ConfidenceSource:
    """How a stage's confidence is read: ``name`` (``label_probability``, ``order_averaged_probability``
    or ``order_agreement``) and a sentence for people."""

    name: str
    description: str


def confidence_source(judge: Judge) -> ConfidenceSource:
    """The confidence a judge gives as a cascade stage; a :class:`ConfigError` naming why for a judge that
    gives none."""
    kind = judge.kind.kind_name
    if kind == "pairwise":
        if getattr(judge.kind, "scores_probability", False):
            both = getattr(judge.kind, "decision", None) == "both_orders"
            return ConfidenceSource(
                "order_averaged_probability",
                "the winning side's probability averaged over both orders"
                + (" (inconsistent orders: 0)" if both else ""),
            )
        return ConfidenceSource("order_agreement", "agreement of the two orders (1 consistent, 0 not)")
    if kind == "pointwise":
        fields = {f.name for f in judge.parts.label_fields}
        if JUDGMENT in fields:
            return ConfidenceSource("label_probability", "the probability of the most likely judgment label")
        samples = judge.config.judge_params.samples
        if samples > 1 and any(f.name == JUDGMENT for f in judge.spec.judgment_fields):
            return ConfidenceSource(
                "sample_agreement", f"the share of the row's {samples} samples that gave the verdict"
            )
        raise ConfigError(
            f"judge {judge.name!r} gives no confidence for a cascade: score it with "
            "judge_params.scoring: LOGPROBS (or judge_params.label_probabilities: true) on a judgment "
            "with labels, or sample it (judge_params.samples: 5 with a temperature above 0)",
            field="judge_params.scoring",
        )
    raise ConfigError(f"judge {judge.name!r} is a {kind} judge; a cascade stage is pointwise or pairwise")


def verdict_of(judge: Judge, output: JudgeOutput) -> Any:
    """The row's verdict: the winner of a pairwise judge (None when inconclusive), else the judgment."""
    if judge.kind.kind_name == "pairwise":
        winner = output.field_values.get("winner")
        return None if winner in (None, "inconclusive") else winner
    return output.field_values.get(JUDGMENT)


def confidence_of(judge: Judge, output: JudgeOutput) -> float | None:
    """The row's confidence (see the module); None for an output that is not ``ok``."""
    if not output.ok:
        return None
    if judge.kind.kind_name == "pairwise":
        winner = output.field_values.get("winner")
        by_probability = getattr(judge.kind, "decision", None) == "probability"
        consistent = by_probability or output.field_values.get("position_consistent")
        if not consistent or winner not in ("a", "b"):
            return 0.0
        if not getattr(judge.kind, "scores_probability", False):
            return 1.0
        p_a = output.extras.get("p_a")
        if p_a is None:
            return None
        return float(p_a) if winner == "a" else 1.0 - float(p_a)
    if judge.config.judge_params.samples > 1:
        value = output.extras.get(AGREEMENT)
    else:
        value = output.extras.get(f"{JUDGMENT}_confidence")
    return None if value is None else float(value)


def judgment_of(judge: Judge) -> dict[str, Any]:
    """What a stage's verdicts can be: its kind and its judgment's type and labels."""
    if judge.kind.kind_name == "pairwise":
        pair = judge.config.pairwise_judge_params
        assert pair is not None
        return {"kind": "pairwise", "ties allowed": bool(pair.allow_tie)}
    field = next((f for f in judge.spec.judgment_fields if f.name == JUDGMENT), None)
    if field is None:
        return {"kind": judge.kind.kind_name, "judgment": None}
    return {
        "kind": judge.kind.kind_name,
        "judgment type": field.judgment_type.value,
        "labels": list(field.labels or ()),
    }


def confidence_source_or_none(judge: Judge) -> ConfidenceSource | None:
    """The confidence a judge gives as a cascade stage, or None for a judge that gives none."""
    try:
        return confidence_source(judge)
    except ConfigError:
        return None


def check_same_judgment(judges: Sequence[Judge], *, abstain: bool = False) -> None:
    """Refuse (:class:`ConfigError`, naming the difference) stages whose verdicts differ in kind or labels,
    and stages whose threshold applies (every stage but the last; the last too with ``abstain``) that
    give no confidence."""
    first = judgment_of(judges[0])
    for number, judge in enumerate(judges[1:], start=2):
        other = judgment_of(judge)
        for key in ["kind", *sorted((set(first) | set(other)) - {"kind"})]:
            if first.get(key) != other.get(key):
                raise ConfigError(
                    f"cascade stage {number} ({judge.name!r}) does not judge like stage 1 "
                    f"({judges[0].name!r}): {key} {other.get(key)!r} where stage 1 has {first.get(key)!r}"
                )
    for number, judge in enumerate(judges, start=1):
        if number < len(judges) or abstain:
            try:
                confidence_source(judge)
            except ConfigError as exc:
                where = "the last stage with --abstain" if number == len(judges) else f"stage {number}"
                raise ConfigError(f"{where} of the cascade: {exc}") from None
