"""``jurist estimate``, ``jurist audit`` and ``jurist report``: how far a run's verdicts can be trusted.

``estimate`` corrects each judge's mean with a random labelled sample (PPI++,
:mod:`jurist.analysis.estimate`); ``audit`` measures position and length bias, label lean, confidence and,
with labels, agreement and a keep rule's precision and recall (:mod:`jurist.analysis.audit`); ``report``
writes one self-contained HTML page of both (:mod:`jurist.report`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from jurist.analysis.evidence_text import format_audit, format_estimate
from jurist.cli.common import fail
from jurist.cli.options import JsonOpt, ResultsArg, label_options
from jurist.errors import JuristError
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource

JudgeOpt = Annotated[list[str] | None, typer.Option(help="Only these judges (default: all in the table).")]
ConfidenceOpt = Annotated[float, typer.Option(help="The intervals' confidence level.")]


@label_options(required=True)
def estimate(
    results: ResultsArg,
    labels: LabelSource,
    judge: JudgeOpt = None,
    column: Annotated[
        str | None, typer.Option(help="Estimate from this column of the judge (default: its score).")
    ] = None,
    confidence: ConfidenceOpt = 0.95,
    by: Annotated[str | None, typer.Option(help="One estimate per group of this column.")] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(help="Two groups of --by to compare (repeat: --compare A --compare B)."),
    ] = None,
    agreement: Annotated[
        bool,
        typer.Option(
            "--agreement",
            help="Estimate the share of verdicts that agree with the label (of the rows with a verdict), "
            "from the judge's confidence (--column, default its confidence column): a cascade's agreement.",
        ),
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """The PPI++ estimate of the mean human label (a score's mean, a label's share, a pairwise win rate)
    from each judge's verdicts on every row and a labelled sample, beside the judge-only and labels-only
    means and the effective number of labels gained; with --agreement, of the judge's agreement with the
    labels. Rows without a score or verdict (failed, abstained) are left out and counted. The labelled rows
    must be a random sample of the judged rows (PPI's guarantee rests on it); labels join by row id as in
    `jurist agree` (--verdicts: a bigger judge's verdicts as the labels). Labels that `jurist label` chose
    with unequal probabilities (--strategy active) are weighted by the inverse of the probability recorded
    with each, which keeps the interval valid."""
    from jurist.analysis.estimate import estimate_judge  # scipy: loaded by the commands that use it

    try:
        table = ResultTable.open(results)
        names = _judges(table, judge, column)
        truth, chances = labels.for_results(table)
        report = {
            name: estimate_judge(
                table,
                name,
                truth,
                column=column,
                confidence=confidence,
                by=by,
                compare=compare or (),
                agreement=agreement,
                probabilities=chances,
            )
            for name in names
        }
    except JuristError as exc:
        fail(exc)
    for name, r in report.items():
        if "warning" in r["overall"]:
            typer.echo(f"warning: {name}: {r['overall']['warning']}", err=True)
    typer.echo(json.dumps(report, indent=2) if json_out else format_estimate(report))


@label_options()
def audit(
    results: ResultsArg,
    labels: LabelSource | None = None,
    judge: JudgeOpt = None,
    response_column: Annotated[
        str | None, typer.Option(help="The judged response (default: response, output, answer, completion).")
    ] = None,
    tokens_column: Annotated[
        str | None,
        typer.Option(help="A token count of the judged response (default: <response>_tokens if present)."),
    ] = None,
    where: Annotated[
        list[str] | None, typer.Option(help="A keep rule, as `jurist filter --where` (with its gates).")
    ] = None,
    good_at: Annotated[
        float, typer.Option(help="A row is good when its label's value is at least this (yes = 1, a = 1).")
    ] = 1.0,
    confidence: ConfidenceOpt = 0.95,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    json_out: JsonOpt = False,
) -> None:
    """Each judge's biases and agreement: position (pairwise), length, label lean, confidence, and with
    labels accuracy, kappa and a keep rule's precision and recall, each with an interval."""
    from jurist.analysis.audit import audit_judge, default_responses

    try:
        table = ResultTable.open(results)
        names = _judges(table, judge, None)
        truth = None if labels is None else labels.for_results(table).labels
        report = {}
        for name in names:
            options = default_responses(table, table.judge(name))
            if response_column is not None:
                table.require(response_column)
                options = replace(options, response=response_column)
            table.require(tokens_column)
            options = replace(
                options,
                tokens=tokens_column or options.tokens,
                where=tuple(where or ()),
                good_at=good_at,
                confidence=confidence,
                seed=seed,
            )
            report[name] = audit_judge(table, name, truth, options)
    except JuristError as exc:
        fail(exc)
    typer.echo(json.dumps(report, indent=2, default=str) if json_out else format_audit(report))


@label_options()
def report(
    results: ResultsArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML report.")],
    labels: LabelSource | None = None,
    judge: JudgeOpt = None,
    confidence: ConfidenceOpt = 0.95,
    worst: Annotated[int, typer.Option(help="How many least confident or failed rows to show.")] = 20,
    compare_with: Annotated[
        Path | None,
        typer.Option(help="A second result table over the same rows: a section comparing the two judges."),
    ] = None,
    compare_judge: Annotated[
        str | None,
        typer.Option(
            help="The judge of --compare-with (default: the same name as the first judge, or its only)."
        ),
    ] = None,
) -> None:
    """One self-contained HTML page (plots embedded, no scripts, no network): provenance, statuses, each
    judge's score distribution, the audit's figures, the corrected estimates, throughput and the least
    confident or failed rows; with --compare-with, the first judge against one of the other table's, as
    `jurist compare` shows it (flips with their rows, agreement, McNemar, with labels which is better)."""
    from jurist.report.build import ReportOptions, write_report

    try:
        options = ReportOptions(
            labels=labels,
            judges=tuple(judge or ()),
            confidence=confidence,
            worst=worst,
            compare_with=compare_with,
            compare_judge=compare_judge,
        )
        written = write_report(results, output, options)
    except JuristError as exc:
        fail(exc)
    typer.echo(f"wrote {output} ({written / 1e6:.2f} MB)")


def _judges(table: ResultTable, judge: list[str] | None, column: str | None) -> list[str]:
    """The judges to report on: those named, the owner of ``column``, or every judge in the table."""
    if judge:
        for name in judge:
            table.judge(name)
        return list(judge)
    if column is not None:
        table.require(column)
        owner = table.owner(column)
        if owner is None:
            raise JuristError(f"column {column!r} belongs to no judge: name one with --judge")
        return [owner.name]
    if not table.judges:
        raise JuristError("the results hold no judge columns")
    return table.names
