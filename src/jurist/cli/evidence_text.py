"""Readable text for ``jurist estimate`` and ``jurist audit`` (``--json`` prints their dicts as they are)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from jurist.analysis.baselines import format_baselines
from jurist.analysis.outcomes import reasons_text
from jurist.analysis.position import format_prior
from jurist.analysis.text import interval_text as _ci
from jurist.analysis.text import number_text as _num
from jurist.analysis.text import percent_with_interval as _pct_ci


def _estimate_lines(label: str, e: Mapping[str, Any]) -> list[str]:
    if "skipped" in e:
        return [f"  {label}: skipped ({e['skipped']})"]
    level = round(100 * e["ppi"]["confidence"])
    return [
        f"  {label}: PPI++ {_ci(e['ppi'])} ({level} %), lambda {_num(e['lambda'], 2)}"
        + (", labels weighted by 1 / their selection probability" if "design" in e else ""),
        f"    labels only {_ci(e['labels_only'])} ({e['labelled_rows']} labelled rows); "
        f"judge only {_ci(e['judge_only'])} ({e['labelled_rows'] + e['unlabelled_rows']} rows)",
        f"    effective labels {_num(e['effective_labels'], 0)} "
        f"({_num(e['effective_labels'] / e['labelled_rows'], 2)}x the labels)"
        if math.isfinite(e["effective_labels"])
        else "    effective labels n/a (the PPI++ interval has no width)",
    ]


def format_estimate(report: Mapping[str, Mapping[str, Any]]) -> str:
    lines = []
    for judge, r in report.items():
        target = r.get("target", "mean label")
        source = f"agreement with the labels, from {r['column']}" if target == "agreement" else r["column"]
        lines.append(f"{judge} ({source}, {r['rows']} rows):")
        if r.get("left_out"):
            missing = "verdict or confidence" if target == "agreement" else "score"
            lines.append(
                f"  left out {sum(r['left_out'].values())} rows without a {missing}: "
                f"{reasons_text(r['left_out'])}"
            )
        if r.get("labels_outside_plan"):
            lines.append(
                f"  left out {r['labels_outside_plan']} labels of rows the sampling plan did not draw "
                "(no probability recorded)"
            )
        lines += _estimate_lines(target, r["overall"])
        by = r.get("by")
        if by:
            for group, e in by["groups"].items():
                lines += _estimate_lines(f"{by['column']} = {group}", e)
        compare = r.get("compare")
        if compare:
            lines.append(
                f"  {compare['first']} - {compare['second']}: PPI++ {_ci(compare['ppi'])}; "
                f"labels only {_ci(compare['labels_only'])}; judge only {_ci(compare['judge_only'])}"
            )
    return "\n".join(lines)


def format_audit(report: Mapping[str, Mapping[str, Any]]) -> str:
    lines = []
    for judge, r in report.items():
        statuses = ", ".join(f"{k} {v}" for k, v in r["statuses"].items())
        lines.append(f"{judge} ({r['kind']}, {r['rows']} rows: {statuses}):")
        position = r.get("position")
        if position:
            lines.append(f"  position: first-shown answer wins {_ci(position['first_shown_wins'])}")
            if "order_consistency" in position:
                lines.append(f"  order consistency {_ci(position['order_consistency'])}")
            if "prior" in position:
                lines.append(f"  {format_prior(position['prior'])}")
        length = r.get("length")
        for section in (length, (length or {}).get("tokens")):
            for key, what in (("score", "score"), ("error", "error (score - label)")):
                if section and key in section:
                    lines.append(f"  length: {what} per {section['unit']}: {_ci(section[key], 'slope', 4)}")
        lean = r.get("lean") or {}
        if lean:
            shares = "; ".join(
                f"{label} {_num(s['judge'], 2)}"
                + ("" if s["labels"] is None else f" vs {_num(s['labels'], 2)}")
                for label, s in lean.items()
            )
            lines.append(f"  label shares (judge vs labels): {shares}")
        conf = r.get("confidence")
        if conf:
            extra = (
                f", ECE {_num(conf['ece'])}, Brier {_num(conf['brier'])} on {conf['labelled_rows']} labelled"
                if "ece" in conf
                else ""
            )
            lines.append(f"  confidence: mean {_num(conf['mean'])} over {conf['rows']} rows{extra}")
            for row in conf["reliability"] if "ece" in conf else ():
                low, high = row["bin"]
                lines.append(
                    f"    [{low:.1f}, {high:.1f}): {row['rows']} rows, confidence "
                    f"{_num(row['mean_confidence'])}, accuracy {_num(row['accuracy'])}"
                )
        agreement = r.get("agreement")
        if agreement:
            lines.append(
                f"  accuracy {_ci(agreement['accuracy'])} ({agreement['labelled_rows']} labelled), "
                f"Cohen's kappa {_ci(agreement['cohen_kappa'])} ({agreement['decided_rows']} decided)"
            )
            lines += format_baselines(agreement.get("baselines") or {})
            buckets = [b for b in agreement.get("accuracy_by_length_ratio") or () if b["rows"]]
            if buckets:
                lines.append(
                    "  accuracy by length of a over b: "
                    + "; ".join(
                        f"{b['bucket']} {_pct_ci(b['accuracy'], b['interval'])} ({b['rows']} rows)"
                        for b in buckets
                    )
                )
            if agreement.get("undecided"):
                lines.append(
                    f"  accuracy on the {agreement['decided_rows']} decided rows "
                    f"{_ci(agreement['accuracy_decided'])}; "
                    f"no verdict: {reasons_text(agreement['undecided'])}"
                )
        keep = r.get("keep_rule")
        if keep:
            lines.append(
                f"  keep rule ({' AND '.join(keep['where'])}; good: label >= {keep['good_at']}): "
                f"kept {keep['kept_rows']}, precision {_ci(keep['precision'])}, recall {_ci(keep['recall'])}"
            )
    return "\n".join(lines)
