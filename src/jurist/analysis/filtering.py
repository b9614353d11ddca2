"""Keeping rows by their judgments: gates, predicates, top-k and quantiles, as training-data filters do.

FineWeb-Edu kept documents whose 0-5 score was at least 3; UltraFeedback and Magpie kept the best-rated
responses. :func:`filter_table` applies, in this order, to a result table of ``jurist judge dataset``:

1. **gates**, on unless switched off: every judge's status is ``ok``; a pairwise judge's two orders agree
   (``position_consistent``); a panel reached its quorum (``panel.status`` is ``ok``); a cascade's stages
   are gated through the cascade's own columns; with ``min_confidence``, every label-probability
   ``*_confidence`` column is at least that;
2. **predicates** (``where``), each a SQL boolean expression evaluated by DuckDB over the result columns,
   such as ``truthfulness.score >= 0.75`` (column names with dots need no quotes); a row for which a
   predicate is null (a null score) is dropped;
3. **quantile**: the rows whose ``by`` value is at least its ``quantile``-th quantile (per ``group_by``
   group), so that equal values are kept or dropped together;
4. **top-k**: the ``top_k`` rows with the highest ``by`` value per ``group_by`` group (all rows without
   one), ties broken by input order.

A row without a ``by`` value is dropped by 3 and 4. Every dropped row is counted under the first rule it
failed (:class:`FilterReport`). The kept rows keep their input columns (and, on request, the judge
columns); ``int_score`` (FineWeb-Edu's integer bucket) can be added from any score column.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jurist.errors import InputError
from jurist.io.results import PANEL, ResultTable
from jurist.io.writers import OutputWriter


@dataclass(frozen=True)
class FilterRules:
    """What to keep. ``int_score``: a column to round into an integer ``int_score`` column, after
    multiplying by ``int_score_scale``."""

    where: tuple[str, ...] = ()
    top_k: int | None = None
    quantile: float | None = None
    by: str | None = None
    group_by: str | None = None
    require_ok: bool = True
    require_consistent: bool = True
    require_panel: bool = True
    min_confidence: float | None = None
    int_score: str | None = None
    int_score_scale: float = 1.0
    keep_judge_columns: bool = False


@dataclass
class FilterReport:
    """How many rows there were, how many were kept, and how many each rule dropped."""

    rows: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"kept {self.kept} of {self.rows} rows"]
        out += [f"  dropped {count}: {reason}" for reason, count in self.dropped.items()]
        return out


def quote_columns(expression: str, columns: Sequence[str]) -> str:
    """An expression with every column name that is not a plain SQL identifier put in double quotes
    (``truthfulness.score`` -> ``"truthfulness.score"``), outside string literals and quoted names."""
    special = sorted(
        (c for c in columns if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c)), key=len, reverse=True
    )
    if not special:
        return expression
    pattern = re.compile(
        r"(?<![A-Za-z0-9_\"])(" + "|".join(re.escape(c) for c in special) + r")(?![A-Za-z0-9_\"])"
    )
    parts = re.split(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")", expression)
    return "".join(part if i % 2 else pattern.sub(r'"\1"', part) for i, part in enumerate(parts))


def _check_column(table: pa.Table, name: str | None, option: str) -> None:
    if name is not None and name not in table.column_names:
        known = ", ".join(table.column_names)
        raise InputError(f"{option} {name!r} is not a column of the results (columns: {known})")


def filter_table(results: ResultTable | pa.Table, rules: FilterRules) -> tuple[pa.Table, FilterReport]:
    """The rows of a result table that pass ``rules``, and the report of what each rule dropped."""
    if not isinstance(results, ResultTable):
        results = ResultTable(results)
    table = results.table
    if (rules.top_k is not None or rules.quantile is not None) and rules.by is None:
        raise InputError("--top-k and --quantile need --by COLUMN (the value to rank rows by)")
    if rules.top_k is not None and rules.top_k < 1:
        raise InputError(f"--top-k must be at least 1, got {rules.top_k}")
    if rules.quantile is not None and not 0.0 <= rules.quantile <= 1.0:
        raise InputError(f"--quantile must be between 0 and 1, got {rules.quantile}")
    for name, option in (
        (rules.by, "--by"),
        (rules.group_by, "--group-by"),
        (rules.int_score, "--int-score"),
    ):
        _check_column(table, name, option)
    alive = [True] * table.num_rows
    dropped: Counter[str] = Counter()

    def apply(passing: Sequence[bool], reason: str) -> None:
        for index, ok in enumerate(passing):
            if alive[index] and not ok:
                alive[index] = False
                dropped[reason] += 1

    for reason, passing in _gates(results, rules):
        apply(passing, reason)
    for expression in rules.where:
        apply(_where(table, expression), f"where {expression}")
    if rules.by is not None and (rules.quantile is not None or rules.top_k is not None):
        values = table.column(rules.by).to_pylist()
        apply([v is not None for v in values], f"no {rules.by} value")
        groups = table.column(rules.group_by).to_pylist() if rules.group_by else [None] * table.num_rows
        if rules.quantile is not None:
            apply(
                _above_quantile(values, groups, alive, rules.quantile),
                f"below the {rules.quantile} quantile of {rules.by}",
            )
        if rules.top_k is not None:
            apply(_top_k(values, groups, alive, rules.top_k), f"not in the top {rules.top_k} by {rules.by}")
    kept = table.filter(pa.array(alive, pa.bool_()))
    if rules.int_score is not None:
        scaled = pc.multiply(kept.column(rules.int_score).cast(pa.float64()), rules.int_score_scale)
        kept = kept.append_column("int_score", pc.round(scaled, round_mode="half_up").cast(pa.int64()))
    if not rules.keep_judge_columns:
        kept = kept.select([c for c in kept.column_names if not _is_judge_column(c, results)])
    return kept, FilterReport(table.num_rows, kept.num_rows, dict(dropped))


def _is_judge_column(column: str, results: ResultTable) -> bool:
    if column == "int_score":
        return False
    return results.owner(column) is not None or column.endswith(".calibrated")


def _gates(results: ResultTable, rules: FilterRules) -> list[tuple[str, list[bool]]]:
    out = []
    stages = results.cascade_stages
    judges = [j for j in results.judges if j.kind != PANEL and j.name not in stages]
    if rules.require_ok:
        for judge in judges:
            out.append((f"{judge.status} is not ok", [s == "ok" for s in results.values(judge.status)]))
    if rules.require_consistent:
        for judge in judges:
            name = judge.get("position_consistent")
            if name is not None:
                consistent = [v is True for v in results.values(name)]
                out.append((f"{judge.name}: the two orders disagree", consistent))
    panel = results.panel
    if rules.require_panel and panel is not None:
        out.append(("the panel is below its quorum", [s == "ok" for s in results.values(panel.status)]))
    if rules.min_confidence is not None:
        for judge in results.judges:
            for name in judge.columns:
                if name.endswith("_confidence"):
                    values = results.values(name)
                    passing = [v is not None and v >= rules.min_confidence for v in values]
                    out.append((f"{name} below {rules.min_confidence}", passing))
    return out


def _where(table: pa.Table, expression: str) -> list[bool]:
    import duckdb

    rows = table.append_column("__jurist_row", pa.array(range(table.num_rows), pa.int64()))
    sql = f"SELECT __jurist_row FROM results WHERE ({quote_columns(expression, table.column_names)})"
    connection = duckdb.connect()
    try:
        connection.register("results", rows)
        passing = {row[0] for row in connection.execute(sql).fetchall()}
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0]
        raise InputError(
            f"--where {expression!r} is not a valid predicate over the results: {message}"
        ) from None
    finally:
        connection.close()
    return [index in passing for index in range(table.num_rows)]


def _above_quantile(values: list[Any], groups: list[Any], alive: list[bool], q: float) -> list[bool]:
    by_group: dict[Any, list[float]] = {}
    for value, group, ok in zip(values, groups, alive, strict=True):
        if ok:
            by_group.setdefault(group, []).append(value)
    threshold = {
        group: pc.quantile(pa.array(members, pa.float64()), q=q, interpolation="linear")[0].as_py()
        for group, members in by_group.items()
    }
    return [
        not ok or value >= threshold[group] for value, group, ok in zip(values, groups, alive, strict=True)
    ]


def _top_k(values: list[Any], groups: list[Any], alive: list[bool], k: int) -> list[bool]:
    order = sorted((i for i, ok in enumerate(alive) if ok), key=lambda i: (-values[i], i))
    taken: Counter[Any] = Counter()
    keep = set()
    for index in order:
        if taken[groups[index]] < k:
            taken[groups[index]] += 1
            keep.add(index)
    return [not ok or i in keep for i, ok in enumerate(alive)]


def filter_file(results: str | Path, output: Path, rules: FilterRules) -> FilterReport:
    """Filter a results file (or results dataset) into ``output`` (Parquet, Arrow or JSONL by extension); the
    rules and the report go into its metadata beside the run's."""
    read = ResultTable.open(results)
    kept, report = filter_table(read, rules)
    metadata = {
        "jurist_filter": json.dumps(
            {"source": str(results), "rules": asdict(rules), "report": asdict(report)}
        )
    }
    if read.metadata:
        metadata["jurist"] = json.dumps(read.metadata)
    with OutputWriter(output, kept.schema, metadata=metadata) as writer:
        writer.write(kept)
    return report
