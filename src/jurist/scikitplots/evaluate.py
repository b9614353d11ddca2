"""``evaluate_answers``: every metric over every row of a dataset, each step batched across the rows.

For each judge, the metrics' judges run on one :class:`~jurist.engine.core.Engine` over the dataset: a
chunk's first steps (every metric's extraction or rating, for every row) go to the model in one call, then
its second steps (the verifications) in another, so the number of model calls does not grow with the rows.

Output: one Arrow row per input row, in input order: ``row_id``, the input columns (unless
``carry_input=False``), then per metric ``<metric>.<column>`` (score, details, undefined, status, error,
raw, tokens, provenance). With several judges (a panel) each judge's columns are
``<metric>.<judge>.<column>``, and each metric gets ``<metric>.panel.score`` (the mean of the judges'
scores), ``.score_median``, ``.valid`` (judges whose status is ``ok``) and ``.status`` (``inconclusive``
below the quorum, by default a majority of the judges), as jurist's panels do. The table's schema metadata
``jurist.evaluate`` holds every judge's identity and, for panels, each metric's agreement: Krippendorff's
alpha over the scores (interval level).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from jurist.engine.core import Engine
from jurist.io.opening import open_source
from jurist.io.sources import InputData
from jurist.scikitplots.llm_judge import LLMJudge, metric_config
from jurist.stats.agreement import krippendorff_alpha

MetricSpec = str | tuple[str, Mapping[str, Any]]
METADATA_KEY = b"jurist.evaluate"
PANEL = "panel"


def _specs(metrics: Sequence[MetricSpec]) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(metrics, str):
        metrics = [metrics]
    specs: list[tuple[str, dict[str, Any]]] = []
    for item in metrics:
        name, params = (item, {}) if isinstance(item, str) else (item[0], dict(item[1]))
        metric_config(name)  # ValueError for an unknown metric
        specs.append((name, params))
    names = [name for name, _ in specs]
    if not specs:
        raise ValueError("no metric given")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"metric {repeated[0]} is given twice")
    return specs


def _materialize(dataset: Any) -> InputData | pa.Table:
    """The dataset in memory, read once for every judge (rows, tables and files alike)."""
    if isinstance(dataset, InputData | pa.Table):
        return dataset
    if isinstance(dataset, Sequence) and not isinstance(dataset, str | bytes):
        return InputData.from_rows(dataset)
    source = open_source(dataset)
    tables: list[pa.Table] = []
    records: list[Any] | None = []  # the rows as read, when the source read records: what judges render
    errors: dict[int, str] = {}
    offset = 0
    for chunk in source.chunks(4096, 0):
        errors.update({offset + index: error for index, error in chunk.errors.items()})
        tables.append(chunk.table)
        records = None if records is None or chunk.records is None else [*records, *chunk.records]
        offset += chunk.table.num_rows
    if not tables:
        return pa.table({})
    table = pa.concat_tables(tables, promote_options="default")
    return InputData(table, source.source, errors, records)


def evaluate_answers(
    dataset: Any,
    judges: LLMJudge | Sequence[LLMJudge],
    metrics: Sequence[MetricSpec],
    *,
    quorum: int | None = None,
    carry_input: bool = True,
    chunk_size: int | None = None,
) -> pa.Table:
    """Judge every row of ``dataset`` (rows, an Arrow table, a DataFrame, a file path: anything
    :func:`~jurist.io.opening.open_source` reads) on every metric, with one judge or a panel.

    ``metrics``: names (``faithfulness``, ``answer_relevance``, ..., ``preference``), or ``(name, params)``
    pairs that set ``rag_judge_params`` (``("criteria_score", {"criteria": "...", "scale": 10})``).
    Rows name their inputs as the metrics' ``*_field`` candidates do (``question``, ``answer``,
    ``contexts``, ``reference``, ``criteria``; ``response_a`` / ``response_b`` for ``preference``).
    """
    panel = [judges] if isinstance(judges, LLMJudge) else list(judges)
    if not panel:
        raise ValueError("no judge given")
    names = [j.name for j in panel]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(
            f"two judges are named {repeated[0]}; give each a distinct name (LLMJudge(..., name=))"
        )
    if quorum is not None and not 1 <= quorum <= len(panel):
        raise ValueError(f"quorum {quorum} must be between 1 and the number of judges ({len(panel)})")
    specs = _specs(metrics)
    data = _materialize(dataset)
    tables = []
    for position, judge in enumerate(panel):
        compiled = [judge.judge_for(name, params) for name, params in specs]
        engine = Engine(
            compiled, judge.backend, carry_input=carry_input and position == 0, chunk_size=chunk_size
        )
        tables.append(engine.run(data))
    metadata: dict[str, Any] = {
        "judges": {j.name: j.identity() for j in panel},
        "metrics": [name for name, _ in specs],
    }
    if len(panel) == 1:
        table = tables[0]
    else:
        table, metadata["agreement"] = _panel(tables, names, [name for name, _ in specs], quorum)
    return table.replace_schema_metadata(
        {**(table.schema.metadata or {}), METADATA_KEY: json.dumps(metadata)}
    )


def _panel(
    tables: list[pa.Table], judges: list[str], metrics: list[str], quorum: int | None
) -> tuple[pa.Table, dict[str, Any]]:
    """The judges' tables side by side (``<metric>.<judge>.<column>``), each metric's panel columns, and
    each metric's agreement."""
    needed = quorum if quorum is not None else len(judges) // 2 + 1
    first = tables[0]
    metric_columns = {f"{m}." for m in metrics}
    keep = [c for c in first.column_names if not any(c.startswith(prefix) for prefix in metric_columns)]
    columns: dict[str, pa.ChunkedArray] = {name: first.column(name) for name in keep}
    agreement: dict[str, Any] = {}
    for metric in metrics:
        prefix = f"{metric}."
        for judge, table in zip(judges, tables, strict=True):
            for name in table.column_names:
                if name.startswith(prefix):
                    columns[f"{metric}.{judge}.{name[len(prefix) :]}"] = table.column(name)
        scores = [
            [
                s if st == "ok" else None
                for s, st in zip(_values(t, metric, "score"), _values(t, metric, "status"), strict=True)
            ]
            for t in tables
        ]
        valid = [
            sum(st == "ok" for st in row)
            for row in zip(*(_values(t, metric, "status") for t in tables), strict=True)
        ]
        per_row = [[s for s in row if s is not None] for row in zip(*scores, strict=True)]
        quorate = [count >= needed for count in valid]
        columns[f"{metric}.{PANEL}.score"] = pa.chunked_array(
            [pa.array([_mean(v) if q else None for v, q in zip(per_row, quorate, strict=True)], pa.float64())]
        )
        columns[f"{metric}.{PANEL}.score_median"] = pa.chunked_array(
            [
                pa.array(
                    [_median(v) if q else None for v, q in zip(per_row, quorate, strict=True)], pa.float64()
                )
            ]
        )
        columns[f"{metric}.{PANEL}.valid"] = pa.chunked_array([pa.array(valid, pa.int64())])
        statuses = ["ok" if q else "inconclusive" for q in quorate]
        columns[f"{metric}.{PANEL}.status"] = pa.chunked_array([pa.array(statuses, pa.string())])
        agreement[metric] = {
            "krippendorff_alpha": krippendorff_alpha(scores, "interval"),
            "alpha_level": "interval",
            "field": "score",
            "quorum": needed,
            "inconclusive_rows": statuses.count("inconclusive"),
        }
    return pa.table(columns), agreement


def _values(table: pa.Table, metric: str, column: str) -> list[Any]:
    return list(table.column(f"{metric}.{column}").to_pylist())


def _mean(values: list[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None
