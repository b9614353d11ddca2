"""Trivial baselines that a judge's accuracy against labels must stand beside, on the same rows.

A judge's 57 % means nothing alone: on LLMBar's Natural set "the longer answer wins" scores 56 %, on its
adversarial sets 12-17 % (they are built so that the polished, longer answer loses), on MT-Bench 69 %.
For every labelled row set this module scores, each a :class:`~jurist.stats.share.Share` with its 95 %
Wilson interval:

* ``majority``: always the commonest label of these rows (for a pairwise set, the commoner side);
* pairwise only: ``first shown`` (always the answer shown first, a, as a judge with full position bias
  that sees one order would), ``longer answer`` and ``shorter answer`` (by characters; a pair of equal
  lengths is no verdict, so wrong).

:func:`compare_to_baselines` then says of each whether the judge beats it: ``yes`` when the baseline's
accuracy lies below the judge's 95 % interval, ``no`` when the judge is not above it, ``unclear`` in
between. A row without a verdict counts as wrong for the judge and the baselines alike.

Cross-validated fits (``jurist probe fit``) score rules chosen on training rows on held-out ones:
:func:`fitted_majority` and :func:`fitted_length_rule` (the longer answer wins, or the shorter: whichever
is right more often on the training rows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.stats.agreement import sorted_labels
from jurist.stats.share import Share


@dataclass(frozen=True)
class Baseline:
    """A trivial rule's share of right verdicts on the labelled rows."""

    name: str
    rule: str
    share: Share

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, **self.share.as_dict()}


def majority_baseline(truth: Sequence[Hashable | None]) -> tuple[Hashable | None, int, int]:
    """The label a judge that always answered the commonest label would give, how many labelled items it
    would get right and of how many (ties go to the first label in sorted order); (None, 0, 0) without
    labels."""
    present = [t for t in truth if t is not None]
    if not present:
        return None, 0, 0
    counts = Counter(present)
    top = max(counts.values())
    label = next(v for v in sorted_labels(present) if counts[v] == top)
    return label, top, len(present)


def baselines(
    truth: Sequence[Hashable | None],
    *,
    pairwise: bool = False,
    lengths: Sequence[tuple[float, float] | None] | None = None,
) -> list[Baseline]:
    """The baselines on the labelled rows of ``truth`` (None: unlabelled, left out).

    Args:
        truth: one label per row, in the judge's vocabulary (a/b/tie for pairwise judges).
        pairwise: add the first-shown baseline (always ``a``), and the length ones where ``lengths`` is
            given.
        lengths: per row, the lengths of answers a and b (None where a text is missing: no verdict).
    """
    labelled = [i for i, t in enumerate(truth) if t is not None]
    rows = len(labelled)
    label, right, _ = majority_baseline([truth[i] for i in labelled])
    out = [Baseline("majority", f"always {label!r}", Share(right, rows))]
    if not pairwise:
        return out
    out.append(Baseline("first shown", "always 'a'", Share(sum(truth[i] == "a" for i in labelled), rows)))
    if lengths is not None:
        if len(lengths) != len(truth):
            raise ValueError(f"{len(lengths)} length pairs for {len(truth)} labels")
        longer = [longer_side(lengths[i]) for i in labelled]
        labels = [truth[i] for i in labelled]
        for name, flip in (("longer", False), ("shorter", True)):
            right = _right([_other(w) if flip else w for w in longer], labels)
            out.append(Baseline(f"{name} answer", f"the {name} answer wins", Share(right, rows)))
    return out


def longer_side(pair: tuple[float, float] | None) -> str | None:
    """``a`` or ``b``, whichever answer of a pair of lengths is longer (None: equal or unknown)."""
    if pair is None or pair[0] == pair[1]:
        return None
    return "a" if pair[0] > pair[1] else "b"


def _other(side: str | None) -> str | None:
    return {"a": "b", "b": "a"}.get(side or "")


def _right(predicted: Sequence[Hashable | None], truth: Sequence[Hashable]) -> int:
    return sum(p is not None and p == t for p, t in zip(predicted, truth, strict=True))


def fitted_majority(truth: Sequence[Hashable], train: Sequence[int], test: Sequence[int]) -> list[bool]:
    """Whether the commonest label of the ``train`` rows (:func:`majority_baseline`) is right on each
    ``test`` row."""
    label, _, _ = majority_baseline([truth[i] for i in train])
    return [truth[i] == label for i in test]


def fitted_length_rule(
    lengths: Sequence[tuple[float, float] | None],
    truth: Sequence[Hashable],
    train: Sequence[int],
    test: Sequence[int],
) -> list[bool]:
    """Whether the length rule fitted on the ``train`` rows (the longer answer wins, or the shorter:
    whichever is right more often there; the longer on a tie) is right on each ``test`` row (``truth``:
    a/b; a pair of equal lengths is no verdict, so wrong)."""
    longer = [longer_side(pair) for pair in lengths]
    right_longer = _right([longer[i] for i in train], [truth[i] for i in train])
    right_shorter = _right([_other(longer[i]) for i in train], [truth[i] for i in train])
    guess = [longer[i] if right_longer >= right_shorter else _other(longer[i]) for i in test]
    return [g is not None and g == truth[i] for g, i in zip(guess, test, strict=True)]


def beats(judge: Share, baseline: Baseline) -> str | None:
    """Whether a judge right on ``judge`` of the rows beats ``baseline`` on the same rows: ``yes`` (the
    baseline's accuracy is below the judge's interval), ``no`` (the judge is not above it) or ``unclear``;
    None without rows."""
    low, base = judge.low, baseline.share
    if low is None or base.trials != judge.trials:
        return None
    if judge.successes <= base.successes:
        return "no"
    return "yes" if low > base.successes / base.trials else "unclear"


def compare_to_baselines(judge: Share, found: Sequence[Baseline]) -> dict[str, dict[str, Any]]:
    """Each baseline as a dict, with ``beaten`` (:func:`beats`) for a judge right on ``judge`` of the rows."""
    return {b.name: {**b.as_dict(), "beaten": beats(judge, b)} for b in found}


LENGTH_RATIO_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("a under half b's length", 0.0, 0.5),
    ("a 0.5-0.9x b", 0.5, 0.9),
    ("about equal (0.9-1.1x)", 0.9, 1.1),
    ("a 1.1-2x b", 1.1, 2.0),
    ("a over twice b's length", 2.0, float("inf")),
)
"""Buckets of the length ratio of answer a to answer b (characters): [low, high)."""


def accuracy_by_length_ratio(
    correct: Sequence[bool], lengths: Sequence[tuple[float, float] | None]
) -> list[dict[str, Any]]:
    """A pairwise judge's accuracy per bucket of answer a's length over answer b's
    (:data:`LENGTH_RATIO_BUCKETS`): each bucket's name and its :class:`Share` as a dict; rows without both
    lengths (or with an empty answer b) are left out. ``correct`` and ``lengths`` are per labelled row.
    Beside the audit's length bias it shows where a judge's accuracy comes from: a judge that only follows
    length is right in the buckets where the longer (or shorter) answer happens to win."""
    if len(correct) != len(lengths):
        raise ValueError(f"{len(correct)} rows but {len(lengths)} length pairs")
    out = []
    for name, low, high in LENGTH_RATIO_BUCKETS:
        inside = [
            ok
            for ok, pair in zip(correct, lengths, strict=True)
            if pair is not None and pair[1] > 0 and low <= pair[0] / pair[1] < high
        ]
        out.append({"bucket": name, **Share.of(inside).as_dict()})
    return out
