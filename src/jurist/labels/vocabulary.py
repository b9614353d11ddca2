"""Labels in a judge's vocabulary, and as the numbers its score estimates.

* :func:`normalize_labels`: a/b/tie for pairwise judges (LLMBar's 1/2 too), booleans for yes/no labels.
* :func:`label_targets`: a label as the number a judge's score estimates: a pairwise label as the chance
  that answer a wins (1, 0, or 0.5 for a tie), a yes/no label as 1/0, a numeric label as itself; a label
  of another type fails and says which type fits.
* :func:`parse_label_map`: ``--label-map``'s ``"1=a,2=b"``, which a
  :class:`~jurist.labels.source.LabelSource` applies to every label it reads, before normalising.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from jurist.errors import InputError
from jurist.io.results import PAIRWISE, PANEL, JudgeColumns, ResultTable

PAIRWISE_LABELS: dict[str, str] = {"1": "a", "2": "b", "a": "a", "b": "b", "tie": "tie", "0": "tie"}
BOOL_LABELS: dict[str, bool] = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}
PAIRWISE_TARGETS: dict[str, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}


def parse_label_map(text: str | None) -> dict[str, str] | None:
    """``"1=a,2=b"`` -> ``{"1": "a", "2": "b"}``; None for no map."""
    if not text:
        return None
    out = {}
    for item in text.split(","):
        if "=" not in item:
            raise InputError(f"label map item {item!r} is not KEY=VALUE")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def normalize_labels(labels: Sequence[Any], pairwise: bool) -> list[Any]:
    """Human labels in the judge's vocabulary: a/b/tie for pairwise judges (LLMBar's 1/2 included),
    booleans for yes/no labels, otherwise the label text as is."""
    out: list[Any] = []
    for label in labels:
        if label is None:
            out.append(None)
            continue
        key = str(label).strip()
        if pairwise:
            out.append(PAIRWISE_LABELS.get(key.lower(), key))
        elif isinstance(label, bool) or key.lower() in BOOL_LABELS:
            out.append(bool(label) if isinstance(label, bool) else BOOL_LABELS[key.lower()])
        elif isinstance(label, int | float):
            out.append(label)
        else:
            out.append(key)
    return out


def label_targets(
    labels: Sequence[Any], judge: JudgeColumns, row_ids: Sequence[Any] | None = None
) -> list[float | None]:
    """Normalized labels as the numbers a judge's score estimates; an :class:`InputError` naming the row,
    the label and the type that fits when a label is of another type."""
    out: list[float | None] = []
    for index, label in enumerate(labels):
        if label is None:
            out.append(None)
            continue
        number = _target(label, judge.pairwise)
        if number is None:
            where = row_ids[index] if row_ids is not None else index
            expected = (
                "a, b or tie (or LLMBar's 1 and 2)"
                if judge.pairwise
                else "a number, or yes/no (true/false, 1/0)"
            )
            raise InputError(
                f"label {label!r} of row {where} does not fit judge {judge.name!r} ({judge.kind}): "
                f"its labels must be {expected}"
            )
        out.append(number)
    return out


def _target(label: Any, pairwise: bool) -> float | None:
    if pairwise:
        return PAIRWISE_TARGETS.get(str(label))
    if isinstance(label, bool):
        return float(label)
    if isinstance(label, int | float) and math.isfinite(label):
        return float(label)
    try:
        value = float(str(label))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def is_pairwise(results: ResultTable, judge: JudgeColumns) -> bool:
    """Whether a judge's verdicts name a side: a pairwise judge, or the panel of pairwise judges."""
    return judge.pairwise or (judge.kind == PANEL and bool(results.of_kind(PAIRWISE)))


def order_labels(results: ResultTable, judge: str) -> tuple[str, str, str]:
    """The labels a pairwise judge answers with in each order: (first shown, second shown, tie), from its
    config in the run metadata (A, B, tie by default)."""
    first, second, tie = "A", "B", "tie"
    for entry in results.metadata.get("judges") or ():
        pair = (entry.get("config") or {}).get("pairwise_judge_params") if isinstance(entry, dict) else None
        if entry.get("name") == judge and pair:
            labels = pair.get("labels") or {}
            first, second, tie = (
                labels.get("first", first),
                labels.get("second", second),
                labels.get("tie", tie),
            )
    return first, second, tie
