"""Human labels for a result table: joined by row id, put in the judge's vocabulary, turned into numbers.

One place for what ``jurist agree``, ``calibrate``, ``estimate``, ``audit`` and ``report`` do with labels:

* :func:`join_labels`: one label per result row (None where the row has none), from a column of the
  results or from a labels file matched on the results' ``row_id`` by the file's id column, its own
  ``row_id`` column (a ``jurist label`` file) or, without either, by the file's row position (0, 1, ...:
  LLMBar's JSON files). A file none of whose ids match fails and names the columns it tried.
  :func:`join_probabilities` matches a sampling plan's ``probability`` column the same way.
* :func:`normalize_labels`: a/b/tie for pairwise judges (LLMBar's 1/2 too), booleans for yes/no labels.
* :func:`label_targets`: a label as the number a judge's score estimates: a pairwise label as the chance
  that answer a wins (1, 0, or 0.5 for a tie), a yes/no label as 1/0, a numeric label as itself; a label
  of another type fails and says which type fits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.analysis.label_file import ROW_ID, label_ids, read_label_file, read_label_table
from jurist.errors import InputError
from jurist.io.results import PAIRWISE, PANEL, JudgeColumns, ResultTable

PROBABILITY = "probability"
PAIRWISE_LABELS: dict[str, str] = {"1": "a", "2": "b", "a": "a", "b": "b", "tie": "tie", "0": "tie"}
BOOL_LABELS: dict[str, bool] = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}
PAIRWISE_TARGETS: dict[str, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}


def parse_label_map(text: str | None) -> dict[str, str] | None:
    """``"1=a,2=b"`` -> ``{"1": "a", "2": "b"}``."""
    if not text:
        return None
    out = {}
    for item in text.split(","):
        if "=" not in item:
            raise InputError(f"label map item {item!r} is not KEY=VALUE")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def join_labels(
    results: ResultTable,
    *,
    column: str | None = None,
    file_rows: pa.Table | None = None,
    file_id_column: str | None = None,
    source: str = "the labels file",
) -> list[Any]:
    """Labels aligned with the result rows: from the results' own ``column``, or from ``file_rows`` (its
    ``column``, default ``label``) matched by ``file_id_column`` or, without one, by its ``row_id``
    column where it has one (a ``jurist label`` file) and by row position otherwise. Where a row id
    occurs on several lines the last counts (a correction is appended after the label it corrects)."""
    if file_rows is None:
        if column is None:
            raise InputError("give a label column of the results or a labels file")
        return results.values(column)
    label_column = column or "label"
    if label_column not in file_rows.column_names:
        raise InputError(
            f"{source} has no label column {label_column!r} (columns: {', '.join(file_rows.column_names)})"
        )
    ids, tried = label_ids(file_rows, file_id_column, source)
    id_column = results.id_column
    if id_column is None:
        raise InputError("the results have no row_id column to match labels on")
    by_id = dict(zip(ids, file_rows.column(label_column).to_pylist(), strict=True))
    row_ids = [str(v) for v in results.values(id_column)]
    joined = [by_id.get(row_id) for row_id in row_ids]
    if by_id and not any(row_id in by_id for row_id in row_ids):
        raise InputError(
            f"no label of {source} matches a result row: tried {tried} against the results' "
            f"{id_column!r} (labels' ids start {_sample(ids)}; results' start {_sample(row_ids)})"
        )
    return joined


def join_probabilities(
    results: ResultTable, file_rows: pa.Table, file_id_column: str | None = None
) -> list[float | None] | None:
    """Each result row's chance of having been chosen for labelling, from the ``probability`` column of a
    labels file that a sampling plan wrote (:mod:`jurist.analysis.sampling`), matched as
    :func:`join_labels` matches the labels (the last line of a row counts); None when the file records no
    probabilities. A probability outside (0, 1] fails, naming its row."""
    if PROBABILITY not in file_rows.column_names or file_rows.column(PROBABILITY).null_count == len(
        file_rows
    ):
        return None
    values = join_labels(results, column=PROBABILITY, file_rows=file_rows, file_id_column=file_id_column)
    out: list[float | None] = []
    for row, value in zip(results.values(results.id_column or ROW_ID), values, strict=True):
        if value is None:
            out.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise InputError(
                f"row {row!r}: the selection probability must be a number in (0, 1], not {value!r}"
            )
        out.append(float(value))
    return out


def _sample(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values[:3]) or "nothing"


def normalize_labels(
    labels: Sequence[Any], pairwise: bool, label_map: Mapping[str, str] | None = None
) -> list[Any]:
    """Human labels in the judge's vocabulary: a/b/tie for pairwise judges (LLMBar's 1/2 included),
    booleans for yes/no labels, otherwise the label text as is."""
    out: list[Any] = []
    for label in labels:
        if label is None:
            out.append(None)
            continue
        key = str(label).strip()
        if label_map is not None:
            out.append(label_map.get(key, key))
        elif pairwise:
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


def apply_label_map(labels: Sequence[Any], text: str | None) -> list[Any]:
    """Labels with ``--label-map``'s values (``"1=a,2=b"``) put in place of the keys they name."""
    mapping = parse_label_map(text)
    if mapping is None:
        return list(labels)
    return [None if v is None else mapping.get(str(v).strip(), v) for v in labels]


def labels_for_rows(
    row_ids: Sequence[str],
    *,
    rows: pa.Table | None = None,
    path: str | Path | None = None,
    column: str | None = None,
    id_column: str | None = None,
) -> list[Any]:
    """One label per input row (None where it has none), as the commands that read a dataset take them: the
    rows' own ``column`` without a labels file, else the labels file
    (:func:`~jurist.analysis.label_file.read_label_file`) matched on ``row_ids`` (each row's id, or its
    position as text when the input has no id column)."""
    if path is None:
        if column is None:
            raise InputError("give --label-column (a column of the input) or --labels FILE")
        if rows is None or column not in rows.column_names:
            names = ", ".join(rows.column_names) if rows is not None else "none"
            raise InputError(f"the input has no label column {column!r} (columns: {names})")
        return list(rows.column(column).to_pylist())
    by_id = read_label_file(path, column, id_column)
    joined = [by_id.get(str(i)) for i in row_ids]
    if not any(label is not None for label in joined):
        raise InputError(
            f"no label matches an input row (labels' ids start {_sample(list(by_id))}; the rows' start "
            f"{_sample([str(i) for i in row_ids])})",
            source=str(path),
        )
    return joined


def read_result_labels(
    results: ResultTable,
    path: str | Path | None,
    column: str | None,
    id_column: str | None = None,
) -> tuple[list[Any], list[float | None] | None]:
    """What every evidence command reads (``--labels`` / ``--label-column``): one raw label per result row
    (None where a row has none; :func:`join_labels`), and each row's chance of having been chosen for
    labelling from the file's ``probability`` column (:func:`join_probabilities`; None without a file or
    when it records none). The file is read once."""
    if path is None and column is None:
        raise InputError("give --label-column (a column of the results) or --labels FILE")
    file_rows = read_label_table(path) if path is not None else None
    source = str(path) if path is not None else "the labels file"
    joined = join_labels(results, column=column, file_rows=file_rows, file_id_column=id_column, source=source)
    chances = None if file_rows is None else join_probabilities(results, file_rows, id_column)
    return joined, chances


def result_labels(
    results: ResultTable,
    path: str | Path | None,
    column: str | None,
    id_column: str | None = None,
    *,
    required: bool = True,
) -> list[Any] | None:
    """One raw label per result row, as :func:`read_result_labels` joins them; None when neither a file
    nor a column is given and labels are not ``required``."""
    if path is None and column is None and not required:
        return None
    return read_result_labels(results, path, column, id_column)[0]


def check_label_rows(results: ResultTable, labels: str | Path, id_column: str | None) -> None:
    """Refuse a labels file with labels for rows the results do not hold: ids (``id_column``, the file's
    ``row_id`` column, or the row positions 0, 1, ..., as :func:`~jurist.analysis.labels.join_labels`
    matches them) that are not among the results' row ids."""
    ids, how = label_ids(read_label_table(labels), id_column, str(labels))
    held = {str(v) for v in results.values("row_id")}
    unknown = [v for v in ids if v not in held]
    if unknown:
        shown = ", ".join(repr(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise InputError(
            f"{labels}: {len(unknown)} of its {len(ids)} labels (matched by {how}) are for rows the results "
            f"do not hold (ids {shown}; the results have {results.num_rows} rows)"
        )
