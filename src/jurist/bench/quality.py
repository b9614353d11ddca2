"""How good a judge's verdicts are against labels, from the outputs of one bench run.

For every labelled row (a row the judge could not decide counts as wrong, as in ``jurist agree``):

* ``accuracy``: verdicts equal to the label, a :class:`~jurist.stats.share.Share` (as every share here)
  with its 95 % Wilson interval; ``decided``: the share of labelled rows with a verdict; ``baselines``:
  trivial rules on the same rows (the majority label; for pairwise judges the first-shown, longer and
  shorter answer), each with its interval and whether the judge beats it (:mod:`jurist.stats.baselines`);
* pairwise judges: ``order_consistency`` (the share of judged rows whose two orders named the same side),
  ``first_shown_rate`` (of the orders' verdicts that name a response, the share naming the one shown
  first: 0.5 for a judge without position bias), ``accuracy_by_order`` (each order's verdict alone,
  LLMBar's protocol), and where the judge gives probabilities (LOGPROBS scoring, or the vote shares of
  repeated samples) ``accuracy_by_decision``: the same rows decided by the order-averaged probability and
  by the rule that both orders agree (:mod:`jurist.judges.pairwise`), whichever decision the judge itself
  uses, with ``exact_ties`` (rows at exactly ``p_a = 0.5``) and ``distinct_scores``.

Labels are normalized as ``jurist agree`` does (LLMBar's 1/2 -> a/b; yes/no -> booleans). With groups
(one name per row: a dataset's subsets), :func:`quality_by_group` gives the same report per group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.pairwise import ORDERS, PairwiseJudge, first_present
from jurist.labels.vocabulary import normalize_labels
from jurist.stats.baselines import baselines, compare_to_baselines
from jurist.stats.share import Share


def quality(
    judge: Judge,
    outputs: Sequence[JudgeOutput],
    labels: Sequence[Any],
    rows: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The quality report of ``outputs`` (one per row, in row order) against ``labels`` (raw, one per row;
    None for an unlabelled row), with the baselines on the same rows (:mod:`jurist.stats.baselines`;
    the length ones for a pairwise judge need ``rows``, the judged rows)."""
    if len(outputs) != len(labels):
        raise ValueError(f"{len(outputs)} outputs but {len(labels)} labels")
    kind = judge.kind
    pairwise = isinstance(kind, PairwiseJudge)
    truth = normalize_labels(labels, pairwise)
    labelled = [i for i, t in enumerate(truth) if t is not None]
    verdicts = [_verdict(o, pairwise) for o in outputs]
    correct = [verdicts[i] == truth[i] for i in labelled]
    lengths = _pair_lengths(kind, rows) if isinstance(kind, PairwiseJudge) and rows is not None else None
    report: dict[str, Any] = {
        "labelled_rows": len(labelled),
        "accuracy": _share(correct),
        "decided": _share([verdicts[i] is not None for i in labelled]),
        "baselines": compare_to_baselines(
            Share.of(correct), baselines(truth, pairwise=pairwise, lengths=lengths)
        ),
    }
    if isinstance(kind, PairwiseJudge) and kind.shows_order:  # pointwise mode has no orders to compare
        report.update(_pairwise(kind, [outputs[i] for i in labelled], [truth[i] for i in labelled]))
    return report


def quality_by_group(
    judge: Judge,
    outputs: Sequence[JudgeOutput],
    labels: Sequence[Any],
    groups: Sequence[Any],
    rows: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`quality` per group (``groups``: one name per row), groups in order of first appearance."""
    if len(groups) != len(outputs):
        raise ValueError(f"{len(outputs)} outputs but {len(groups)} group names")
    names = list(dict.fromkeys(str(g) for g in groups))

    def part(values: Sequence[Any], name: str) -> list[Any]:
        return [v for v, g in zip(values, groups, strict=True) if str(g) == name]

    return {
        name: quality(
            judge,
            part(outputs, name),
            part(labels, name),
            part(rows, name) if rows is not None else None,
        )
        for name in names
    }


def _pair_lengths(kind: PairwiseJudge, rows: Sequence[Mapping[str, Any]]) -> list[tuple[float, float] | None]:
    """Per row, the characters of answers a and b as the judge reads them (None where one is missing)."""
    out: list[tuple[float, float] | None] = []
    for row in rows:
        a = first_present(row, kind.pair.response_a_field)
        b = first_present(row, kind.pair.response_b_field)
        out.append(None if a is None or b is None else (float(len(str(a))), float(len(str(b)))))
    return out


def _verdict(output: JudgeOutput, pairwise: bool) -> Any:
    if not output.ok:
        return None
    value = output.field_values.get("winner" if pairwise else "judgment")
    return None if value == "inconclusive" else value


def _share(flags: Sequence[bool]) -> dict[str, Any]:
    return Share.of(flags).as_dict()  # 95 %


def _pairwise(kind: PairwiseJudge, outputs: Sequence[JudgeOutput], truth: Sequence[Any]) -> dict[str, Any]:
    """Order consistency, the first-shown rate, per-order accuracy and, in LOGPROBS, both decisions."""
    ok = [(o, t) for o, t in zip(outputs, truth, strict=True) if o.ok]
    labels = [t for _, t in ok]
    missing = [False] * (len(truth) - len(ok))  # labelled rows without an ok output count as wrong
    sides = [{key: _side(kind, key, o.field_values) for key in ORDERS} for o, _ in ok]
    picks = [kind.picked_first(o.field_values.get(f"{key}_judgment")) for o, _ in ok for key in ORDERS]

    def correct(winners: Sequence[str | None]) -> dict[str, Any]:
        return _share([w == t for w, t in zip(winners, labels, strict=True)] + missing)

    report: dict[str, Any] = {
        "order_consistency": _share([s["ab"] == s["ba"] for s in sides]),
        "first_shown_rate": _share([p for p in picks if p is not None]),
        "accuracy_by_order": {key: correct([s[key] for s in sides]) for key in ORDERS},
    }
    if kind.scores_probability:  # LOGPROBS, or the vote shares of repeated samples
        report["exact_ties"] = sum(o.extras.get("p_a") == 0.5 for o, _ in ok)
        report["distinct_scores"] = len({o.extras.get("p_a") for o, _ in ok})
        if not kind.pair.allow_tie:  # with ties, p_b is not 1 - p_a and is not kept: only the judge's own
            report["accuracy_by_decision"] = {
                "probability": correct([_by_probability(kind, o) for o, _ in ok]),
                "both_orders": correct([s["ab"] if s["ab"] == s["ba"] else None for s in sides]),
            }
    return report


def _side(kind: PairwiseJudge, key: str, values: Mapping[str, Any]) -> str | None:
    """The side (a, b, tie) one order's verdict names."""
    verdict = values.get(f"{key}_judgment")
    labels = kind.pair.labels
    table = {
        "ab": {labels.first: "a", labels.second: "b", labels.tie: "tie"},
        "ba": {labels.first: "b", labels.second: "a", labels.tie: "tie"},
    }
    return table[key].get(verdict) if verdict is not None else None


def _by_probability(kind: PairwiseJudge, output: JudgeOutput) -> str | None:
    """The probability decision's winner from an output's p_a (a judge without a tie label: p_b = 1 - p_a)."""
    p_a = output.extras.get("p_a")
    return None if p_a is None else kind.by_probability(float(p_a), 1.0 - float(p_a))
