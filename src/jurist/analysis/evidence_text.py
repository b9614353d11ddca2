"""Readable text for ``jurist estimate``, ``jurist audit`` and ``jurist compare`` (``--json`` prints their
dicts as they are)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.analysis.outcomes import reasons_text
from jurist.analysis.text import format_baselines, format_prior, share_text
from jurist.analysis.text import interval_text as _ci
from jurist.analysis.text import number_text as _num


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
            buckets = [b for b in agreement.get("accuracy_by_length_ratio") or () if b["trials"]]
            if buckets:
                lines.append(
                    "  accuracy by length of a over b: "
                    + "; ".join(f"{b['bucket']} {share_text(b)} ({b['trials']} rows)" for b in buckets)
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


def _ids(ids: Sequence[str], shown: int) -> str:
    if shown == 0 or not ids:
        return ""
    more = f", ... {len(ids) - shown} more" if len(ids) > shown else ""
    return f" [{', '.join(ids[:shown])}{more}]"


def _pct(share: Mapping[str, Any]) -> str:
    if share.get("estimate") is None:
        return "n/a"
    return f"{100 * share['estimate']:.1f} % [{100 * share['low']:.1f}, {100 * share['high']:.1f}]"


def _difference(label: str, d: Mapping[str, Any] | None) -> str | None:
    if d is None:
        return None
    return (
        f"{label}: mean A {_num(d['mean_a'])}, B {_num(d['mean_b'])}; A - B {_ci(d['difference'])} "
        f"({d['rows']} rows, paired t)"
    )


def format_comparison(report: Mapping[str, Any], shown: int = 10) -> str:
    """The comparison as text: what changed, the agreement, and with labels which judge is better."""
    from jurist.analysis.compare import verdict_text

    a, b = report["a"], report["b"]
    level = round(100 * report["confidence"])
    lines = [
        f"A: {a['source']}, judge {a['judge']} ({a['kind']})",
        f"B: {b['source']}, judge {b['judge']} ({b['kind']})",
        f"{report['rows']} rows matched on row_id, {report['compared_rows']} compared"
        + (
            "; not compared: " + ", ".join(f"{why} {n}" for why, n in report["not_compared"].items())
            if report["not_compared"]
            else ""
        ),
    ]
    agreement = report["agreement"]
    lines.append(
        f"same verdict on {report['same_verdict_rows']} rows: {_pct(agreement['percent'])} ({level} %); "
        f"Cohen's kappa {_ci(agreement['cohen_kappa'])}"
    )
    flipped = sum(f["rows"] for f in report["flips"])
    lines.append(f"flips from A to B: {flipped} rows" + (":" if flipped else ""))
    for flip in report["flips"]:
        lines.append(
            f"  {verdict_text(flip['from'])} -> {verdict_text(flip['to'])}: {flip['rows']} rows"
            + _ids(flip["row_ids"], shown)
        )
    counts = report["verdict_counts"]
    lines.append(
        "verdicts: "
        + "; ".join(
            f"{side} " + ", ".join(f"{v} {n}" for v, n in counts[side].items()) for side in ("A", "B")
        )
    )
    test = report.get("mcnemar")
    if test:
        lines.append(
            f"McNemar ({test['value']}): A {100 * test['share_a']:.1f} % of rows, "
            f"B {100 * test['share_b']:.1f} %; "
            f"p = {test['p_value']:.3g} ({test['method']}; {test['only_a']} rows {test['value']} by A only, "
            f"{test['only_b']} by B only)"
        )
    for key, label in (("verdict_difference", "verdict"), ("score_difference", "score")):
        line = _difference(label, report.get(key))
        if line:
            lines.append(line)
    found = report.get("labels")
    if found:
        lines += _label_lines(found)
    lines.append(report["conclusion"])
    return "\n".join(lines)


def _label_lines(found: Mapping[str, Any]) -> list[str]:
    d = found["difference"]
    lines = [
        f"labels: {found['labelled_rows']} labelled rows compared"
        + (
            f" ({found['labelled_not_compared']} more not compared)" if found["labelled_not_compared"] else ""
        ),
        f"  accuracy A {_pct(found['accuracy_a'])}, B {_pct(found['accuracy_b'])}",
    ]
    for name, base in (found.get("baselines") or {}).items():
        lines.append(f"  baseline {name} ({base['rule']}) on the same rows: {_pct(base)}")
    if d["ppi"] is not None:
        effective = d.get("effective_labels")
        lines.append(
            f"  A - B accuracy over all {d['rows']} compared rows: PPI++ {_ci(d['ppi'])} "
            f"(the verdicts differ on {d['differing_rows']} rows, {d['labelled_differing_rows']} of them "
            f"labelled; prediction: {found['prediction']}, lambda {_num(d['lambda'], 2)}"
            + (f", effective labels {_num(effective, 0)}" if effective is not None else "")
            + ")"
        )
    if d["labels_only"] is not None:
        lines.append(f"  A - B on the labelled rows alone: {_ci(d['labels_only'])}")
    test = found["mcnemar"]
    lines.append(
        f"  McNemar on who is right: A only {test['only_a']}, B only {test['only_b']}, "
        f"p = {test['p_value']:.3g} ({test['method']})"
    )
    return lines
