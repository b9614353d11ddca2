"""``jurist info``, ``jurist agree`` and ``jurist calibrate``: what a results file holds, and judges against
human labels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer

from jurist.analysis.calibration import fit
from jurist.analysis.human import (
    agreement_report,
    format_report,
    judges_in,
    labels_for_table,
    normalize_labels,
    parse_label_map,
)
from jurist.cli.common import fail, format_info
from jurist.engine.summary import num
from jurist.errors import JuristError
from jurist.io.parts import read_metadata, running_metadata
from jurist.io.readers import read_input
from jurist.io.writers import read_output


def agree(
    results: Annotated[Path, typer.Argument(help="A result table written by `jurist judge dataset`.")],
    labels: Annotated[
        Path | None,
        typer.Option(help="A file with human labels (e.g. an LLMBar JSON file), by row id or position."),
    ] = None,
    label_column: Annotated[
        str | None, typer.Option(help="The label column (in the results, or in --labels; default 'label').")
    ] = None,
    labels_id_column: Annotated[str | None, typer.Option(help="Row-id column of the labels file.")] = None,
    label_map: Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")] = None,
    judge: Annotated[
        list[str] | None, typer.Option(help="Only these judges (default: all in the table).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON here.")
    ] = None,
) -> None:
    """Agreement of each judge (and the panel) with human labels: accuracy, kappa, order consistency."""
    try:
        table = read_output(results)
        file_rows = read_input(labels).table if labels is not None else None
        if file_rows is None and label_column is None:
            raise JuristError("give --label-column (a column of the results) or --labels FILE")
        truth = labels_for_table(
            table, column=label_column, file_rows=file_rows, file_id_column=labels_id_column
        )
        report = agreement_report(table, truth, judges=judge, label_map=parse_label_map(label_map))
    except JuristError as exc:
        fail(exc)
    typer.echo(format_report(report))
    if json_out is not None:
        clean = {j: {k: v for k, v in r.items() if not k.startswith("_")} for j, r in report.items()}
        json_out.write_text(json.dumps(clean, indent=2, default=str) + "\n")


def calibrate(
    results: Annotated[Path, typer.Argument(help="A result table written by `jurist judge dataset`.")],
    column: Annotated[
        str, typer.Option(help="The probability column, e.g. truthfulness.judgment_p.Yes or j.p_a.")
    ],
    labels: Annotated[
        Path | None, typer.Option(help="A file with human labels, by row id or position.")
    ] = None,
    label_column: Annotated[str | None, typer.Option(help="The label column (default 'label').")] = None,
    labels_id_column: Annotated[str | None, typer.Option(help="Row-id column of the labels file.")] = None,
    label_map: Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")] = None,
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
        table = read_output(results)
        if column not in table.column_names:
            raise JuristError(f"{results} has no column {column!r}")
        judge = column.split(".", 1)[0]
        pairwise = f"{judge}.winner" in table.column_names
        file_rows = read_input(labels).table if labels is not None else None
        if file_rows is None and label_column is None:
            raise JuristError("give --label-column (a column of the results) or --labels FILE")
        raw_labels = labels_for_table(
            table, column=label_column, file_rows=file_rows, file_id_column=labels_id_column
        )
        truth = normalize_labels(raw_labels, pairwise, parse_label_map(label_map))
        wanted: Any = positive if positive is not None else ("a" if pairwise else True)
        if positive is not None and not pairwise and positive.lower() in ("true", "false", "yes", "no"):
            wanted = positive.lower() in ("true", "yes")
        outcomes = [None if t is None else t == wanted for t in truth]
        calibration = fit(
            table.column(column).to_pylist(),
            outcomes,
            method=method,  # type: ignore[arg-type]
            judge=judge,
            column=column,
            positive=str(wanted),
            fit_fraction=fit_fraction,
        )
    except JuristError as exc:
        fail(exc)
    target = out or results.with_name(results.name + ".calibration.json")
    calibration.save(target)
    for part, stats in calibration.report.items():
        before, after = num(stats["ece_before"]), num(stats["ece_after"])
        typer.echo(f"{part}: {stats['rows']} rows, ECE {before} before -> {after} after")
    typer.echo(f"saved {method} calibration of {column} (positive: {wanted}) to {target}")


def info(
    results: Annotated[
        Path, typer.Argument(help="A results file of `jurist judge dataset` (finished or running).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the metadata as JSON.")] = False,
) -> None:
    """Where a results file came from: versions, machine, input and options, every judge's config hashes
    and model (path, revision, weights fingerprint), times, and the statuses it holds."""
    try:
        finished = results.is_file()
        metadata = read_metadata(results) if finished else running_metadata(results)
    except (OSError, ValueError, pa.ArrowInvalid) as exc:
        fail(JuristError(f"{results}: cannot read its metadata: {exc}"))
    if metadata is None:
        fail(JuristError(f"{results}: no jurist results here (no metadata, and no run in progress)"))
    if json_out:
        typer.echo(json.dumps(metadata, indent=2, default=str))
        return
    typer.echo(format_info(results, metadata, finished))
    if finished:
        table = read_output(results)
        for name in judges_in(table):
            statuses = Counter(table.column(f"{name}.status").to_pylist())
            typer.echo(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
