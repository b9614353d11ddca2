"""Agreement of judges with human labels: accuracy, Cohen's kappa, order consistency, confusion tables.

Given a result table written by jurist and one human label per row, :func:`agreement_report` reports for
every judge in the table (and for the panel, if the table has one):

* ``accuracy``: verdicts equal to the label, over every labelled row (a row the judge could not decide,
  an inconclusive pair, counts as wrong), with its 95 % Wilson interval (a
  :class:`~jurist.stats.share.Share` as a dict); ``accuracy_decided`` over the rows with a verdict;
* ``baselines``: trivial rules on the same rows
  (:mod:`jurist.stats.baselines`: the majority label; for pairwise judges the first-shown answer and
  the longer and the shorter answer, where the results carry the answers), each with its interval and
  whether the judge beats it (yes, no, or unclear when the baseline lies inside the judge's interval);
* ``cohen_kappa`` between verdicts and labels, over rows with both;
* pairwise judges: ``order_consistency`` (the share of decided rows whose two orders named the same
  winner) and ``accuracy_by_order`` (each order's verdict alone, and their mean: LLMBar's protocol);
* ``confusion``: the table of labels (rows) by verdicts (columns);
* ``undecided``: the labelled rows without a verdict, by why (:mod:`jurist.analysis.outcomes`: a failure's
  status, a cascade's ``abstained``, ``not reached`` for a cascade stage, ``inconclusive``). They are no
  verdict: wrong in ``accuracy``, left out of ``accuracy_decided`` and kappa.

Labels come from a column of the result table, a labels file or another run's verdicts, matched to rows by
:class:`jurist.labels.source.LabelSource`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from jurist.analysis.outcomes import count_reasons, reasons_text
from jurist.analysis.text import format_baselines, percent_interval_text
from jurist.analysis.text import percent_text as _pct
from jurist.errors import InputError
from jurist.io.results import JudgeColumns, ResultTable
from jurist.labels.vocabulary import is_pairwise, normalize_labels, order_labels
from jurist.stats.agreement import ConfusionMatrix, accuracy, cohen_kappa, confusion_matrix
from jurist.stats.baselines import baselines, compare_to_baselines
from jurist.stats.share import Share

__all__ = [
    "agreement_report",
    "as_results",
    "format_report",
    "judges_in",
    "verdict_column",
]


def as_results(table: pa.Table | ResultTable) -> ResultTable:
    """A :class:`ResultTable` for a table, with the run metadata its schema carries (if any)."""
    if isinstance(table, ResultTable):
        return table
    raw = (table.schema.metadata or {}).get(b"jurist")
    return ResultTable(table, json.loads(raw) if raw else None)


def judges_in(table: pa.Table | ResultTable) -> list[str]:
    """Names of the judges (and the panel) a result table holds (see :class:`ResultTable`)."""
    return as_results(table).names


def verdict_column(table: pa.Table | ResultTable, judge: str) -> str:
    """The column holding a judge's verdict: ``winner`` for pairwise judges and panels, else ``judgment``."""
    return as_results(table).judge(judge).verdict


def _judge_report(
    results: ResultTable, judge: JudgeColumns, truth: list[Any], pairwise: bool
) -> dict[str, Any]:
    predicted = results.values(judge.verdict)
    if pairwise:
        predicted = [None if p == "inconclusive" else p for p in predicted]
    labelled = [i for i, t in enumerate(truth) if t is not None]
    correct = Share(sum(predicted[i] == truth[i] for i in labelled), len(labelled))
    lengths = None
    if pairwise:
        from jurist.analysis.audit import pair_lengths  # numpy, loaded for pairwise judges only

        lengths = pair_lengths(results, judge)
    found = baselines(truth, pairwise=pairwise, lengths=lengths)
    report: dict[str, Any] = {
        "labelled_rows": len(labelled),
        "decided_rows": sum(predicted[i] is not None for i in labelled),
        "accuracy": correct.as_dict(),
        "baselines": compare_to_baselines(correct, found),
        "accuracy_decided": accuracy(predicted, truth),
        "cohen_kappa": cohen_kappa(predicted, truth),
        "undecided": count_reasons(
            results,
            judge,
            [p is None for p in predicted],
            "inconclusive" if pairwise else "no verdict",
            labelled,
        ),
    }
    consistent_column = judge.get("position_consistent")
    if pairwise and consistent_column is not None:
        flags = results.values(consistent_column)
        decided = [flags[i] for i in labelled if flags[i] is not None]
        report["order_consistency"] = sum(decided) / len(decided) if decided else None
        report["accuracy_by_order"] = _order_accuracy(results, judge, truth, labelled)
    matrix = confusion_matrix(
        ["undecided" if predicted[i] is None else predicted[i] for i in labelled],
        [truth[i] for i in labelled],
    )
    report["confusion"] = {"labels": list(matrix.labels), "counts": [list(r) for r in matrix.counts]}
    report["_matrix"] = matrix
    return report


def _order_accuracy(
    results: ResultTable, judge: JudgeColumns, truth: list[Any], labelled: list[int]
) -> dict[str, float | None]:
    """Each order's verdict, mapped back to sides, against the label (LLMBar's per-order accuracy)."""
    first, second, tie = order_labels(results, judge.name)
    sides = {
        "ab": {first: "a", second: "b", tie: "tie"},
        "ba": {first: "b", second: "a", tie: "tie"},
    }
    out: dict[str, float | None] = {}
    for key in ("ab", "ba"):
        column = judge.get(f"{key}_judgment")
        if column is None or not labelled:
            out[key] = None
            continue
        verdicts = results.values(column)
        out[key] = sum(sides[key].get(verdicts[i]) == truth[i] for i in labelled) / len(labelled)
    known = [v for v in out.values() if v is not None]
    out["mean"] = sum(known) / len(known) if len(known) == 2 else None
    return out


def agreement_report(
    table: pa.Table | ResultTable,
    labels: Sequence[Any],
    *,
    judges: Sequence[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per judge (and panel), agreement with ``labels`` (one per table row, None for unlabelled rows)."""
    results = as_results(table)
    if len(labels) != results.num_rows:
        raise InputError(f"{len(labels)} labels for {results.num_rows} result rows")
    names = list(judges) if judges else results.names
    if not names:
        raise InputError("the table holds no judge columns (no '<judge>.status' column)")
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        judge = results.judge(name)
        pairwise = is_pairwise(results, judge)
        truth = normalize_labels(labels, pairwise)
        out[name] = _judge_report(results, judge, truth, pairwise)
    return out


def format_report(report: Mapping[str, Mapping[str, Any]]) -> str:
    """A readable text rendering of :func:`agreement_report`."""
    lines = []
    for judge, r in report.items():
        acc, kappa = r["accuracy"], r["cohen_kappa"]
        head = (
            f"{judge}: accuracy {_pct(acc['estimate'])} ({r['labelled_rows']} labelled, "
            f"{r['decided_rows']} decided), Cohen's kappa {'n/a' if kappa is None else f'{kappa:.3f}'}"
        )
        if "order_consistency" in r:
            head += f", order consistency {_pct(r['order_consistency'])}"
            by_order = r["accuracy_by_order"]
            if by_order["ab"] is not None or by_order["ba"] is not None:
                head += (
                    f", accuracy by order ab {_pct(by_order['ab'])} / ba {_pct(by_order['ba'])} "
                    f"(mean {_pct(by_order['mean'])})"
                )
        lines.append(head)
        if acc["low"] is not None:
            lines.append(f"  accuracy 95 % interval {percent_interval_text(acc)}")
        lines += format_baselines(r.get("baselines") or {})
        if r.get("undecided"):
            lines.append(
                f"  accuracy on the {r['decided_rows']} decided rows {_pct(r['accuracy_decided'])}; "
                f"no verdict: {reasons_text(r['undecided'])}"
            )
        matrix: ConfusionMatrix = r["_matrix"]
        lines += ["  " + line for line in matrix.to_text().splitlines()]
    return "\n".join(lines)
