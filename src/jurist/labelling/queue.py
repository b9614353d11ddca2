"""Which row comes next: the sampling plan's draws in order, or, in review, the rows most worth a second
look first.

A labelling queue is the plan's draws (:meth:`jurist.labels.sampling.SamplingPlan.draws`), in their
order; the plan is the same for the same seed, so a restarted server offers the first row of the plan
that is still unlabelled. A review queue holds every row of the results, in this order:

1. the rows whose label (the latest line of the row) differs from the judge's verdict;
2. the pairwise rows whose two orders disagree (``position_consistent`` false);
3. the rest, least confident first (rows without a confidence last).

A row leaves the review queue once it has a line given in review.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass

from jurist.labelling.choices import LabelValue
from jurist.labelling.rows import Rows
from jurist.labels.sampling import Draw

DISAGREES = "the judge disagrees with the label"
INCONSISTENT = "the judge's two orders disagree"
UNSURE = "the judge is unsure"


@dataclass(frozen=True)
class Entry:
    """A row of the queue: its id, its place (0 first), its inclusion probability when a plan drew it, and
    why a review shows it."""

    row_id: str
    position: int
    probability: float | None = None
    reason: str | None = None


class Queue:
    """Rows in the order they are offered."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries = tuple(entries)
        self._by_id = {e.row_id: e for e in self.entries}

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._by_id

    def entry(self, row_id: str) -> Entry | None:
        return self._by_id.get(row_id)

    def first(self, *excluded: Container[str]) -> Entry | None:
        """The first entry whose row is in none of ``excluded`` (done, held by others, skipped)."""
        return next((e for e in self.entries if not any(e.row_id in s for s in excluded)), None)

    @classmethod
    def of_plan(cls, draws: Iterable[Draw]) -> Queue:
        return cls(
            Entry(d.row_id, d.position, d.probability) for d in sorted(draws, key=lambda d: d.position)
        )

    @classmethod
    def of_review(cls, rows: Rows, labels: Mapping[str, LabelValue]) -> Queue:
        """Every row, in review order, given the current label of each labelled row."""
        reasons: dict[str, str] = {}
        for row_id, label in labels.items():
            if row_id in rows and rows.verdicts[rows.index[row_id]] not in (None, label):
                reasons[row_id] = DISAGREES
        for row_id, consistent in zip(rows.row_ids, rows.consistent, strict=True):
            if consistent is False:
                reasons.setdefault(row_id, INCONSISTENT)
        first = [r for r in rows.row_ids if reasons.get(r) == DISAGREES]
        second = [r for r in rows.row_ids if reasons.get(r) == INCONSISTENT]
        rest = [i for i, r in enumerate(rows.row_ids) if r not in reasons]
        rest.sort(key=lambda i: (rows.confidence[i] is None, rows.confidence[i] or 0.0))
        order = first + second + [rows.row_ids[i] for i in rest]
        return cls(Entry(r, n, None, reasons.get(r, UNSURE)) for n, r in enumerate(order))
