"""The label options that ``jurist agree``, ``calibrate``, ``estimate``, ``audit`` and ``report`` share, and
reading the labels they name (:func:`jurist.analysis.labels.join_labels`) and the probabilities a sampling
plan recorded with them (:func:`jurist.analysis.labels.join_probabilities`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.analysis.labels import join_labels, join_probabilities
from jurist.errors import JuristError
from jurist.io.readers import read_input
from jurist.io.results import ResultTable

LabelsOpt = Annotated[
    Path | None,
    typer.Option(help="A file with human labels (e.g. an LLMBar JSON file), by row id or position."),
]
LabelColumnOpt = Annotated[
    str | None, typer.Option(help="The label column (in the results, or in --labels; default 'label').")
]
LabelsIdOpt = Annotated[
    str | None,
    typer.Option(
        help="Row-id column of the labels file (default: its row_id column, as `jurist label` writes, or "
        "else its row positions 0, 1, ...)."
    ),
]
LabelMapOpt = Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")]


def read_labels(
    results: ResultTable,
    labels: Path | None,
    label_column: str | None,
    labels_id_column: str | None,
    *,
    required: bool = True,
) -> list[Any] | None:
    """One raw label per result row (None where a row has none), from --labels or --label-column; None
    when neither is given and labels are optional."""
    if labels is None and label_column is None and not required:
        return None
    return read_sampled_labels(results, labels, label_column, labels_id_column)[0]


def read_sampled_labels(
    results: ResultTable, labels: Path | None, label_column: str | None, labels_id_column: str | None
) -> tuple[list[Any], list[float | None] | None]:
    """The labels as :func:`read_labels` reads them (one of --labels and --label-column given), and each
    row's chance of having been chosen for labelling from the ``probability`` column of --labels
    (``jurist label`` writes it; None without a file or when it records none); the file is read once."""
    if labels is None and label_column is None:
        raise JuristError("give --label-column (a column of the results) or --labels FILE")
    file_rows = read_input(labels).table if labels is not None else None
    joined = join_labels(
        results,
        column=label_column,
        file_rows=file_rows,
        file_id_column=labels_id_column,
        source=str(labels) if labels is not None else "the labels file",
    )
    chances = None if file_rows is None else join_probabilities(results, file_rows, labels_id_column)
    return joined, chances
