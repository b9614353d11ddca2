"""A fit's report in words: the head's cross-validated accuracy beside the judge's own verdict and the
baselines on the same rows, each with its 95 % interval, then calibration, the layers and the learning
curve."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurist.analysis.text import share_text


def _line(name: str, found: Mapping[str, Any] | None) -> str | None:
    """A share (:meth:`jurist.stats.share.Share.as_dict`) as one line of the report."""
    if not found or found.get("estimate") is None:
        return None
    return f"  {name:<34} {share_text(found)}  ({found['successes']}/{found['trials']})"


def format_fit(report: Mapping[str, Any], output: str) -> str:
    """What ``jurist probe fit`` prints."""
    model = report.get("model") or {}
    feature = report.get("feature") or {}
    pooled = f", {feature['pooling']} of {feature['field']}'s tokens" if feature.get("field") else ""
    lines = [
        f"probe head for judge {report.get('judge')!r} on {model.get('name')} "
        f"(layer {report['layer']} of {model.get('num_layers')}{pooled}, C {report['c']:g}), "
        f"fitted on {report['rows']} {'pairs' if report.get('kind') == 'preference' else 'rows'} "
        f"labelled by {report.get('labels')} ({report.get('objective', 'labels')})",
        f"accuracy on rows the head did not see ({report['folds']}-fold nested cross-validation):",
    ]
    wanted = [
        ("probe head", report.get("accuracy")),
        ("the judge's own verdict (LOGPROBS)", report.get("own_verdict")),
        ("length rule (fitted per fold)", (report.get("baselines") or {}).get("length_rule")),
        ("majority label", (report.get("baselines") or {}).get("majority")),
    ]
    lines += [line for name, found in wanted if (line := _line(name, found)) is not None]
    target = report.get("target_probability")
    if target and target.get("spearman") is not None:
        lines.append(
            f"  its probabilities against the targets' on those rows: Spearman {target['spearman']:.3f} "
            f"[{target['low']:.3f}, {target['high']:.3f}], mean absolute difference "
            f"{target['mean_absolute_difference']:.3f}"
        )
    auc, own_auc = report.get("confidence_auc"), report.get("own_confidence_auc")
    ece = report.get("ece")
    calibration = f"calibration: ECE {ece:.3f}" if ece is not None else "calibration: -"
    if auc is not None:
        calibration += f"; confidence ranks right over wrong verdicts with AUC {auc:.2f}"
        if own_auc is not None:
            calibration += f" (the judge's own: {own_auc:.2f})"
    lines.append(calibration)
    by_layer = report.get("by_layer") or (report.get("pilot") or {}).get("by_layer") or {}
    if by_layer and report.get("target_probability"):  # soft targets: chosen by their log-likelihood
        lines.append(
            "cross-validated mean log-likelihood of the targets by layer: "
            + ", ".join(f"{layer}: {value:.3f}" for layer, value in by_layer.items())
        )
    elif by_layer:
        lines.append(
            "cross-validated accuracy by layer: "
            + ", ".join(f"{layer}: {100 * value:.1f} %" for layer, value in by_layer.items())
        )
    curve = report.get("learning_curve") or []
    if curve:
        lines.append(
            "learning curve (labels: accuracy on the other rows): "
            + ", ".join(f"{p['labels']}: {100 * p['accuracy']:.1f} %" for p in curve)
        )
    for name, found in (report.get("feature_passes") or {}).items():
        speed = f", {found['rows_per_s']:.2f} rows/s" if found.get("rows_per_s") else " (from the cache)"
        lines.append(f"feature pass ({name}, layers {found['layers']}): {found['rows']} rows{speed}")
    families = report.get("head_families")
    if families:
        lines.append(
            f"head: {families['kept']} ({families['measure']} in nested cross-validation: linear "
            f"{families['linear']:.3f}, MLP of {families['mlp_units']} units {families['mlp']:.3f})"
        )
    cost = report.get("cost")
    if cost:
        shares = ", ".join(f"{k}: {v['of_teacher']:.2f}" for k, v in cost["by_layer"].items())
        lines.append(
            f"cost per row against the whole model in LOGPROBS ({cost['rows']} rows timed here): {shares}; "
            f"within --max-cost {cost['max_cost']}: layers {cost['within']}"
        )
    skipped = {k: v for k, v in (report.get("skipped") or {}).items() if v}
    if skipped:
        lines.append("rows left out: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))
    lines.append(f"wrote {output}")
    return "\n".join(lines)
