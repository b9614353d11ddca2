"""Two judges compared on the same rows: what changed, how much they agree, and with labels which is better.

:func:`compare_tables` takes two result tables over the same rows (two judge models, or one judge before
and after a prompt change) and one judge of each. Rows are matched on ``row_id``; a row whose status is not
``ok`` on either side (or that has no verdict) is counted by why and not compared. On the compared rows:

* ``flips``: each change of verdict from A to B (``yes -> no``), with its rows; a pairwise judge's
  ``inconclusive`` is a verdict here like ``a``, ``b`` and ``tie`` (a prompt change that makes a judge
  inconclusive is a change worth seeing), and counts as wrong against a label;
* ``agreement``: the share of rows with the same verdict (Wilson interval) and Cohen's kappa, the verdicts
  taken as categories, with the large-sample standard error of Fleiss, Cohen and Everitt (1969) written as
  the delta method's per-row influence (:func:`jurist.stats.paired.kappa_interval`);
* ``mcnemar``: with two verdict values, McNemar's test of whether one judge gives the first value more
  often than the other (:func:`jurist.stats.paired.mcnemar`: exact binomial below 25 discordant
  rows, else the continuity corrected chi-square);
* numeric verdicts: the mean difference A - B with its paired t interval
  (:func:`jurist.stats.paired.paired_difference`); the ``score`` columns too, where both judges have
  one.

With labels (one per row of table A, None where unlabelled; the labelled rows must be a random sample of
the rows, as for ``jurist estimate``): each judge's accuracy on the labelled compared rows, beside the
baselines on the same rows (:mod:`jurist.stats.baselines`: the majority label and, for pairwise judges,
the first-shown answer), McNemar's test on who is right where only one is, and the difference of the
accuracies over all compared rows, ``delta = mean_i d_i`` with ``d_i = 1[A right on i] - 1[B right on i]``.

The estimate and why it is built so: :func:`jurist.stats.paired.accuracy_difference`.

Which judge is better (``conclusion``) is said only when the accuracy interval excludes 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pyarrow as pa

from jurist.analysis.outcomes import row_reasons
from jurist.errors import InputError
from jurist.io.results import PANEL, JudgeColumns, ResultTable
from jurist.labels.sampling import confidences
from jurist.labels.vocabulary import BOOL_LABELS, PAIRWISE_LABELS
from jurist.stats.baselines import baselines
from jurist.stats.paired import accuracy_difference, kappa_interval, mcnemar, paired_difference
from jurist.stats.share import Share

SIDES = ("A", "B")


# ---------------------------------------------------------------------------------------- the two tables
def choose_judge(results: ResultTable, name: str | None, side: str, source: str) -> JudgeColumns:
    """The judge of ``results`` to compare: the one named, or the table's only judge (a cascade's stages
    left out); an :class:`InputError` naming the file and its judges when the name is not there or when
    the table holds several and none is named."""
    where = source if source == side else f"{source} ({side})"
    if name is not None:
        try:
            return results.judge(name)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    stages = results.cascade_stages
    candidates = [j for j in results.judges if j.name not in stages]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise InputError(f"{where} holds no judge columns")
    names = ", ".join(j.name for j in candidates)
    raise InputError(
        f"{where} holds several judges ({names}): name one "
        f"(jurist compare: --judge-{side.lower()} NAME, or --judge NAME for both tables)"
    )


def match_rows(a: ResultTable, b: ResultTable, sources: tuple[str, str] = SIDES) -> list[int]:
    """For each row of ``a``, the position of the row of ``b`` with the same ``row_id``; an
    :class:`InputError` naming the counts and a few ids when the two tables are not over the same rows."""
    ids: list[list[str]] = []
    for table, source in zip((a, b), sources, strict=True):
        if table.id_column is None:
            raise InputError(f"{source} has no row_id column to match its rows on")
        values = [str(v) for v in table.values(table.id_column)]
        repeated = [v for v, count in Counter(values).items() if count > 1]
        if repeated:
            raise InputError(
                f"{source} holds row ids more than once ({_few(repeated)}): its rows cannot be matched"
            )
        ids.append(values)
    position = {v: i for i, v in enumerate(ids[1])}
    only_a = [v for v in ids[0] if v not in position]
    if only_a or len(ids[0]) != len(ids[1]):
        held = set(ids[0])
        only_b = [v for v in ids[1] if v not in held]
        raise InputError(
            f"{sources[0]} ({len(ids[0])} rows) and {sources[1]} ({len(ids[1])} rows) are not over the same "
            f"rows: {len(only_a)} row ids of A are not in B ({_few(only_a)}) and {len(only_b)} of B are "
            f"not in A ({_few(only_b)}); compare two runs over the same input"
        )
    return [position[v] for v in ids[0]]


def verdict_type(results: ResultTable, judge: JudgeColumns) -> str:
    """What a judge's verdicts are: ``pairwise`` (a, b, tie), ``bool``, ``number`` (INT or FLOAT
    judgments), ``label`` (ENUM) or ``text``; from its config in the run metadata, else from the verdict
    column's type."""
    if judge.pairwise or (judge.kind == PANEL and any(j.pairwise for j in results.judges)):
        return "pairwise"
    declared = (_judge_params(results, judge) or {}).get("judgment_type")
    named = {"BOOL": "bool", "INT": "number", "FLOAT": "number", "ENUM": "label", "TEXT": "text"}
    if declared in named:
        return named[str(declared)]
    column = results.table.schema.field(judge.verdict).type
    if pa.types.is_boolean(column):
        return "bool"
    if pa.types.is_integer(column) or pa.types.is_floating(column):
        return "number"
    return "label"


def _judge_params(results: ResultTable, judge: JudgeColumns) -> Mapping[str, Any] | None:
    for entry in results.metadata.get("judges") or ():
        if isinstance(entry, Mapping) and entry.get("name") == judge.name:
            params = (entry.get("config") or {}).get("judge_params")
            return params if isinstance(params, Mapping) else None
    return None


def _enum_labels(results: ResultTable, judge: JudgeColumns) -> set[str] | None:
    scores = (_judge_params(results, judge) or {}).get("judgment_scores")
    return {str(k) for k in scores} if isinstance(scores, Mapping) and scores else None


def _few(values: Sequence[str], count: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:count])
    return (
        "none" if not values else shown + (f", ... {len(values) - count} more" if len(values) > count else "")
    )


def verdict_text(value: Any) -> str:
    """A verdict as the text reports show: yes/no for booleans, numbers short, none for None."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _side(
    results: ResultTable, judge: JudgeColumns, order: Sequence[int] | None
) -> tuple[list[Any], list[str], list[float | None], list[float | None] | None]:
    """(verdicts, why a row has none or ``ok``, confidences, scores), in ``order`` (default: the table's)."""
    verdicts = results.values(judge.verdict)
    reasons = [
        "no verdict" if reason == "ok" and verdict is None else reason
        for reason, verdict in zip(row_reasons(results, judge, "ok"), verdicts, strict=True)
    ]
    conf = confidences(results, judge) or [None] * results.num_rows
    scores = (
        [None if s is None else float(s) for s in results.values(judge.score)] if judge.has("score") else None
    )
    pick = range(results.num_rows) if order is None else order
    return (
        [verdicts[i] for i in pick],
        [reasons[i] for i in pick],
        [conf[i] for i in pick],
        None if scores is None else [scores[i] for i in pick],
    )


def _truth(
    labels: Sequence[Any], kind: str, vocabulary: set[str] | None, row_ids: Sequence[str], judges: str
) -> list[Any]:
    """Labels in the verdicts' vocabulary; an :class:`InputError` naming the row and the label for a label
    no verdict of this type could equal."""
    expected = {
        "pairwise": "a, b or tie (or LLMBar's 1 and 2)",
        "bool": "yes or no (true/false, 1/0)",
        "number": "a number",
    }.get(kind, ", ".join(sorted(vocabulary or ())))
    out: list[Any] = []
    for row_id, label in zip(row_ids, labels, strict=True):
        if label is None:
            out.append(None)
            continue
        key = str(label).strip()
        value: Any
        if kind == "pairwise":
            value = PAIRWISE_LABELS.get(key.lower())
        elif kind == "bool":
            value = label if isinstance(label, bool) else BOOL_LABELS.get(key.lower())
        elif kind == "number":
            try:
                value = float(key)
            except ValueError:
                value = None
            value = value if value is not None and math.isfinite(value) else None
        else:
            value = key if vocabulary is None or key in vocabulary else None
        if value is None:
            raise InputError(
                f"label {label!r} of row {row_id} is not a verdict of {judges}: expected {expected}"
            )
        out.append(value)
    return out


def compare_tables(
    a: ResultTable,
    b: ResultTable,
    *,
    judge_a: str | None = None,
    judge_b: str | None = None,
    labels: Sequence[Any] | None = None,
    confidence: float = 0.95,
    sources: tuple[str, str] = SIDES,
) -> dict[str, Any]:
    """Judge ``judge_a`` of table ``a`` against ``judge_b`` of table ``b`` on their common rows (see the
    module); ``labels``: one raw label per row of ``a`` (None where unlabelled), already mapped
    (``--label-map``). ``sources`` name the tables in messages and in the result."""
    if not 0 < confidence < 1:
        raise InputError(f"the confidence must lie between 0 and 1, not {confidence}")
    first, second = choose_judge(a, judge_a, "A", sources[0]), choose_judge(b, judge_b, "B", sources[1])
    kind, kind_b = verdict_type(a, first), verdict_type(b, second)
    if kind != kind_b:
        raise InputError(
            f"judge {first.name!r} of {sources[0]} gives {kind} verdicts and judge {second.name!r} of "
            f"{sources[1]} gives {kind_b} verdicts: they cannot be compared"
        )
    order = match_rows(a, b, sources)
    verdicts_a, reasons_a, conf_a, scores_a = _side(a, first, None)
    verdicts_b, reasons_b, conf_b, scores_b = _side(b, second, order)
    ids = [str(v) for v in a.values("row_id")]
    both = [i for i in range(a.num_rows) if reasons_a[i] == "ok" and reasons_b[i] == "ok"]
    skipped = Counter(
        ", ".join(
            f"{side} {r}" for side, r in zip(SIDES, (reasons_a[i], reasons_b[i]), strict=True) if r != "ok"
        )
        for i in range(a.num_rows)
        if reasons_a[i] != "ok" or reasons_b[i] != "ok"
    )
    va, vb = [verdicts_a[i] for i in both], [verdicts_b[i] for i in both]
    same = sum(x == y for x, y in zip(va, vb, strict=True))
    kappa = kappa_interval(va, vb, confidence)
    report: dict[str, Any] = {
        "a": {"source": sources[0], "judge": first.name, "kind": first.kind},
        "b": {"source": sources[1], "judge": second.name, "kind": second.kind},
        "verdicts": kind,
        "confidence": confidence,
        "rows": a.num_rows,
        "compared_rows": len(both),
        "not_compared": dict(skipped.most_common()),
        "same_verdict_rows": same,
        "flips": flips(va, vb, [ids[i] for i in both]),
        "verdict_counts": {
            side: {verdict_text(v): c for v, c in Counter(values).most_common()}
            for side, values in zip(SIDES, (va, vb), strict=True)
        },
        "agreement": {
            "percent": Share(same, len(both), confidence).as_dict(),
            "cohen_kappa": None if kappa is None else asdict(kappa),
        },
        "mcnemar": _verdict_mcnemar(va, vb),
    }
    if kind == "number":
        report["verdict_difference"] = paired_difference(va, vb, confidence)
    if scores_a is not None and scores_b is not None:
        pairs = [(x, y) for i in both if (x := scores_a[i]) is not None and (y := scores_b[i]) is not None]
        report["score_difference"] = paired_difference(
            [x for x, _ in pairs], [y for _, y in pairs], confidence
        )
    if labels is not None:
        if len(labels) != a.num_rows:
            raise ValueError(f"{len(labels)} labels for {a.num_rows} rows")
        vocabulary = None
        if kind == "label":
            found = [_enum_labels(a, first), _enum_labels(b, second)]
            known = [v for v in found if v is not None]
            vocabulary = set().union(*known) if known else None
        judges = (
            f"judge {first.name!r} or {second.name!r}"
            if first.name != second.name
            else f"judge {first.name!r}"
        )
        truth = _truth(labels, kind, vocabulary, ids, judges)
        if not any(t is not None for t in truth):
            raise InputError("no result row has a label")
        predicted = [0.0 if x is None or y is None else x - y for x, y in zip(conf_a, conf_b, strict=True)]
        report["labels"] = _with_labels(both, verdicts_a, verdicts_b, truth, predicted, confidence)
        labelled = [truth[i] for i in both if truth[i] is not None]
        report["labels"]["baselines"] = {
            b.name: b.as_dict() for b in baselines(labelled, pairwise=kind == "pairwise")
        }
        report["labels"]["prediction"] = (
            "confidences" if any(conf_a[i] is not None and conf_b[i] is not None for i in both) else "none"
        )
    report["conclusion"] = conclusion(report)
    return report


def flips(before: Sequence[Any], after: Sequence[Any], row_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each change of verdict from ``before`` to ``after``, most rows first: its verdicts, its row count
    and its row ids (in row order)."""
    rows: dict[tuple[Any, Any], list[str]] = {}
    for x, y, row_id in zip(before, after, row_ids, strict=True):
        if x != y:
            rows.setdefault((x, y), []).append(row_id)
    ordered = sorted(
        rows.items(), key=lambda item: (-len(item[1]), verdict_text(item[0][0]), verdict_text(item[0][1]))
    )
    return [{"from": x, "to": y, "rows": len(members), "row_ids": members} for (x, y), members in ordered]


def _verdict_mcnemar(va: Sequence[Any], vb: Sequence[Any]) -> dict[str, Any] | None:
    """McNemar's test of whether one judge gives the first of exactly two verdict values more often."""
    values = sorted({*va, *vb}, key=lambda v: (v is not True, verdict_text(v)))
    if len(values) != 2:
        return None
    value = values[0]
    only_a = sum(x == value and y != value for x, y in zip(va, vb, strict=True))
    only_b = sum(y == value and x != value for x, y in zip(va, vb, strict=True))
    rows = len(va)
    return {
        "value": verdict_text(value),
        "share_a": sum(x == value for x in va) / rows,
        "share_b": sum(y == value for y in vb) / rows,
        **mcnemar(only_a, only_b),
    }


def _with_labels(
    both: Sequence[int],
    verdicts_a: Sequence[Any],
    verdicts_b: Sequence[Any],
    truth: Sequence[Any],
    predicted: Sequence[float],
    confidence: float,
) -> dict[str, Any]:
    """Accuracies, McNemar on who is right, and the accuracy difference over the compared rows."""
    compared = set(both)
    labelled = [i for i in both if truth[i] is not None]
    right_a = [verdicts_a[i] == truth[i] for i in labelled]
    right_b = [verdicts_b[i] == truth[i] for i in labelled]
    d = np.full(len(both), np.nan)
    where = {row: k for k, row in enumerate(both)}
    for i, x, y in zip(labelled, right_a, right_b, strict=True):
        d[where[i]] = float(x) - float(y)
    differs = [verdicts_a[i] != verdicts_b[i] for i in both]
    return {
        "labelled_rows": len(labelled),
        "labelled_not_compared": sum(t is not None and i not in compared for i, t in enumerate(truth)),
        "accuracy_a": Share.of(right_a, confidence).as_dict(),
        "accuracy_b": Share.of(right_b, confidence).as_dict(),
        "mcnemar": mcnemar(
            sum(x and not y for x, y in zip(right_a, right_b, strict=True)),
            sum(y and not x for x, y in zip(right_a, right_b, strict=True)),
        ),
        "difference": accuracy_difference(differs, d, [predicted[i] for i in both], confidence),
    }


def conclusion(report: Mapping[str, Any]) -> str:
    """Which judge is better and how sure, in one sentence (only when the accuracy interval excludes 0)."""
    level = round(100 * report["confidence"])
    found = report.get("labels")
    if found is None:
        return "without labels, which judge is better is not known (give --labels)"
    difference = found["difference"]
    ppi = difference["ppi"]
    if ppi is None:
        return f"which judge is better is not known: {difference.get('reason')}"
    p = found["mcnemar"]["p_value"]
    tested = f"McNemar p = {p:.3g} on {found['labelled_rows']} labelled rows"
    if ppi["low"] > 0 or ppi["high"] < 0:
        better, sign = ("A", 1) if ppi["low"] > 0 else ("B", -1)
        low, high = sorted((sign * ppi["low"], sign * ppi["high"]))
        return (
            f"{better} is better: accuracy {100 * sign * ppi['estimate']:+.1f} points "
            f"({level} % CI {100 * low:+.1f} to {100 * high:+.1f}), {tested}"
        )
    return (
        f"no detectable difference in accuracy at {level} %: A - B {100 * ppi['estimate']:+.1f} points "
        f"({level} % CI {100 * ppi['low']:+.1f} to {100 * ppi['high']:+.1f}), {tested}"
    )
