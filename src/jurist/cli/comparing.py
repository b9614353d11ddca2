"""``jurist compare A B``: two judges on the same rows (two judge models, or one judge before and after a
prompt change), the verdicts that flipped, how much they agree and, with labels, which is better
(:mod:`jurist.analysis.compare`)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from jurist.analysis.evidence_text import format_comparison
from jurist.cli.common import fail
from jurist.cli.options import JsonOpt, label_options
from jurist.errors import JuristError
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource

ShownOpt = Annotated[int, typer.Option(min=0, help="How many row ids the text shows per flip (JSON: all).")]


@label_options()
def compare(
    results_a: Annotated[
        str, typer.Argument(help="The first result table (A): a file or a results dataset.")
    ],
    results_b: Annotated[str, typer.Argument(help="The second result table (B), over the same rows.")],
    judge: Annotated[
        str | None, typer.Option(help="The judge to compare in both tables (default: each table's only one).")
    ] = None,
    judge_a: Annotated[str | None, typer.Option(help="The judge of A (overrides --judge).")] = None,
    judge_b: Annotated[str | None, typer.Option(help="The judge of B (overrides --judge).")] = None,
    labels: LabelSource | None = None,
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
        truth = None if labels is None else labels.for_results(first, held_only=True).labels
        report = compare_tables(
            first,
            second,
            judge_a=judge_a or judge,
            judge_b=judge_b or judge,
            labels=truth,
            confidence=confidence,
            sources=(str(results_a), str(results_b)),
        )
    except JuristError as exc:
        fail(exc)
    warning = (report.get("labels") or {}).get("difference", {}).get("warning")
    if warning:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(json.dumps(report, indent=2) if json_out else format_comparison(report, shown))
