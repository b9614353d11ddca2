"""Trivial baselines that a judge's accuracy against labels must stand beside, on the same rows.

A judge's 57 % means nothing alone: on LLMBar's Natural set "the longer answer wins" scores 56 %, on its
adversarial sets 12-17 % (they are built so that the polished, longer answer loses), on MT-Bench 69 %.
For every labelled row set this module scores, with a 95 % Wilson interval each:

* ``majority``: always the commonest label of these rows (for a pairwise set, the commoner side);
* pairwise only: ``first shown`` (always the answer shown first, a, as a judge with full position bias
  that sees one order would), ``longer answer`` and ``shorter answer`` (by characters; a pair of equal
  lengths is no verdict, so wrong).

:func:`compare_to_baselines` then says of each whether the judge beats it: ``yes`` when the baseline's
accuracy lies below the judge's 95 % interval, ``no`` when the judge is not above it, ``unclear`` in
between. A row without a verdict counts as wrong for the judge and the baselines alike.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.analysis.agreement import majority_baseline, wilson_interval
from jurist.analysis.text import percent_with_interval

__all__ = [
    "LENGTH_RATIO_BUCKETS",
    "Baseline",
    "accuracy_by_length_ratio",
    "baselines",
    "beats",
    "compare_to_baselines",
    "format_baselines",
]


@dataclass(frozen=True)
class Baseline:
    """A trivial rule's accuracy on ``rows`` labelled rows (``right`` of them right)."""

    name: str
    rule: str
    right: int
    rows: int

    @property
    def accuracy(self) -> float | None:
        return self.right / self.rows if self.rows else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.right, self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "accuracy": self.accuracy,
            "interval": self.interval,
            "right": self.right,
            "rows": self.rows,
        }


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
    out = [Baseline("majority", f"always {label!r}", right, rows)]
    if not pairwise:
        return out
    out.append(Baseline("first shown", "always 'a'", sum(truth[i] == "a" for i in labelled), rows))
    if lengths is not None:
        if len(lengths) != len(truth):
            raise ValueError(f"{len(lengths)} length pairs for {len(truth)} labels")
        longer = [_longer(lengths[i]) for i in labelled]
        shorter = [{"a": "b", "b": "a"}.get(w) if w else None for w in longer]
        labels = [truth[i] for i in labelled]
        out.append(Baseline("longer answer", "the longer answer wins", _right(longer, labels), rows))
        out.append(Baseline("shorter answer", "the shorter answer wins", _right(shorter, labels), rows))
    return out


def _longer(pair: tuple[float, float] | None) -> str | None:
    if pair is None or pair[0] == pair[1]:
        return None
    return "a" if pair[0] > pair[1] else "b"


def _right(predicted: Sequence[str | None], truth: Sequence[Hashable]) -> int:
    return sum(p is not None and p == t for p, t in zip(predicted, truth, strict=True))


def beats(correct: int, rows: int, baseline: Baseline) -> str | None:
    """Whether a judge with ``correct`` of ``rows`` right beats ``baseline`` on the same rows: ``yes`` (the
    baseline's accuracy is below the judge's 95 % interval), ``no`` (the judge is not above it) or
    ``unclear``; None without rows."""
    interval = wilson_interval(correct, rows)
    if interval is None or baseline.rows != rows:
        return None
    if correct <= baseline.right:
        return "no"
    return "yes" if interval[0] > baseline.right / rows else "unclear"


def compare_to_baselines(correct: int, rows: int, found: Sequence[Baseline]) -> dict[str, dict[str, Any]]:
    """Each baseline as a dict, with ``beaten`` (:func:`beats`) for a judge with ``correct`` of ``rows``."""
    return {b.name: {**b.as_dict(), "beaten": beats(correct, rows, b)} for b in found}


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
    (:data:`LENGTH_RATIO_BUCKETS`), each with its Wilson interval; rows without both lengths (or with an
    empty answer b) are left out. ``correct`` and ``lengths`` are per labelled row. Beside the audit's
    length bias it shows where a judge's accuracy comes from: a judge that only follows length is right
    in the buckets where the longer (or shorter) answer happens to win."""
    if len(correct) != len(lengths):
        raise ValueError(f"{len(correct)} rows but {len(lengths)} length pairs")
    out = []
    for name, low, high in LENGTH_RATIO_BUCKETS:
        inside = [
            ok
            for ok, pair in zip(correct, lengths, strict=True)
            if pair is not None and pair[1] > 0 and low <= pair[0] / pair[1] < high
        ]
        interval = wilson_interval(sum(inside), len(inside))
        out.append(
            {
                "bucket": name,
                "rows": len(inside),
                "accuracy": sum(inside) / len(inside) if inside else None,
                "interval": interval,
            }
        )
    return out


BEATEN_WORDS = {
    "yes": "beaten",
    "no": "NOT beaten",
    "unclear": "below the judge, inside its 95 % interval",
}


def format_baselines(report: Mapping[str, Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """Lines for :func:`compare_to_baselines`' report: one per baseline, and a warning line naming the ones
    the judge does not beat."""
    lines = []
    for name, entry in report.items():
        shown = percent_with_interval(entry.get("accuracy"), entry.get("interval"))
        word = BEATEN_WORDS.get(str(entry.get("beaten")), "n/a")
        lines.append(f"{indent}baseline {name} ({entry['rule']}): {shown}: {word}")
    unbeaten = [name for name, entry in report.items() if entry.get("beaten") == "no"]
    if unbeaten:
        lines.append(f"{indent}warning: the judge does not beat {', '.join(unbeaten)} on these rows")
    return lines
