"""Agreement of judges with human labels: accuracy, Cohen's kappa, order consistency, confusion tables.

Given a result table written by jurist and one human label per row, :func:`agreement_report` reports for
every judge in the table (and for the panel, if the table has one):

* ``accuracy``: verdicts equal to the label, over every labelled row (a row the judge could not decide,
  an inconclusive pair, counts as wrong); ``accuracy_decided`` over the rows with a verdict;
* ``cohen_kappa`` between verdicts and labels, over rows with both;
* pairwise judges: ``order_consistency`` (the share of decided rows whose two orders named the same
  winner) and ``accuracy_by_order`` (each order's verdict alone, and their mean: LLMBar's protocol);
* ``confusion``: the table of labels (rows) by verdicts (columns).

Labels come from a column of the result table or from a separate file, matched by row id or, for files
without ids (LLMBar's JSON), by position.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from jurist.analysis.agreement import ConfusionMatrix, accuracy, cohen_kappa, confusion_matrix
from jurist.errors import InputError

PAIRWISE_LABELS: dict[str, str] = {"1": "a", "2": "b", "a": "a", "b": "b", "tie": "tie", "0": "tie"}
BOOL_LABELS: dict[str, bool] = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}


def judges_in(table: pa.Table) -> list[str]:
    """Names of the judges (and the panel) whose columns a result table holds, in column order."""
    names = []
    for column in table.column_names:
        if column.endswith(".status"):
            names.append(column[: -len(".status")])
    return names


def verdict_column(table: pa.Table, judge: str) -> str:
    """The column holding a judge's verdict: ``winner`` for pairwise judges, else ``judgment``."""
    for suffix in ("winner", "judgment"):
        if f"{judge}.{suffix}" in table.column_names:
            return f"{judge}.{suffix}"
    raise InputError(f"judge {judge!r} has neither a winner nor a judgment column")


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
        elif key.lower() in BOOL_LABELS:
            out.append(BOOL_LABELS[key.lower()])
        else:
            out.append(key)
    return out


def _judge_report(table: pa.Table, judge: str, truth: list[Any], pairwise: bool) -> dict[str, Any]:
    predicted = table.column(verdict_column(table, judge)).to_pylist()
    if pairwise:
        predicted = [None if p == "inconclusive" else p for p in predicted]
    labelled = [i for i, t in enumerate(truth) if t is not None]
    correct = sum(predicted[i] == truth[i] for i in labelled)
    report: dict[str, Any] = {
        "labelled_rows": len(labelled),
        "decided_rows": sum(predicted[i] is not None for i in labelled),
        "accuracy": correct / len(labelled) if labelled else None,
        "accuracy_decided": accuracy(predicted, truth),
        "cohen_kappa": cohen_kappa(predicted, truth),
    }
    consistent_column = f"{judge}.position_consistent"
    if pairwise and consistent_column in table.column_names:
        flags = [table.column(consistent_column)[i].as_py() for i in labelled]
        decided = [f for f in flags if f is not None]
        report["order_consistency"] = sum(decided) / len(decided) if decided else None
        report["accuracy_by_order"] = _order_accuracy(table, judge, truth, labelled)
    matrix = confusion_matrix(
        ["undecided" if predicted[i] is None else predicted[i] for i in labelled],
        [truth[i] for i in labelled],
    )
    report["confusion"] = {"labels": list(matrix.labels), "counts": [list(r) for r in matrix.counts]}
    report["_matrix"] = matrix
    return report


def _order_accuracy(
    table: pa.Table, judge: str, truth: list[Any], labelled: list[int]
) -> dict[str, float | None]:
    """Each order's verdict, mapped back to sides, against the label (LLMBar's per-order accuracy)."""
    meta = table.schema.metadata or {}
    first, second, tie = "A", "B", "tie"
    if b"jurist" in meta:
        for entry in json.loads(meta[b"jurist"]).get("judges", []):
            pair = (entry.get("config") or {}).get("pairwise_judge_params")
            if entry.get("name") == judge and pair:
                labels = pair.get("labels") or {}
                first, second, tie = (
                    labels.get("first", first),
                    labels.get("second", second),
                    labels.get("tie", tie),
                )
    sides = {
        "ab": {first: "a", second: "b", tie: "tie"},
        "ba": {first: "b", second: "a", tie: "tie"},
    }
    out: dict[str, float | None] = {}
    for key in ("ab", "ba"):
        column = f"{judge}.{key}_judgment"
        if column not in table.column_names or not labelled:
            out[key] = None
            continue
        verdicts = table.column(column).to_pylist()
        out[key] = sum(sides[key].get(verdicts[i]) == truth[i] for i in labelled) / len(labelled)
    known = [v for v in out.values() if v is not None]
    out["mean"] = sum(known) / len(known) if len(known) == 2 else None
    return out


def agreement_report(
    table: pa.Table,
    labels: Sequence[Any],
    *,
    judges: Sequence[str] | None = None,
    label_map: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per judge (and panel), agreement with ``labels`` (one per table row, None for unlabelled rows)."""
    if len(labels) != table.num_rows:
        raise InputError(f"{len(labels)} labels for {table.num_rows} result rows")
    names = list(judges) if judges else judges_in(table)
    if not names:
        raise InputError("the table holds no judge columns (no '<judge>.status' column)")
    out: dict[str, dict[str, Any]] = {}
    for judge in names:
        pairwise = f"{judge}.winner" in table.column_names
        truth = normalize_labels(labels, pairwise, label_map)
        out[judge] = _judge_report(table, judge, truth, pairwise)
    return out


def labels_for_table(
    table: pa.Table,
    *,
    column: str | None = None,
    file_rows: pa.Table | None = None,
    file_id_column: str | None = None,
) -> list[Any]:
    """Human labels aligned with a result table: from one of its columns, or from another table matched
    by row id (``file_id_column``) or, without ids, by position."""
    if column is not None and file_rows is None:
        if column not in table.column_names:
            raise InputError(
                f"the results have no column {column!r} (columns: {', '.join(table.column_names)})"
            )
        return list(table.column(column).to_pylist())
    if file_rows is None:
        raise InputError("give a label column or a labels file")
    label_column = column or "label"
    if label_column not in file_rows.column_names:
        raise InputError(f"the labels file has no column {label_column!r}")
    values = file_rows.column(label_column).to_pylist()
    if file_id_column is None:
        ids = [str(i) for i in range(file_rows.num_rows)]
    else:
        if file_id_column not in file_rows.column_names:
            raise InputError(f"the labels file has no id column {file_id_column!r}")
        ids = [str(v) for v in file_rows.column(file_id_column).to_pylist()]
    by_id = dict(zip(ids, values, strict=True))
    return [by_id.get(row_id) for row_id in table.column("row_id").to_pylist()]


def format_report(report: Mapping[str, Mapping[str, Any]]) -> str:
    """A readable text rendering of :func:`agreement_report`."""
    lines = []
    for judge, r in report.items():
        acc = r["accuracy"]
        kappa = r["cohen_kappa"]
        head = (
            f"{judge}: accuracy {_pct(acc)} ({r['labelled_rows']} labelled, {r['decided_rows']} decided), "
            f"Cohen's kappa {'n/a' if kappa is None else f'{kappa:.3f}'}"
        )
        if "order_consistency" in r:
            head += f", order consistency {_pct(r['order_consistency'])}"
            by_order = r["accuracy_by_order"]
            head += (
                f", accuracy by order ab {_pct(by_order['ab'])} / ba {_pct(by_order['ba'])} "
                f"(mean {_pct(by_order['mean'])})"
            )
        lines.append(head)
        matrix: ConfusionMatrix = r["_matrix"]
        lines += ["  " + line for line in matrix.to_text().splitlines()]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"
