"""``jurist estimate``: the PPI++ estimate (:mod:`jurist.stats.estimate`) of the mean label from one judge of
a result table, overall and per group of a column, with the rows left out by why (a failure, a cascade's
``abstained`` ...; :mod:`jurist.analysis.outcomes`).

With ``agreement``, the mean estimated is the judge's agreement with the labels over the rows it gave a
verdict on: ``y`` is 1 where the verdict equals the label, 0 where not, and the judge's score is its
confidence in the verdict (``judgment_confidence``, a cascade's ``confidence`` or ``max(p_a, 1 - p_a)``),
which predicts ``y`` as well as it is calibrated; PPI++ needs no calibration, it only gains less from a
poor one. For a cascade this is the agreement of the verdicts it kept, the figure its thresholds target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurist.analysis.outcomes import count_reasons
from jurist.errors import InputError
from jurist.io.results import JudgeColumns, ResultTable
from jurist.labels.sampling import confidence_column, confidences
from jurist.labels.vocabulary import is_pairwise, label_targets, normalize_labels
from jurist.stats.estimate import FEW_LABELS, MIN_LABELS, MeanEstimate, corrected_mean, difference


def estimate_judge(
    results: ResultTable,
    name: str,
    labels: Sequence[Any],
    *,
    column: str | None = None,
    confidence: float = 0.95,
    by: str | None = None,
    compare: Sequence[str] = (),
    agreement: bool = False,
    probabilities: Sequence[float | None] | None = None,
) -> dict[str, Any]:
    """The PPI++ estimate of the mean label from one judge's ``column`` (default: its score) and one raw
    label per row (None where unlabelled); with ``agreement``, of the share of its verdicts that equal the
    label, from its confidence (``column``, default: the judge's confidence column). With ``by``, one
    estimate per group of that column, and with ``compare`` (two groups) their difference. ``left_out``
    counts the rows without a score (or verdict), by why.

    ``probabilities``: each row's chance of having been chosen for labelling, as a sampling plan records
    it (:meth:`jurist.labels.source.LabelSource.for_results`). Where the labelled rows' probabilities differ,
    each estimate weights them by their inverse (:func:`~jurist.stats.estimate.ppi_weighted_mean`); equal
    probabilities give plain PPI++. A labelled row without a probability was not chosen by the plan (a
    review's label of a row never drawn) and is left out, counted in ``labels_outside_plan``."""
    judge = results.judge(name)
    pairwise = is_pairwise(results, judge)
    truth = normalize_labels(labels, pairwise)
    if agreement:
        target, targets, scores, left_out = _agreement_rows(results, judge, truth, column, pairwise)
    else:
        target = column or judge.score
        results.require(target)
        row_ids = results.values(results.id_column) if results.id_column else None
        targets = label_targets(truth, judge, row_ids)
        scores = [_number(v, target) for v in results.values(target)]
        left_out = count_reasons(results, judge, [v is None for v in scores], "no score")
    chances: list[float | None] = [None] * len(targets) if probabilities is None else list(probabilities)
    if len(chances) != len(targets):
        raise ValueError(f"{len(chances)} probabilities for {len(targets)} rows")
    outside = 0
    if probabilities is not None:  # a label without a probability: a row the plan did not draw
        outside = sum(t is not None and p is None for t, p in zip(targets, chances, strict=True))
        targets = [None if p is None else t for t, p in zip(targets, chances, strict=True)]
    report: dict[str, Any] = {
        "column": target,
        "target": "agreement" if agreement else "mean label",
        "rows": results.num_rows,
        "left_out": left_out,
    }
    if outside:
        report["labels_outside_plan"] = outside
    report["overall"] = _estimate(targets, scores, chances, confidence)
    if by is None:
        if compare:
            raise InputError("--compare names two groups of --by COLUMN; give --by")
        return report
    results.require(by)
    groups = [None if g is None else str(g) for g in results.values(by)]
    names = sorted({g for g in groups if g is not None})
    per_group: dict[str, Any] = {}
    estimates: dict[str, MeanEstimate] = {}
    for group in names:
        members = [i for i, g in enumerate(groups) if g == group]
        member_targets = [targets[i] for i in members]
        labelled = sum(
            t is not None and scores[i] is not None for t, i in zip(member_targets, members, strict=True)
        )
        if labelled < MIN_LABELS:
            per_group[group] = {"skipped": f"{labelled} labelled rows with a score"}
            continue
        estimates[group] = corrected_mean(
            member_targets, [scores[i] for i in members], [chances[i] for i in members], confidence
        )
        per_group[group] = estimates[group].as_dict()
    report["by"] = {"column": by, "groups": per_group}
    if compare:
        if len(compare) != 2:
            raise InputError(f"--compare takes two groups of {by!r}, not {len(compare)}")
        for group in compare:
            if group not in estimates:
                raise InputError(
                    f"--compare group {group!r} has no estimate (groups of {by!r}: {', '.join(names)})"
                )
        first, second = compare
        report["compare"] = {
            "first": first,
            "second": second,
            **difference(estimates[first], estimates[second], confidence),
        }
    return report


def _agreement_rows(
    results: ResultTable,
    judge: JudgeColumns,
    truth: Sequence[Any],
    column: str | None,
    pairwise: bool,
) -> tuple[str, list[float | None], list[float | None], dict[str, int]]:
    """(confidence column, per row 1/0 for a verdict equal / unequal to the label (None: unlabelled),
    per row the confidence where there is a verdict, rows left out by why)."""
    if column is not None:
        results.require(column)
        conf = [_number(v, column) for v in results.values(column)]
        source = column
    else:
        found = confidences(results, judge)
        if found is None:
            raise InputError(
                f"judge {judge.name!r} has no confidence column (LOGPROBS scoring writes one; a cascade has "
                f"{judge.name}.confidence): name one with --column"
            )
        conf = found
        source = confidence_column(judge) or judge.column("p_a")
    verdicts = [None if v == "inconclusive" else v for v in results.values(judge.verdict)]
    missing = [v is None for v in verdicts]
    left_out = count_reasons(results, judge, missing, "inconclusive" if pairwise else "no verdict")
    unsure = [v is not None and c is None for v, c in zip(verdicts, conf, strict=True)]
    if any(unsure):
        left_out["no confidence"] = sum(unsure)
    scores = [None if v is None else c for v, c in zip(verdicts, conf, strict=True)]
    targets = [
        None if t is None or v is None else float(v == t) for v, t in zip(verdicts, truth, strict=True)
    ]
    return source, targets, scores, left_out


def _estimate(
    targets: Sequence[float | None],
    scores: Sequence[float | None],
    chances: Sequence[float | None],
    confidence: float,
) -> dict[str, Any]:
    estimate = corrected_mean(targets, scores, chances, confidence)
    out = estimate.as_dict()
    if estimate.labelled < FEW_LABELS:
        out["warning"] = (
            f"only {estimate.labelled} labelled rows match: the interval's normal approximation wants "
            f"{FEW_LABELS} or more"
        )
    return out


def _number(value: Any, column: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return float(value)
    raise InputError(
        f"column {column!r} holds {type(value).__name__} values, not numbers: pick a score column"
    )
