"""What a cascade did: the share of rows decided at each stage and the compute it saved against running
its last stage on every row (requests, prompt and output tokens, seconds), and that report as text.

The last stage's cost per row is what it cost on the rows it judged in this run (or, when it judged none,
on the labelled rows during calibration); "last stage on every row" is that cost times the rows of the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COSTS = ("requests", "prompt_tokens", "completion_tokens", "seconds")


def cascade_report(
    stage_names: Sequence[str],
    counts: Mapping[str, Any],
    stats: Mapping[str, Any],
    calibration_cost: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``counts``: rows, rows decided per stage (1-based) and rows per final status, over the results;
    ``stats`` (and ``calibration_cost``, the work on the labelled rows): per stage (1-based, as text) the
    rows it judged and their requests, tokens and seconds."""
    rows = int(counts.get("rows") or 0)
    decided = {int(k): int(v) for k, v in (counts.get("stages") or {}).items()}
    stages = []
    for number, name in enumerate(stage_names, start=1):
        work = {key: stats.get(str(number), {}).get(key, 0) for key in ("rows", *COSTS)}
        stages.append(
            {
                "stage": number,
                "judge": name,
                "decided": decided.get(number, 0),
                "share": decided.get(number, 0) / rows if rows else None,
                "judged": work["rows"],
                **{key: work[key] for key in COSTS},
            }
        )
    actual = {key: sum(s[key] for s in stages) for key in COSTS}
    last = stages[-1]
    per_row, basis = None, None
    if last["judged"]:
        per_row = {key: last[key] / last["judged"] for key in COSTS}
        basis = "the last stage's rows in this run"
    else:
        cost = (calibration_cost or {}).get(str(len(stage_names)))
        if cost and cost.get("rows"):
            per_row = {key: cost.get(key, 0) / cost["rows"] for key in COSTS}
            basis = "the last stage's cost on the labelled rows"
    baseline = saved = None
    if per_row is not None:
        baseline = {key: per_row[key] * rows for key in COSTS}
        saved = {
            key: {
                "amount": baseline[key] - actual[key],
                "share": (baseline[key] - actual[key]) / baseline[key] if baseline[key] else None,
            }
            for key in COSTS
        }
    statuses = dict(counts.get("statuses") or {})
    return {
        "rows": rows,
        "stages": stages,
        "abstained": statuses.get("abstained", 0),
        "statuses": statuses,
        "cost": actual,
        "last_stage_on_every_row": baseline,
        "estimated_from": basis,
        "saved": saved,
        "calibration_cost": dict(calibration_cost) if calibration_cost else None,
    }


def format_cascade(report: Mapping[str, Any]) -> str:
    """A cascade report (:func:`cascade_report`) as text."""
    rows = report["rows"]
    lines = [f"  cascade over {rows} rows:"]
    for stage in report["stages"]:
        share = "n/a" if stage["share"] is None else f"{100 * stage['share']:.1f} %"
        lines.append(
            f"    stage {stage['stage']} {stage['judge']}: decided {stage['decided']} ({share}); judged "
            f"{stage['judged']} rows: {stage['requests']} requests, {stage['prompt_tokens']} prompt + "
            f"{stage['completion_tokens']} output tokens, {stage['seconds']:.1f} s"
        )
    if report.get("abstained"):
        lines.append(f"    abstained (below every threshold): {report['abstained']}")
    saved = report.get("saved")
    if saved is None:
        lines.append(
            "    compute saved: n/a (the last stage judged no row, and no calibration cost is known)"
        )
        return "\n".join(lines)
    baseline = report["last_stage_on_every_row"]
    parts = []
    for key, label in (
        ("requests", "requests"),
        ("prompt_tokens", "prompt tokens"),
        ("completion_tokens", "output tokens"),
        ("seconds", "seconds"),
    ):
        share = saved[key]["share"]
        text = "n/a" if share is None else f"{100 * share:.1f} %"
        digits = 1 if key == "seconds" else 0
        parts.append(f"{label} {saved[key]['amount']:.{digits}f} of {baseline[key]:.{digits}f} ({text})")
    lines.append(
        f"    saved against the last stage on every row ({report['estimated_from']}): " + "; ".join(parts)
    )
    return "\n".join(lines)
