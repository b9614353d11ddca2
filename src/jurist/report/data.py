"""What the report shows, computed from a result table: provenance, statuses, each judge's scores, audit
and estimates, throughput, the rows most worth a look and, given a second table over the same rows, how one
of its judges compares (:func:`jurist.analysis.compare.compare_tables`).

Only the columns the page needs are read (a Parquet file's schema is read first to choose them): every
judge's score, status, error, verdict, confidence and per-order columns, its token counts, and the input
columns (for lengths and the rows shown).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from jurist.analysis.audit import audit_judge, default_responses, response_lengths
from jurist.analysis.estimate import estimate_judge
from jurist.analysis.outcomes import reasoning_counts
from jurist.io.dataset import is_results_dataset
from jurist.io.formats import output_format
from jurist.io.parts import read_metadata
from jurist.io.results import JudgeColumns, ResultTable, readable
from jurist.labels.sampling import confidences
from jurist.labels.source import LabelSource
from jurist.report import plots

JUDGE_SUFFIXES = (
    "score",
    "status",
    "error",
    "winner",
    "judgment",
    "judgment_confidence",
    "confidence",
    "p_a",
    "ab_judgment",
    "ba_judgment",
    "position_consistent",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "reasoning_cut",
)
TEXT_LIMIT = 400
SHOWN_FLIPS = 20
SHOWN_FLIP_ROWS = 10


@dataclass(frozen=True)
class ReportOptions:
    """Labels (as ``jurist agree`` takes them), the judges to show, the confidence, how many rows, and a
    second table to compare with (``compare_with``; its judge ``compare_judge``, by default the one of the
    same name as the first judge shown, or its only judge)."""

    labels: LabelSource | None = None
    judges: tuple[str, ...] = ()
    confidence: float = 0.95
    worst: int = 20
    compare_with: Path | None = None
    compare_judge: str | None = None


def open_needed(path: str | Path, label_column: str | None = None) -> ResultTable:
    """The result table with only the columns the report needs."""
    if is_results_dataset(path) or output_format(Path(path)) != "parquet":
        return ResultTable.open(path)
    path = Path(path)
    import pyarrow.parquet as pq

    with readable(path):
        view = ResultTable(pq.read_schema(path).empty_table(), read_metadata(path))
    owned = {c for j in view.judges for c in j.columns}
    wanted = [c for c in view.table.column_names if c not in owned]
    wanted += [c for j in view.judges for s in JUDGE_SUFFIXES if (c := j.get(s)) is not None]
    if label_column is not None:
        wanted.append(label_column)
    return ResultTable.open(path, columns=list(dict.fromkeys(wanted)))


def collect(path: str | Path, options: ReportOptions) -> dict[str, Any]:
    """Everything the page shows, figures included."""
    results = open_needed(path, options.labels.own_column if options.labels else None)
    names = list(options.judges) or results.names
    for name in names:
        results.judge(name)
    labels, chances = options.labels.for_results(results) if options.labels else (None, None)
    judges = [_judge(results, results.judge(name), labels, chances, options) for name in names]
    return {
        "source": str(path),
        "rows": results.num_rows,
        "labelled": None if labels is None else sum(v is not None for v in labels),
        "provenance": provenance(results.metadata),
        "throughput": throughput(results),
        "judges": judges,
        "inputs": [c for c in results.table.column_names if results.owner(c) is None],
        "comparison": None
        if options.compare_with is None
        else comparison(path, results, labels, names, options),
    }


def comparison(
    path: str | Path,
    results: ResultTable,
    labels: list[Any] | None,
    names: list[str],
    options: ReportOptions,
) -> dict[str, Any]:
    """The report's section on a second table: :func:`~jurist.analysis.compare.compare_tables` of the
    first judge shown (or the table's only one) against ``options.compare_judge`` of the other table (by
    default the judge of the same name, or its only one), its flips cut to the :data:`SHOWN_FLIPS` largest
    with :data:`SHOWN_FLIP_ROWS` row ids each."""
    from jurist.analysis.compare import compare_tables

    assert options.compare_with is not None
    other = open_needed(options.compare_with)
    judge_a = options.judges[0] if options.judges else (names[0] if len(names) == 1 else None)
    judge_b = options.compare_judge or (judge_a if judge_a in other.names else None)
    report = compare_tables(
        results,
        other,
        judge_a=judge_a,
        judge_b=judge_b,
        labels=labels,
        confidence=options.confidence,
        sources=(str(path), str(options.compare_with)),
    )
    flipped = report["flips"]
    report["flipped_rows"] = sum(f["rows"] for f in flipped)
    report["flips_not_shown"] = max(0, len(flipped) - SHOWN_FLIPS)
    report["flips"] = [
        {**f, "row_ids": f["row_ids"][:SHOWN_FLIP_ROWS], "more_rows": max(0, f["rows"] - SHOWN_FLIP_ROWS)}
        for f in flipped[:SHOWN_FLIPS]
    ]
    return report


def _floats(values: list[Any]) -> np.ndarray:
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)


def _judge(
    results: ResultTable,
    judge: JudgeColumns,
    labels: list[Any] | None,
    chances: list[float | None] | None,
    options: ReportOptions,
) -> dict[str, Any]:
    audit_options = replace(default_responses(results, judge), confidence=options.confidence)
    audit = audit_judge(results, judge.name, labels, audit_options)
    figures: list[dict[str, str]] = []
    out: dict[str, Any] = {"name": judge.name, "kind": judge.kind, "audit": audit, "figures": figures}
    scores = _floats(results.values(judge.score)) if judge.has("score") else np.array([])
    if np.isfinite(scores).any():
        figures.append(
            {
                "title": "Score distribution",
                "src": plots.histogram(scores[np.isfinite(scores)], f"{judge.name}: scores", "score"),
            }
        )
    conf = audit.get("confidence")
    if conf and conf["reliability"] and "accuracy" in conf["reliability"][0]:
        figures.append(
            {
                "title": "Reliability",
                "src": plots.reliability(conf["reliability"], f"{judge.name}: reliability"),
            }
        )
    elif conf:
        values = _floats(confidences(results, judge) or [])
        figures.append(
            {
                "title": "Confidence",
                "src": plots.histogram(
                    values[np.isfinite(values)], f"{judge.name}: confidence", "confidence"
                ),
            }
        )
    length = audit.get("length")
    if length and length["score"] is not None:
        lengths = _floats(response_lengths(results, judge, audit_options))
        keep = np.isfinite(lengths) & np.isfinite(scores)
        figures.append(
            {
                "title": "Score against length",
                "src": plots.length_scatter(
                    lengths[keep] / 100,
                    scores[keep],
                    length["score"],
                    length["unit"],
                    f"{judge.name}: score against length",
                ),
            }
        )
    position = audit.get("position")
    if position:
        items = [("first shown wins", position["first_shown_wins"])]
        if "order_consistency" in position:
            items.append(("orders agree", position["order_consistency"]))
        figures.append({"title": "Position", "src": plots.bars(items, f"{judge.name}: position", 0.5)})
    if labels is not None and judge.has("score"):
        estimated = estimate_judge(
            results, judge.name, labels, confidence=options.confidence, probabilities=chances
        )
        estimate = estimated["overall"]
        out["estimate"] = estimate
        out["estimate_left_out"] = estimated["left_out"]
        names = {"judge_only": "judge only", "labels_only": "labels only", "ppi": "PPI++"}
        rows = [(label, estimate[key]) for key, label in names.items()]
        figures.append(
            {"title": "Corrected estimate", "src": plots.intervals(rows, f"{judge.name}: mean label")}
        )
    out["reasoning"] = reasoning_counts(results, judge)
    out["worst"] = worst_rows(results, judge, options.worst)
    return out


def worst_rows(results: ResultTable, judge: JudgeColumns, count: int) -> list[dict[str, Any]]:
    """The ``count`` rows most worth a look: those not ``ok`` first, then the least confident."""
    statuses = results.values(judge.status) if judge.has("status") else [None] * results.num_rows
    failed = np.asarray([s not in (None, "ok") for s in statuses])
    conf = confidences(results, judge)
    certainty = np.ones(results.num_rows) if conf is None else np.nan_to_num(_floats(conf), nan=1.0)
    order = np.lexsort((certainty, ~failed))[:count]
    inputs = [c for c in results.table.column_names if results.owner(c) is None]
    shown = results.table.take(order)
    rows = []
    for position, index in enumerate(order):
        row = {c: _short(shown.column(c)[position].as_py()) for c in inputs}
        row.update(
            {
                "status": statuses[int(index)],
                "error": shown.column(judge.column("error"))[position].as_py()
                if judge.has("error")
                else None,
                "score": shown.column(judge.score)[position].as_py() if judge.has("score") else None,
                "confidence": None if conf is None else conf[int(index)],
                "verdict": shown.column(judge.verdict)[position].as_py(),
            }
        )
        rows.append(row)
    return rows


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TEXT_LIMIT:
        return value[:TEXT_LIMIT] + f"... ({len(value)} characters)"
    return value


def provenance(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """What ``jurist info`` shows, as (field, value) rows."""
    if not metadata:
        return [("metadata", "none: the table was not written by jurist")]
    env = metadata.get("environment") or {}
    machine = env.get("machine") or {}
    options = {k: v for k, v in (metadata.get("options") or {}).items() if v not in (None, [], False)}
    rows = [
        ("jurist", str(metadata.get("jurist_version"))),
        ("versions", "; ".join(f"{k} {v}" for k, v in (env.get("versions") or {}).items())),
        (
            "machine",
            f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores; python {env.get('python', '?')}",
        ),
        ("input", f"{metadata.get('input')} ({metadata.get('rows')} rows)"),
        ("options", ", ".join(f"{k}={v}" for k, v in options.items()) or "none"),
        ("started", str(metadata.get("started", "?"))),
        ("finished", str(metadata.get("finished", "-"))),
        ("fingerprint", str(metadata.get("fingerprint", "-"))),
    ]
    models = metadata.get("models") or {}
    for judge in metadata.get("judges") or ():
        name = judge.get("name")
        model = models.get(name) or {}
        described = ", ".join(f"{k} {v}" for k, v in model.items() if v is not None)
        rows.append(
            (
                f"judge {name}",
                f"{judge.get('source')}; scoring {judge.get('scoring')}, seed {judge.get('seed')}; "
                f"prompt {judge.get('prompt_hash')}, schema {judge.get('schema_hash')}; "
                f"model: {described or '-'}",
            )
        )
    return rows


def throughput(results: ResultTable) -> dict[str, Any]:
    """Rows per second over the run's wall time (from its metadata) and each judge's token counts."""
    out: dict[str, Any] = {"rows": results.num_rows, "seconds": None, "rows_per_second": None, "tokens": {}}
    started, finished = results.metadata.get("started"), results.metadata.get("finished")
    if started and finished:
        seconds = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
        out["seconds"] = seconds
        out["rows_per_second"] = results.num_rows / seconds if seconds > 0 else None
    for judge in results.judges:
        counts = {}
        for kind in ("prompt_tokens", "completion_tokens"):
            column = judge.get(kind)
            if column is not None:
                counts[kind] = int(np.nansum(_floats(results.values(column))))
        if counts:
            out["tokens"][judge.name] = counts
    return out
