"""The label options that ``jurist agree``, ``calibrate``, ``estimate``, ``audit``, ``report``, ``compare``
and ``probe fit`` share; the labels they name are read by :mod:`jurist.analysis.labels`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.analysis.labels import read_result_labels
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
    """The labels as :func:`read_labels` reads them and the sampling plan's probabilities
    (:func:`jurist.analysis.labels.read_result_labels`)."""
    return read_result_labels(results, labels, label_column, labels_id_column)
