"""Agreement statistics for judge panels and for judge-vs-human labels.

Conventions shared by every function here:

* A missing value is ``None`` and nothing else; it is skipped as each function documents. Paired
  statistics (``accuracy``, ``confusion_matrix``, ``cohen_kappa``) use only the positions where both
  sequences hold a value. A float NaN is not a missing value: ``krippendorff_alpha`` rejects it.
* Paired sequences must have the same length (``ValueError`` otherwise), so that position ``i`` is the
  same item in both.
* Values are compared with ``==`` and grouped by hash, so ``1``, ``1.0`` and ``True`` are one value.
* Where a statistic is undefined for lack of data the result is ``None``, never NaN.

Everything is pure Python (no numpy or scipy); the cost of ``krippendorff_alpha`` grows with the square of
the number of distinct values, which is small for label and rating scales.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


# ----------------------------------------------------------------------------------------------- helpers


def _pairs(
    a: Sequence[Hashable | None], b: Sequence[Hashable | None], names: tuple[str, str]
) -> list[tuple[Hashable, Hashable]]:
    """The (a[i], b[i]) pairs where neither value is None; the sequences must be equally long."""
    if len(a) != len(b):
        raise ValueError(f"{names[0]} and {names[1]} differ in length: {len(a)} != {len(b)}")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def sorted_labels(values: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """Distinct values in sorted order; by ``str`` (then type name) when they are not mutually comparable."""
    distinct = list(dict.fromkeys(values))
    try:
        return tuple(sorted(distinct))  # type: ignore[type-var]
    except TypeError:
        return tuple(sorted(distinct, key=lambda v: (str(v), type(v).__name__)))


# ---------------------------------------------------------------------------------------------- accuracy


def accuracy(predicted: Sequence[Hashable | None], truth: Sequence[Hashable | None]) -> float | None:
    """Share of items where the prediction equals the truth.

    ``accuracy = #{i : predicted[i] == truth[i]} / N`` over the N positions where both values are present
    (a None on either side drops the position from numerator and denominator alike). None when N == 0.
    """
    pairs = _pairs(predicted, truth, ("predicted", "truth"))
    if not pairs:
        return None
    return sum(1 for p, t in pairs if p == t) / len(pairs)


# -------------------------------------------------------------------------------------- confusion matrix


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of (truth, predicted) pairs.

    ``counts[i][j]`` is the number of items whose truth is ``labels[i]`` and whose prediction is
    ``labels[j]``: rows are truth, columns are predicted, so the diagonal holds the agreements.
    """

    labels: tuple[Hashable, ...]
    counts: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        size = len(self.labels)
        if len(self.counts) != size or any(len(row) != size for row in self.counts):
            raise ValueError(f"counts must be a {size}x{size} matrix to match the labels")

    @property
    def total(self) -> int:
        """The number of counted pairs (the sum of all cells)."""
        return sum(sum(row) for row in self.counts)

    def count(self, truth: Hashable, predicted: Hashable) -> int:
        """The cell for one (truth, predicted) pair of labels (``ValueError`` for an unknown label)."""
        return self.counts[self.labels.index(truth)][self.labels.index(predicted)]

    def to_text(self) -> str:
        r"""An aligned plain-text table: a ``truth \ predicted`` corner, predicted labels across the top,
        truth labels down the left; labels are left-aligned in the first column, counts right-aligned,
        columns separated by two spaces, no trailing whitespace."""
        corner = "truth \\ predicted"
        names = [str(label) for label in self.labels]
        first = max([len(corner), *(len(n) for n in names)])
        widths = [max(len(name), *(len(str(row[j])) for row in self.counts)) for j, name in enumerate(names)]
        lines = ["  ".join([corner.ljust(first), *(n.rjust(w) for n, w in zip(names, widths, strict=True))])]
        for name, row in zip(names, self.counts, strict=True):
            cells = (str(c).rjust(w) for c, w in zip(row, widths, strict=True))
            lines.append("  ".join([name.ljust(first), *cells]))
        return "\n".join(line.rstrip() for line in lines)


def confusion_matrix(
    predicted: Sequence[Hashable | None],
    truth: Sequence[Hashable | None],
    labels: Sequence[Hashable] | None = None,
) -> ConfusionMatrix:
    """Count (truth, predicted) pairs into a matrix with rows = truth and columns = predicted.

    Positions where either value is None are skipped. ``labels`` fixes the order of rows and columns (and
    may name labels that never occur, which get zero rows/columns); a counted value that is not among
    ``labels`` raises ``ValueError`` rather than being dropped silently, and so do repeated labels. Without
    ``labels``, the labels are the sorted union of the values in the counted pairs (sorted by ``str`` when
    the values are not mutually comparable).
    """
    pairs = _pairs(predicted, truth, ("predicted", "truth"))
    if labels is None:
        order = sorted_labels(v for pair in pairs for v in pair)
    else:
        order = tuple(labels)
        if len(set(order)) != len(order):
            raise ValueError(f"labels has repeated values: {list(order)!r}")
    index = {label: i for i, label in enumerate(order)}
    unknown = {v for pair in pairs for v in pair if v not in index}
    if unknown:
        raise ValueError(f"values not among labels: {sorted(map(repr, unknown))}")
    cells = [[0] * len(order) for _ in order]
    for p, t in pairs:
        cells[index[t]][index[p]] += 1
    return ConfusionMatrix(labels=order, counts=tuple(tuple(row) for row in cells))


# ---------------------------------------------------------------------------------------- Cohen's kappa


def cohen_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float | None:
    """Unweighted Cohen's kappa between two raters.

    Over the N items where both raters gave a value (None on either side skips the item)::

        p_o   = #{i : a[i] == b[i]} / N                   observed agreement
        p_e   = sum over labels l of (n_a(l) / N) * (n_b(l) / N)   chance agreement from the marginals
        kappa = (p_o - p_e) / (1 - p_e)

    computed exactly in integers as ``(N * agree - S) / (N**2 - S)`` with ``S = sum_l n_a(l) * n_b(l)``.

    Returns None when N == 0. Convention for ``p_e == 1`` (both raters used one and the same label on every
    item, where the formula is 0/0 and sklearn returns nan): 1.0 if ``p_o == 1`` (it always is in that
    case: the raters agree perfectly), else 0.0.
    """
    pairs = _pairs(a, b, ("a", "b"))
    n = len(pairs)
    if n == 0:
        return None
    agree = sum(1 for x, y in pairs if x == y)
    count_a = Counter(x for x, _ in pairs)
    count_b = Counter(y for _, y in pairs)
    chance = sum(count * count_b.get(label, 0) for label, count in count_a.items())
    denominator = n * n - chance
    if denominator == 0:  # p_e == 1
        return 1.0 if agree == n else 0.0
    return (n * agree - chance) / denominator


def pairwise_cohen_kappa(
    ratings: Mapping[str, Sequence[Hashable | None]],
) -> dict[tuple[str, str], float | None]:
    """Cohen's kappa for every unordered pair of raters.

    ``ratings[name][item]``; the result maps ``(first, second)`` to ``cohen_kappa(ratings[first],
    ratings[second])`` for every pair, ``first`` coming before ``second`` in the mapping's order, and the
    pairs listed in that order too (``itertools.combinations`` of the keys). Fewer than two raters give
    an empty dict.
    """
    return {
        (first, second): cohen_kappa(ratings[first], ratings[second])
        for first, second in itertools.combinations(ratings, 2)
    }


# --------------------------------------------------------------------------------- Krippendorff's alpha


def _is_nan(value: Any) -> bool:
    return isinstance(value, numbers.Real) and math.isnan(value)


def _as_number(value: Any, level: str) -> float:
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number):
            return number
    raise ValueError(f"{level} alpha needs finite real numbers, got {value!r}")


def krippendorff_alpha(
    ratings: Sequence[Sequence[Any | None]], level: AlphaLevel = "nominal"
) -> float | None:
    """Krippendorff's alpha, by the coincidence-matrix formulation of Krippendorff (2011), "Computing
    Krippendorff's Alpha-Reliability".

    ``ratings[rater][item]``: one row per rater, all rows equally long, None where a rater gave no value.

    * Only *pairable* values count: an item (unit) u with m_u >= 2 values contributes all of them; an item
      with fewer contributes nothing.
    * Coincidences: ``o_ck = sum_u (number of ordered pairs (c, k) of values from different raters in u)
      / (m_u - 1)``; ``n_c = sum_k o_ck`` is the number of pairable values equal to c and
      ``n = sum_c n_c`` the number of pairable values.
    * ``D_o = (1/n) * sum_c sum_k o_ck * delta(c, k)`` (observed disagreement) and
      ``D_e = 1/(n(n-1)) * sum_c sum_k n_c * n_k * delta(c, k)`` (expected disagreement), so
      ``alpha = 1 - D_o / D_e = 1 - (n - 1) * sum o_ck delta_ck / sum n_c n_k delta_ck``.
    * Metrics delta(c, k) by ``level``:

      - nominal: 0 if c == k else 1 (any hashable values);
      - ordinal: ``(sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2``, the sum running over the distinct values
        from c to k in sorted order (the values must be mutually comparable, and their natural ``sorted``
        order is the rank order: map text labels to ranks first);
      - interval: ``(c - k) ** 2`` (finite real numbers);
      - ratio: ``((c - k) / (c + k)) ** 2`` (finite real numbers >= 0; delta(0, 0) = 0).

    Returns None when there is no pairable value (fewer than two raters, or no item rated twice). When
    ``D_e == 0`` (every pairable value is the same, which forces ``D_o == 0`` too) the formula is 0/0 and
    alpha is taken to be 1.0: the raters agree perfectly, though the data cannot show they could have
    disagreed. alpha is 1 for perfect agreement, 0 for agreement at chance level, and negative for
    systematic disagreement. Float NaN is rejected (``ValueError``): use None for missing values.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"unknown level {level!r}: use nominal, ordinal, interval or ratio")
    if not ratings:
        return None
    n_items = len(ratings[0])
    if any(len(row) != n_items for row in ratings):
        raise ValueError(f"raters rated different numbers of items: {[len(row) for row in ratings]}")

    # The pairable units, each as a Counter of its values.
    units: list[Counter[Any]] = []
    for item in range(n_items):
        values: list[Any] = [row[item] for row in ratings if row[item] is not None]
        if any(_is_nan(v) for v in values):
            raise ValueError(f"item {item} holds a NaN: use None for a missing value")
        if level in ("interval", "ratio"):
            values = [_as_number(v, level) for v in values]
            if level == "ratio" and any(v < 0 for v in values):
                raise ValueError(f"ratio alpha needs values >= 0, item {item} has {values}")
        if len(values) >= 2:
            units.append(Counter(values))
    if not units:
        return None

    # Coincidence matrix (sparse: only pairs that occur) and its marginals.
    coincidences: dict[tuple[Any, Any], float] = {}
    for unit in units:
        weight = 1.0 / (sum(unit.values()) - 1)
        for c, count_c in unit.items():
            for k, count_k in unit.items():
                pairs = count_c * (count_c - 1) if c == k else count_c * count_k
                if pairs:
                    coincidences[c, k] = coincidences.get((c, k), 0.0) + pairs * weight
    totals: Counter[Any] = Counter()
    for unit in units:
        totals.update(unit)
    n = sum(totals.values())

    if level == "ordinal":
        try:
            order = sorted(totals)
        except TypeError as exc:
            raise ValueError("ordinal alpha needs mutually comparable values") from exc
        rank = {value: i for i, value in enumerate(order)}
        cumulative = [0, *itertools.accumulate(totals[v] for v in order)]

        def delta(c: Any, k: Any) -> float:
            lo, hi = sorted((rank[c], rank[k]))
            between = cumulative[hi + 1] - cumulative[lo]
            return float((between - (totals[c] + totals[k]) / 2) ** 2)

    elif level == "interval":

        def delta(c: Any, k: Any) -> float:
            return float((c - k) ** 2)

    elif level == "ratio":

        def delta(c: Any, k: Any) -> float:
            return 0.0 if c == k else float(((c - k) / (c + k)) ** 2)

    else:

        def delta(c: Any, k: Any) -> float:
            return 0.0 if c == k else 1.0

    observed = sum(o * delta(c, k) for (c, k), o in coincidences.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals if c != k)
    if expected == 0:
        return 1.0 if observed == 0 else 0.0
    return 1.0 - (n - 1) * observed / expected


# ------------------------------------------------------------------------------------ panels and verdicts


def plurality(values: Sequence[Hashable | None]) -> tuple[Hashable | None, int]:
    """The most frequent non-None value and how often it occurs.

    None values are ignored. A tie between two or more values for the top count returns ``(None, count)``:
    ties are reported, never broken arbitrarily (by position, order or sorting), so a split panel shows up
    as no verdict. No values at all return ``(None, 0)``.
    """
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None, 0
    (top, top_count), *rest = counts.most_common()
    if rest and rest[0][1] == top_count:
        return None, top_count
    return top, top_count


def position_bias(first_position_picked: Sequence[bool | None]) -> float | None:
    """The share of verdicts that picked the answer shown first.

    ``first_position_picked[i]`` is True when pairwise verdict i preferred the first-shown answer, False when
    it preferred the other, None for no verdict (skipped). Returns ``#True / #(True or False)``, None when
    there is no verdict. An unbiased judge over order-randomised pairs scores near 0.5.
    """
    verdicts = [bool(v) for v in first_position_picked if v is not None]
    if not verdicts:
        return None
    return sum(verdicts) / len(verdicts)
