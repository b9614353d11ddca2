"""A judge's known biases, measured on its own results, and its agreement with labels, each with an interval.

Per judge, :func:`audit_judge` reports what the results allow:

* ``position`` (pairwise judges): the share of order verdicts that name the answer shown first, and the
  share of rows whose two orders agree (order consistency); Wilson intervals; where the judge scored both
  orders' probabilities, ``prior``: the mean log-odds it gives the first-shown answer, with its t interval
  (:mod:`jurist.stats.position`);
* ``length``: the OLS slope of the score on the judged response's length per 100 characters (or tokens),
  with its t interval (``scipy.stats.linregress``); for a pairwise judge, of ``p_a`` on the length of
  answer a minus that of answer b. With labels, the same slope of the judge's error (score minus the
  label's value): its bias beyond the truth;
* ``lean``: each verdict's share from the judge beside each label's share in the labels;
* ``confidence`` (LOGPROBS results: a ``judgment_confidence`` or ``p_a`` column, or a cascade's
  ``confidence``): the confidence's distribution and, with labels, a reliability table (accuracy by
  confidence bin), ECE (:func:`jurist.stats.calibration.expected_calibration_error`) and the Brier
  score of the confidence as a forecast of a correct verdict;
* with labels, ``agreement``: accuracy (an undecided verdict counts as wrong), accuracy on the decided
  rows and Cohen's kappa (decided rows), with percentile bootstrap intervals (``scipy.stats.bootstrap``,
  seeded), the baselines on the same rows and, for a pairwise judge, its accuracy by bucket of answer a's
  length over b's (:mod:`jurist.stats.baselines`), and the labelled rows
  without a verdict by why (``undecided``: a failure's status, a cascade's ``abstained``, ...;
  :mod:`jurist.analysis.outcomes`); and for a keep rule
  (``jurist filter``'s gates and ``--where``), its precision and recall against the good rows (label
  value at least ``good_at``), Wilson intervals (each share a :class:`~jurist.stats.share.Share` as a dict).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jurist.analysis.filtering import FilterRules, filter_table
from jurist.analysis.outcomes import count_reasons, row_reasons
from jurist.errors import InputError
from jurist.io.results import JudgeColumns, ResultTable
from jurist.labels.sampling import confidences
from jurist.labels.vocabulary import is_pairwise, label_targets, normalize_labels, order_labels
from jurist.stats.baselines import accuracy_by_length_ratio, baselines, compare_to_baselines
from jurist.stats.calibration import expected_calibration_error, reliability
from jurist.stats.position import position_prior
from jurist.stats.share import Share

RESAMPLES = 2000


@dataclass(frozen=True)
class AuditOptions:
    """What the audit reads beside the judge's columns: the judged response's column (two for a pairwise
    judge), a token-count column to measure length by, the keep rule, the confidence and the seed."""

    response: str | None = None
    pair_responses: tuple[str, str] | None = None
    tokens: str | None = None
    where: tuple[str, ...] = ()
    good_at: float = 1.0
    confidence: float = 0.95
    seed: int = 0


def slope(x: Sequence[float], y: Sequence[float], confidence: float) -> dict[str, Any] | None:
    """The OLS slope of y on x with its t interval (n - 2 degrees of freedom); None below 3 points or
    when x does not vary."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xs) < 3 or np.ptp(xs) == 0:
        return None
    from scipy import stats

    fit = stats.linregress(xs, ys)
    half = float(stats.t.ppf(0.5 + confidence / 2, len(xs) - 2) * fit.stderr)
    return {
        "slope": float(fit.slope),
        "low": float(fit.slope - half),
        "high": float(fit.slope + half),
        "intercept": float(fit.intercept),
        "r": float(fit.rvalue),
        "rows": len(xs),
    }


POINTWISE_RESPONSES = ("response", "output", "answer", "completion")
PAIR_RESPONSES = (("response_a", "output_1", "answer_a"), ("response_b", "output_2", "answer_b"))


def default_responses(results: ResultTable, judge: JudgeColumns) -> AuditOptions:
    """Options naming the judged response's column(s) when the results carry them: for a pairwise judge
    the first of its config's ``response_a_field`` / ``response_b_field`` present, else the first of
    ``response``, ``output``, ``answer``, ``completion`` (and its token count, ``<column>_tokens``)."""
    present = results.table.column_names
    if judge.pairwise:
        fields = list(PAIR_RESPONSES)
        for entry in results.metadata.get("judges") or ():
            if isinstance(entry, dict) and entry.get("name") == judge.name:
                pair = (entry.get("config") or {}).get("pairwise_judge_params") or {}
                fields = [pair.get("response_a_field", fields[0]), pair.get("response_b_field", fields[1])]
        a = next((c for c in fields[0] if c in present), None)
        b = next((c for c in fields[1] if c in present), None)
        return AuditOptions(pair_responses=(a, b) if a and b else None)
    response = next((c for c in POINTWISE_RESPONSES if c in present), None)
    counts = f"{response}_tokens"
    return AuditOptions(response=response, tokens=counts if counts in present else None)


def _accuracy(correct: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(correct, axis=axis))


def _kappa(predicted: np.ndarray, truth: np.ndarray, axis: int = -1) -> np.ndarray:
    """Cohen's kappa of integer-coded sequences, vectorized over resamples."""
    codes = np.union1d(np.unique(predicted), np.unique(truth))
    observed = np.mean(predicted == truth, axis=axis)
    chance = sum(np.mean(predicted == c, axis=axis) * np.mean(truth == c, axis=axis) for c in codes)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(chance < 1, (observed - chance) / (1 - chance), np.nan))


def _bootstrap(data: tuple[np.ndarray, ...], statistic: Any, options: AuditOptions) -> dict[str, Any]:
    point = float(statistic(*data))
    if len(data[0]) < 2 or not np.isfinite(point):
        return {"estimate": point if np.isfinite(point) else None, "low": None, "high": None}
    from scipy import stats

    result = stats.bootstrap(
        data,
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        confidence_level=options.confidence,
        method="percentile",
        rng=np.random.default_rng(options.seed),
    )
    low, high = result.confidence_interval
    finite = np.isfinite(low) and np.isfinite(high)
    return {"estimate": point, "low": float(low) if finite else None, "high": float(high) if finite else None}


def _position(results: ResultTable, judge: JudgeColumns, options: AuditOptions) -> dict[str, Any] | None:
    ab, ba = judge.get("ab_judgment"), judge.get("ba_judgment")
    if not judge.pairwise or ab is None or ba is None:
        return None
    first, second, _tie = order_labels(results, judge.name)
    verdicts = [v for column in (ab, ba) for v in results.values(column) if v in (first, second)]
    out = {"first_shown_wins": Share(verdicts.count(first), len(verdicts), options.confidence).as_dict()}
    consistent = judge.get("position_consistent")
    if consistent is not None:
        flags = [f for f in results.values(consistent) if f is not None]
        out["order_consistency"] = Share.of(flags, options.confidence).as_dict()
    p_ab, p_ba = judge.get("ab_p_first"), judge.get("ba_p_first")
    if p_ab is not None and p_ba is not None:
        prior = position_prior(results.values(p_ab), results.values(p_ba), options.confidence)
        if prior is not None:
            out["prior"] = prior
    return out


def response_lengths(results: ResultTable, judge: JudgeColumns, options: AuditOptions) -> list[float | None]:
    """Per row, the judged response's length (a pairwise judge: answer a's minus answer b's), in
    characters, or in tokens from ``options.tokens``; None where a text is missing."""
    if options.tokens is not None:
        return [None if v is None else float(v) for v in results.values(options.tokens)]
    if judge.pairwise:
        if options.pair_responses is None:
            return []
        a, b = (_characters(results, c) for c in options.pair_responses)
        return [None if x is None or y is None else x - y for x, y in zip(a, b, strict=True)]
    if options.response is None:
        return []
    return _characters(results, options.response)


def pair_lengths(results: ResultTable, judge: JudgeColumns) -> list[tuple[float, float] | None] | None:
    """Per row of a pairwise judge's results, the lengths in characters of answers a and b (None where a
    text is missing); None when the results do not carry the answers (:func:`default_responses`)."""
    columns = default_responses(results, judge).pair_responses
    if columns is None:
        return None
    a, b = (_characters(results, c) for c in columns)
    return [None if x is None or y is None else (x, y) for x, y in zip(a, b, strict=True)]


def _characters(results: ResultTable, column: str) -> list[float | None]:
    results.require(column)
    values = results.table.column(column)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return [None if v is None else float(len(str(v))) for v in values.to_pylist()]
    return [None if n is None else float(n) for n in pc.utf8_length(values).to_pylist()]


def _length(
    results: ResultTable,
    judge: JudgeColumns,
    targets: list[float | None] | None,
    options: AuditOptions,
) -> dict[str, Any] | None:
    """The length section: by characters when the response text is there, and by tokens too when a
    token-count column is given (``tokens``: the same fields)."""
    if not judge.has("score"):
        return None
    scores = results.values(judge.score)
    side = " (a minus b)" if judge.pairwise else ""
    out: dict[str, Any] | None = None
    characters = response_lengths(results, judge, replace(options, tokens=None))
    if characters:
        out = _length_fits(characters, scores, targets, f"100 characters{side}", options.confidence)
    if options.tokens is not None:
        tokens = _length_fits(
            response_lengths(results, judge, options), scores, targets, "100 tokens", options.confidence
        )
        out = tokens if out is None else {**out, "tokens": tokens}
    return out


def _length_fits(
    lengths: list[float | None],
    scores: list[Any],
    targets: list[float | None] | None,
    unit: str,
    confidence: float,
) -> dict[str, Any]:
    rows = [(n / 100, s) for n, s in zip(lengths, scores, strict=True) if n is not None and s is not None]
    out: dict[str, Any] = {
        "unit": unit,
        "score": slope([r[0] for r in rows], [r[1] for r in rows], confidence),
    }
    if targets is not None:
        errors = [
            (n / 100, s - t)
            for n, s, t in zip(lengths, scores, targets, strict=True)
            if n is not None and s is not None and t is not None
        ]
        out["error"] = slope([e[0] for e in errors], [e[1] for e in errors], confidence)
    return out


def _lean(verdicts: list[Any], truth: list[Any] | None) -> dict[str, Any]:
    decided = [v for v in verdicts if v is not None]
    judged = Counter(str(v) for v in decided)
    labelled = Counter(str(t) for t in truth or () if t is not None)
    total_labels = sum(labelled.values())
    return {
        str(key): {
            "judge": judged[key] / len(decided) if decided else None,
            "labels": labelled[key] / total_labels if total_labels else None,
        }
        for key in sorted(set(judged) | set(labelled))
    }


def _confidence(
    results: ResultTable, judge: JudgeColumns, verdicts: list[Any], truth: list[Any] | None
) -> dict[str, Any] | None:
    conf = confidences(results, judge)
    if conf is None:
        return None
    present = [c for c in conf if c is not None]
    out: dict[str, Any] = {"rows": len(present), "mean": float(np.mean(present)) if present else None}
    if truth is None:
        out["reliability"] = reliability(present, None)
        return out
    pairs = [
        (c, v == t) for c, v, t in zip(conf, verdicts, truth, strict=True) if c is not None and t is not None
    ]
    values, correct = [p[0] for p in pairs], [p[1] for p in pairs]
    out["labelled_rows"] = len(pairs)
    out["ece"] = expected_calibration_error(values, correct)
    out["brier"] = (
        float(np.mean((np.asarray(values) - np.asarray(correct, dtype=float)) ** 2)) if pairs else None
    )
    out["reliability"] = reliability(values, correct)
    return out


def _agreement(
    results: ResultTable, judge: JudgeColumns, verdicts: list[Any], truth: list[Any], options: AuditOptions
) -> dict[str, Any]:
    labelled = [i for i, t in enumerate(truth) if t is not None]
    correct = np.asarray([verdicts[i] == truth[i] for i in labelled], dtype=float)
    decided = [i for i in labelled if verdicts[i] is not None]
    right = np.asarray([verdicts[i] == truth[i] for i in decided], dtype=float)
    codes = {v: k for k, v in enumerate(sorted({str(x) for i in decided for x in (verdicts[i], truth[i])}))}
    predicted = np.asarray([codes[str(verdicts[i])] for i in decided], dtype=float)
    actual = np.asarray([codes[str(truth[i])] for i in decided], dtype=float)
    lengths = pair_lengths(results, judge) if judge.pairwise else None
    found = baselines(truth, pairwise=judge.pairwise, lengths=lengths)
    by_ratio = None
    if lengths is not None:
        by_ratio = accuracy_by_length_ratio([bool(c) for c in correct], [lengths[i] for i in labelled])
    return {
        "baselines": compare_to_baselines(Share(int(correct.sum()), len(labelled)), found),
        **({"accuracy_by_length_ratio": by_ratio} if by_ratio is not None else {}),
        "labelled_rows": len(labelled),
        "decided_rows": len(decided),
        "accuracy": _bootstrap((correct,), _accuracy, options),
        "accuracy_decided": _bootstrap((right,), _accuracy, options)
        if decided
        else {"estimate": None, "low": None, "high": None},
        "cohen_kappa": _bootstrap((predicted, actual), _kappa, options),
        "undecided": count_reasons(
            results,
            judge,
            [v is None for v in verdicts],
            "inconclusive" if judge.pairwise else "no verdict",
            labelled,
        ),
    }


def keep_mask(table: pa.Table, where: Sequence[str]) -> list[bool]:
    """Which rows ``jurist filter`` keeps with its default gates and these ``--where`` predicates."""
    indexed = table.append_column("__audit_row", pa.array(range(table.num_rows), pa.int64()))
    kept, _ = filter_table(indexed, FilterRules(where=tuple(where), keep_judge_columns=True))
    rows = set(kept.column("__audit_row").to_pylist())
    return [i in rows for i in range(table.num_rows)]


def _keep_rule(kept: list[bool], targets: list[float | None], options: AuditOptions) -> dict[str, Any]:
    labelled = [(k, t >= options.good_at) for k, t in zip(kept, targets, strict=True) if t is not None]
    true_keeps = sum(k and good for k, good in labelled)
    return {
        "where": list(options.where),
        "good_at": options.good_at,
        "kept_rows": sum(kept),
        "precision": Share(true_keeps, sum(k for k, _ in labelled), options.confidence).as_dict(),
        "recall": Share(true_keeps, sum(good for _, good in labelled), options.confidence).as_dict(),
    }


def audit_judge(
    results: ResultTable,
    name: str,
    labels: Sequence[Any] | None = None,
    options: AuditOptions | None = None,
) -> dict[str, Any]:
    """The audit of one judge (see the module's docstring); ``labels``: one raw label per row or None."""
    options = options or AuditOptions()
    judge = results.judge(name)
    pairwise = is_pairwise(results, judge)
    verdicts = results.values(judge.verdict)
    if pairwise:
        verdicts = [None if v == "inconclusive" else v for v in verdicts]
    truth = None if labels is None else normalize_labels(labels, pairwise)
    row_ids = results.values(results.id_column) if results.id_column else None
    targets = None if truth is None else label_targets(truth, judge, row_ids)
    statuses = Counter(row_reasons(results, judge, "ok")) if judge.has("status") else Counter()
    report: dict[str, Any] = {"kind": judge.kind, "rows": results.num_rows, "statuses": dict(statuses)}
    sections = {
        "position": _position(results, judge, options),
        "length": _length(results, judge, targets, options),
        "lean": _lean(verdicts, truth),
        "confidence": _confidence(results, judge, verdicts, truth),
    }
    if truth is not None and targets is not None:
        if not any(t is not None for t in truth):
            raise InputError("no result row has a label")
        sections["agreement"] = _agreement(results, judge, verdicts, truth, options)
        if options.where:
            sections["keep_rule"] = _keep_rule(keep_mask(results.table, options.where), targets, options)
    report.update({k: v for k, v in sections.items() if v is not None})
    return report
