"""A cascade's figures in ``jurist bench``: what one cascade run did, read from the run's own result table,
and the cascade set against its last stage judging every row alone.

The cascade's entry has the shape of any measurement's (``warm`` and ``cold`` figures from
:func:`jurist.bench.measure.figures`), counted over its stages: ``judged`` is every output a stage sent to a
model, the parse rate is the ok ones among them, tokens are every stage's, a valid row is one the cascade
decided (status ``ok``, a verdict, and a score where every stage scores by label probabilities), and the
statuses are the cascade's final ones (``ok``, ``abstained``, a failure). :func:`compare` sets the warm run
against the last stage's own warm run over the same rows: measured rows/s, seconds and tokens saved, beside
the saving the cascade's report estimates from the last stage's cost per row on the rows it judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jurist.bench.measure import NOT_SENT, Counts
from jurist.config.models import JudgeConfig
from jurist.errors import InputError
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource
from jurist.scoring import MODES

MEASURED = (
    ("seconds", "seconds"),
    ("prompt_tokens", "prompt_tokens"),
    ("output_tokens", "completion_tokens"),
)


def stage_mode(config: JudgeConfig) -> str:
    """The bench mode a stage's config runs in: ``reward``, or its scoring mode's bench name
    (``generation``, ``logprobs``, ``probe``)."""
    if config.is_reward:
        return "reward"
    return MODES[config.judge_params.scoring].bench_name


def names(stages: Sequence[str], models: Sequence[str]) -> tuple[str, str]:
    """The cascade's judge and model as the table shows them: ``cascade: a -> b`` and ``m1 -> m2`` (the model
    once when every stage runs on it)."""
    shown = models[:1] if len(set(models)) == 1 else models
    return "cascade: " + " -> ".join(stages), " -> ".join(shown)


def _values(table: pa.Table, column: str) -> list[Any]:
    if column not in table.column_names:
        raise InputError(f"the cascade's results have no column {column!r}")
    values: list[Any] = table.column(column).to_pylist()
    return values


def table_counts(
    table: pa.Table, stages: Sequence[str], cascade: str, verdict: str, *, labels_only: bool
) -> Counts:
    """:class:`~jurist.bench.measure.Counts` of a cascade run from its result ``table`` (``stages``: the stage
    judges' names; ``cascade``: the cascade's column prefix; ``verdict``: its verdict column)."""
    judged = ok = 0
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}
    for stage in stages:
        sent = [s for s in _values(table, f"{stage}.status") if s is not None and s not in NOT_SENT]
        judged += len(sent)
        ok += sum(s == "ok" for s in sent)
        for key in tokens:
            tokens[key] += int(pc.sum(table.column(f"{stage}.{key}")).as_py() or 0)
    final = _values(table, f"{cascade}.status")
    verdicts = _values(table, verdict)
    scores = _values(table, f"{cascade}.score")
    valid = sum(
        s == "ok" and v is not None and (c is not None or not labels_only)
        for s, v, c in zip(final, verdicts, scores, strict=True)
    )
    statuses: dict[str, int] = {}
    for status in final:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    return Counts(
        table.num_rows, judged, ok, valid, tokens["prompt_tokens"], tokens["completion_tokens"], statuses
    )


def stage_figures(
    report: Mapping[str, Any], plan: Mapping[str, Any], models: Sequence[str]
) -> list[dict[str, Any]]:
    """Per stage: its judge, model, confidence and threshold (from the plan), rows decided and their share,
    and what it judged and cost in the run (from the cascade's report)."""
    out = []
    for stage, planned, model in zip(report["stages"], plan["stages"], models, strict=True):
        out.append(
            {
                "stage": stage["stage"],
                "judge": stage["judge"],
                "model": model,
                "confidence": planned.get("confidence"),
                "threshold": planned.get("threshold"),
                "decided": stage["decided"],
                "share": None if stage["share"] is None else round(stage["share"], 4),
                "judged": stage["judged"],
                "requests": stage["requests"],
                "prompt_tokens": stage["prompt_tokens"],
                "completion_tokens": stage["completion_tokens"],
                "seconds": round(stage["seconds"], 3),
            }
        )
    return out


def _share(saved: float, whole: float) -> float | None:
    return round(saved / whole, 4) if whole else None


def compare(entry: Mapping[str, Any], baseline: Mapping[str, Any]) -> dict[str, Any]:
    """The cascade's warm run against the last stage's alone over the same rows: rows/s and their ratio,
    seconds and tokens saved as measured, the report's estimate of the same, and how far the estimate of
    the last stage on every row is from the last stage measured."""
    mine, theirs = entry["warm"], baseline["warm"]
    if mine["rows"] != theirs["rows"]:
        raise InputError(f"the cascade judged {mine['rows']} rows and its last stage {theirs['rows']}")
    measured = {
        key: {
            "last_stage": theirs[key],
            "cascade": mine[key],
            "saved": round(theirs[key] - mine[key], 3),
            "share": _share(theirs[key] - mine[key], theirs[key]),
        }
        for key, _ in MEASURED
    }
    report = entry["cascade"]["report"]
    estimated: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    every_row = report.get("last_stage_on_every_row")
    if every_row is not None:
        estimated = {
            key: {
                "last_stage": round(every_row[cost], 3),
                "cascade": round(report["cost"][cost], 3),
                "saved": round(report["saved"][cost]["amount"], 3),
                "share": None
                if report["saved"][cost]["share"] is None
                else round(report["saved"][cost]["share"], 4),
            }
            for key, cost in MEASURED
        }
        error = {
            key: round(every_row[cost] / theirs[key], 4) if theirs[key] else None for key, cost in MEASURED
        }
    ratio = round(mine["rows_per_s"] / theirs["rows_per_s"], 3) if theirs["rows_per_s"] else None
    return {
        "last_stage": f"{baseline['model']} / {baseline['judge']} / {baseline['mode']}",
        "rows": theirs["rows"],
        "cascade_rows_per_s": mine["rows_per_s"],
        "last_stage_rows_per_s": theirs["rows_per_s"],
        "rows_per_s_ratio": ratio,
        "saved_measured": measured,
        "saved_estimated": estimated,
        "estimated_from": report.get("estimated_from"),
        "estimate_over_measured": error,
    }


def agreement(results: ResultTable, labels: LabelSource, judges: Sequence[str]) -> dict[str, Any]:
    """Agreement with the labels (matched to the results' ``row_id`` as calibration matches them to the
    input's rows) of the cascade's and each stage's verdicts over the benched rows."""
    from jurist.analysis.human import agreement_report

    report = agreement_report(results, labels.for_results(results).labels, judges=list(judges))
    return {
        name: {
            key: report[name][key]
            for key in ("labelled_rows", "decided_rows", "accuracy", "accuracy_decided")
        }
        for name in judges
    }
