"""``jurist info``, ``jurist agree`` and ``jurist calibrate``: what a results file holds, and judges against
human labels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer

from jurist.analysis.human import agreement_report, format_report
from jurist.analysis.outcomes import reasoning_counts
from jurist.cli.common import fail
from jurist.cli.options import JsonOpt, ResultsArg, label_options
from jurist.engine.run_text import format_info
from jurist.engine.summary import num
from jurist.errors import JuristError
from jurist.io.dataset import dataset_metadata, is_results_dataset
from jurist.io.parts import read_metadata, running_metadata
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.labels.vocabulary import is_pairwise, normalize_labels
from jurist.stats.calibration import fit


@label_options(required=True)
def agree(
    results: ResultsArg,
    labels: LabelSource,
    judge: Annotated[
        list[str] | None, typer.Option(help="Only these judges (default: all in the table).")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Agreement of each judge (and the panel) with human labels, or with another run's verdicts
    (--verdicts): accuracy, kappa, order consistency."""
    try:
        table = ResultTable.open(results)
        report = agreement_report(table, labels.for_results(table).labels, judges=judge)
    except JuristError as exc:
        fail(exc)
    if json_out:
        clean = {j: {k: v for k, v in r.items() if not k.startswith("_")} for j, r in report.items()}
        typer.echo(json.dumps(clean, indent=2, default=str))
    else:
        typer.echo(format_report(report))


@label_options(required=True)
def calibrate(
    results: ResultsArg,
    column: Annotated[
        str, typer.Option(help="The probability column, e.g. truthfulness.judgment_p.Yes or j.p_a.")
    ],
    labels: LabelSource,
    positive: Annotated[
        str | None, typer.Option(help="The label value that counts as positive (default: a / true).")
    ] = None,
    method: Annotated[str, typer.Option(help="isotonic or platt")] = "isotonic",
    fit_fraction: Annotated[
        float, typer.Option(help="Share of labelled rows to fit on; the rest is held out.")
    ] = 0.5,
    out: Annotated[
        Path | None, typer.Option(help="Where to save (default: <results>.calibration.json).")
    ] = None,
) -> None:
    """Fit an isotonic or Platt map from a probability column to human labels; report ECE before/after."""
    try:
        table = ResultTable.open(results)
        table.require(column)
        owner = table.owner(column)
        judge = owner.name if owner is not None else column.split(".", 1)[0]
        pairwise = owner is not None and is_pairwise(table, owner)
        truth = normalize_labels(labels.for_results(table).labels, pairwise)
        wanted: Any = positive if positive is not None else ("a" if pairwise else True)
        if positive is not None and not pairwise and positive.lower() in ("true", "false", "yes", "no"):
            wanted = positive.lower() in ("true", "yes")
        outcomes = [None if t is None else t == wanted for t in truth]
        calibration = fit(
            table.values(column),
            outcomes,
            method=method,  # type: ignore[arg-type]
            judge=judge,
            column=column,
            positive=str(wanted),
            fit_fraction=fit_fraction,
        )
    except JuristError as exc:
        fail(exc)
    target = out or Path(results.rstrip("/") + ".calibration.json")
    calibration.save(target)
    for part, stats in calibration.report.items():
        before, after = num(stats["ece_before"]), num(stats["ece_after"])
        typer.echo(f"{part}: {stats['rows']} rows, ECE {before} before -> {after} after")
    typer.echo(f"saved {method} calibration of {column} (positive: {wanted}) to {target}")


def info(
    results: Annotated[
        str,
        typer.Argument(
            help="A results file or results dataset of `jurist judge dataset` (finished or running)."
        ),
    ],
    json_out: JsonOpt = False,
) -> None:
    """Where a results file (or results dataset) came from: versions, machine, input and options, every
    judge's config hashes and model (path, revision, weights fingerprint), times, and the statuses it
    holds."""
    try:
        metadata: dict[str, Any] | None
        if is_results_dataset(results):
            finished, metadata = dataset_metadata(results)
        else:
            finished = Path(results).is_file()
            metadata = read_metadata(Path(results)) if finished else running_metadata(Path(results))
    except (OSError, ValueError, pa.ArrowInvalid) as exc:
        fail(JuristError(f"{results}: cannot read its metadata: {exc}"))
    if metadata is None:
        fail(JuristError(f"{results}: no jurist results here (no metadata, and no run in progress)"))
    if json_out:
        typer.echo(json.dumps(metadata, indent=2, default=str))
        return
    typer.echo(format_info(results, metadata, finished))
    if finished:
        try:
            table = ResultTable.open(results)
        except JuristError as exc:
            fail(exc)
        for judge in table.judges:
            if not judge.has("status"):
                continue
            statuses = Counter(table.values(judge.status))
            typer.echo(f"  {judge.name}: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
            thought = reasoning_counts(table, judge)
            if thought is not None:
                typer.echo(
                    f"    reasoning cut by the budget: {thought['cut_rows']} of {thought['rows']} rows; "
                    f"{thought['tokens_per_row'] or 0.0:.1f} reasoning tokens per row"
                )
