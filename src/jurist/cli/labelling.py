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
    if labels is None and label_column is None:
        if required:
            raise JuristError("give --label-column (a column of the results) or --labels FILE")
        return None
    file_rows = read_input(labels).table if labels is not None else None
    return join_labels(
        results,
        column=label_column,
        file_rows=file_rows,
        file_id_column=labels_id_column,
        source=str(labels) if labels is not None else "the labels file",
    )


def read_probabilities(
    results: ResultTable, labels: Path | None, labels_id_column: str | None
) -> list[float | None] | None:
    """Each result row's chance of having been chosen for labelling, from the ``probability`` column of
    --labels (``jurist label`` writes it); None when there is no such file or it records none."""
    if labels is None:
        return None
    return join_probabilities(results, read_input(labels).table, labels_id_column)
