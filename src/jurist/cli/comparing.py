"""``jurist compare A B``: two judges on the same rows (two judge models, or one judge before and after a
prompt change), the verdicts that flipped, how much they agree and, with labels, which is better
(:mod:`jurist.analysis.compare`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.analysis.labels import apply_label_map, label_ids
from jurist.analysis.text import interval_text as _ci
from jurist.analysis.text import number_text as _num
from jurist.cli.common import fail
from jurist.cli.labelling import LabelColumnOpt, LabelMapOpt, LabelsIdOpt, LabelsOpt, read_labels
from jurist.cli.options import JsonOpt
from jurist.errors import InputError, JuristError
from jurist.io.readers import read_input
from jurist.io.results import ResultTable

ShownOpt = Annotated[int, typer.Option(min=0, help="How many row ids the text shows per flip (JSON: all).")]


def compare(
    results_a: Annotated[Path, typer.Argument(help="The first result table (A).")],
    results_b: Annotated[Path, typer.Argument(help="The second result table (B), over the same rows.")],
    judge: Annotated[
        str | None, typer.Option(help="The judge to compare in both tables (default: each table's only one).")
    ] = None,
    judge_a: Annotated[str | None, typer.Option(help="The judge of A (overrides --judge).")] = None,
    judge_b: Annotated[str | None, typer.Option(help="The judge of B (overrides --judge).")] = None,
    labels: LabelsOpt = None,
    label_column: LabelColumnOpt = None,
    labels_id_column: LabelsIdOpt = None,
    label_map: LabelMapOpt = None,
    confidence: Annotated[float, typer.Option(help="The intervals' confidence level.")] = 0.95,
    shown: ShownOpt = 10,
    json_out: JsonOpt = False,
) -> None:
    """Two judges on the same rows, matched by row_id: each verdict flip from A to B with its rows, their
    agreement (percent, Cohen's kappa) and McNemar's test; for numeric verdicts and scores the mean
    difference. With labels (as `jurist estimate` takes them; a random sample of the rows), each judge's
    accuracy and the difference of their accuracies with a PPI++ interval, and which judge is better.
    Rows whose status is not ok on either side are counted, not compared."""
    from jurist.analysis.compare import compare_tables  # scipy: loaded by the commands that use it

    try:
        first, second = ResultTable.open(results_a), ResultTable.open(results_b)
        truth = read_labels(first, labels, label_column, labels_id_column, required=False)
        if labels is not None:
            check_label_rows(first, labels, labels_id_column)
        report = compare_tables(
            first,
            second,
            judge_a=judge_a or judge,
            judge_b=judge_b or judge,
            labels=None if truth is None else apply_label_map(truth, label_map),
            confidence=confidence,
            sources=(str(results_a), str(results_b)),
        )
    except JuristError as exc:
        fail(exc)
    warning = (report.get("labels") or {}).get("difference", {}).get("warning")
    if warning:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(json.dumps(report, indent=2) if json_out else format_comparison(report, shown))


def check_label_rows(results: ResultTable, labels: Path, id_column: str | None) -> None:
    """Refuse a labels file with labels for rows the results do not hold: ids (``id_column``, the file's
    ``row_id`` column, or the row positions 0, 1, ..., as :func:`~jurist.analysis.labels.join_labels`
    matches them) that are not among the results' row ids."""
    ids, how = label_ids(read_input(labels).table, id_column, str(labels))
    held = {str(v) for v in results.values("row_id")}
    unknown = [v for v in ids if v not in held]
    if unknown:
        shown = ", ".join(repr(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise InputError(
            f"{labels}: {len(unknown)} of its {len(ids)} labels (matched by {how}) are for rows the results "
            f"do not hold (ids {shown}; the results have {results.num_rows} rows)"
        )


def _ids(ids: Sequence[str], shown: int) -> str:
    if shown == 0 or not ids:
        return ""
    more = f", ... {len(ids) - shown} more" if len(ids) > shown else ""
    return f" [{', '.join(ids[:shown])}{more}]"


def _pct(share: Mapping[str, Any]) -> str:
    if share.get("estimate") is None:
        return "n/a"
    return f"{100 * share['estimate']:.1f} % [{100 * share['low']:.1f}, {100 * share['high']:.1f}]"


def _difference(label: str, d: Mapping[str, Any] | None) -> str | None:
    if d is None:
        return None
    return (
        f"{label}: mean A {_num(d['mean_a'])}, B {_num(d['mean_b'])}; A - B {_ci(d['difference'])} "
        f"({d['rows']} rows, paired t)"
    )


def format_comparison(report: Mapping[str, Any], shown: int = 10) -> str:
    """The comparison as text: what changed, the agreement, and with labels which judge is better."""
    from jurist.analysis.compare import verdict_text

    a, b = report["a"], report["b"]
    level = round(100 * report["confidence"])
    lines = [
        f"A: {a['source']}, judge {a['judge']} ({a['kind']})",
        f"B: {b['source']}, judge {b['judge']} ({b['kind']})",
        f"{report['rows']} rows matched on row_id, {report['compared_rows']} compared"
        + (
            "; not compared: " + ", ".join(f"{why} {n}" for why, n in report["not_compared"].items())
            if report["not_compared"]
            else ""
        ),
    ]
    agreement = report["agreement"]
    lines.append(
        f"same verdict on {report['same_verdict_rows']} rows: {_pct(agreement['percent'])} ({level} %); "
        f"Cohen's kappa {_ci(agreement['cohen_kappa'])}"
    )
    flipped = sum(f["rows"] for f in report["flips"])
    lines.append(f"flips from A to B: {flipped} rows" + (":" if flipped else ""))
    for flip in report["flips"]:
        lines.append(
            f"  {verdict_text(flip['from'])} -> {verdict_text(flip['to'])}: {flip['rows']} rows"
            + _ids(flip["row_ids"], shown)
        )
    counts = report["verdict_counts"]
    lines.append(
        "verdicts: "
        + "; ".join(
            f"{side} " + ", ".join(f"{v} {n}" for v, n in counts[side].items()) for side in ("A", "B")
        )
    )
    test = report.get("mcnemar")
    if test:
        lines.append(
            f"McNemar ({test['value']}): A {100 * test['share_a']:.1f} % of rows, "
            f"B {100 * test['share_b']:.1f} %; "
            f"p = {test['p_value']:.3g} ({test['method']}; {test['only_a']} rows {test['value']} by A only, "
            f"{test['only_b']} by B only)"
        )
    for key, label in (("verdict_difference", "verdict"), ("score_difference", "score")):
        line = _difference(label, report.get(key))
        if line:
            lines.append(line)
    found = report.get("labels")
    if found:
        lines += _label_lines(found)
    lines.append(report["conclusion"])
    return "\n".join(lines)


def _share(base: Mapping[str, Any]) -> dict[str, Any]:
    """A baseline (:mod:`jurist.analysis.baselines`) as the share-with-interval the percentages print."""
    low, high = base["interval"] or (None, None)
    return {"estimate": base["accuracy"], "low": low, "high": high}


def _label_lines(found: Mapping[str, Any]) -> list[str]:
    d = found["difference"]
    lines = [
        f"labels: {found['labelled_rows']} labelled rows compared"
        + (
            f" ({found['labelled_not_compared']} more not compared)" if found["labelled_not_compared"] else ""
        ),
        f"  accuracy A {_pct(found['accuracy_a'])}, B {_pct(found['accuracy_b'])}",
    ]
    for name, base in (found.get("baselines") or {}).items():
        lines.append(f"  baseline {name} ({base['rule']}) on the same rows: {_pct(_share(base))}")
    if d["ppi"] is not None:
        effective = d.get("effective_labels")
        lines.append(
            f"  A - B accuracy over all {d['rows']} compared rows: PPI++ {_ci(d['ppi'])} "
            f"(the verdicts differ on {d['differing_rows']} rows, {d['labelled_differing_rows']} of them "
            f"labelled; prediction: {found['prediction']}, lambda {_num(d['lambda'], 2)}"
            + (f", effective labels {_num(effective, 0)}" if effective is not None else "")
            + ")"
        )
    if d["labels_only"] is not None:
        lines.append(f"  A - B on the labelled rows alone: {_ci(d['labels_only'])}")
    test = found["mcnemar"]
    lines.append(
        f"  McNemar on who is right: A only {test['only_a']}, B only {test['only_b']}, "
        f"p = {test['p_value']:.3g} ({test['method']})"
    )
    return lines
