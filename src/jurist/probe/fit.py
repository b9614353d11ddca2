"""Fitting a probe head, and the numbers that say whether to trust it.

A head (:class:`~jurist.models.probe_head.LinearHead`, the class judging reads a head file with) is a
logistic regression (scikit-learn; features standardised) on each prompt's state, fitted on the
label each prompt should get (:meth:`~jurist.probe.examples.Shape.prompt_targets`); a row's verdict combines
its prompts as the judge does. The layer and the regularisation are chosen by cross-validation over rows
(both prompts of a row stay in one fold). Every figure a fit reports is measured on rows the head did not
see: the accuracy comes from nested cross-validation (the layer and regularisation chosen again inside each
outer training fold), so choosing among many candidates does not flatter it. Beside it, on the same rows:
the judge's own verdict (LOGPROBS), the majority label and, for pairs, a fitted length rule ("in these rows
the longer, or the shorter, answer wins", its direction chosen on each training fold;
:mod:`jurist.stats.baselines`), each a :class:`~jurist.stats.share.Share` with its Wilson 95 % interval;
the head's expected calibration error (:func:`jurist.stats.calibration.expected_calibration_error`); how
well its confidence ranks its right verdicts above its wrong ones (AUC); and a learning curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jurist.errors import InputError
from jurist.models.probe_head import LinearHead
from jurist.probe.examples import Examples, Shape
from jurist.stats.baselines import fitted_length_rule, fitted_majority
from jurist.stats.calibration import expected_calibration_error
from jurist.stats.ranking import spearman
from jurist.stats.share import Share

DEFAULT_CS = (0.003, 0.03, 0.3, 3.0)
"""Inverse regularisation strengths a fit chooses from (features standardised; a few hundred rows of
hundreds of dimensions want strong regularisation)."""


@dataclass(frozen=True)
class FitSettings:
    """How a head is chosen: ``folds`` outer folds (nested cross-validation), ``inner_folds`` inside each,
    the regularisation grid ``cs``, the learning curve's sizes ``curve`` (each drawn ``repeats`` times)."""

    cs: tuple[float, ...] = DEFAULT_CS
    folds: int = 10
    inner_folds: int = 5
    curve: tuple[int, ...] = (25, 50, 100, 200, 400)
    repeats: int = 5
    seed: int = 0


@dataclass
class FitResult:
    """The chosen layer and regularisation, the head fitted on every row, and the report."""

    layer: int
    c: float
    head: LinearHead
    report: dict[str, Any] = field(default_factory=dict)


def train(
    shape: Shape, states: np.ndarray, truth: np.ndarray, c: float, soft: np.ndarray | None = None
) -> LinearHead:
    """A head on rows' prompt states (rows x prompts x hidden size) and row classes (or, for a pointwise
    judge, class distributions ``soft``: rows x classes)."""
    return train_path(shape, states, truth, (c,), soft)[0]


def train_path(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    cs: Sequence[float],
    soft: np.ndarray | None = None,
) -> list[LinearHead]:
    """One head per C of ``cs`` on the same rows (as :func:`train`), fitted in order of increasing C, each
    started from the previous one's weights: the weaker the regularisation, the more iterations a fit
    from zero needs (3.5x less time over the default grid, measured on 500 LLMBar pairs). Soft targets are
    the cross-entropy with each row's class distribution: every (prompt, class) is a sample weighted by the
    class's probability. A preference shape is fitted as Bradley-Terry (:func:`_preference_path`)."""
    from sklearn.linear_model import LogisticRegression

    x = states.reshape(-1, states.shape[-1]).astype(np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-8] = 1.0
    if shape.kind == "preference":
        return _preference_path(shape, (states - mean) / scale, truth, cs, mean, scale)
    if soft is None:
        y = np.asarray([t for cls in truth for t in shape.prompt_targets(int(cls))])
        weights = np.ones(len(y))
    else:  # one prompt per row: a sample per (row, class) with some probability
        rows, y = np.nonzero(soft > 0)
        x, weights = x[rows], soft[rows, y]
    labels = len(shape.labels)
    present = sorted(set(y.tolist()))
    if len(present) == 1:
        coef = np.zeros((labels, x.shape[1]))
        intercept = np.full(labels, -30.0)  # a label never seen in training gets (almost) no mass
        intercept[present[0]] = 0.0
        return [LinearHead(mean, scale, coef, intercept) for _ in cs]
    standard = (x - mean) / scale
    model = LogisticRegression(max_iter=2000, warm_start=True)
    heads: dict[float, LinearHead] = {}
    for c in sorted(set(cs)):
        model.set_params(C=c)
        model.fit(standard, y, sample_weight=weights)
        coef = np.zeros((labels, x.shape[1]))
        intercept = np.full(labels, -30.0)
        if len(present) == 2:  # scikit-learn's binary model: one row of logits for the second class
            coef[present[1]] = model.coef_[0]
            intercept[present[0]], intercept[present[1]] = 0.0, float(model.intercept_[0])
        else:
            for row, cls in enumerate(model.classes_):
                coef[int(cls)] = model.coef_[row]
                intercept[int(cls)] = model.intercept_[row]
        heads[c] = LinearHead(mean, scale, coef, intercept)
    return [heads[c] for c in cs]


def _preference_path(
    shape: Shape, z: np.ndarray, truth: np.ndarray, cs: Sequence[float], mean: np.ndarray, scale: np.ndarray
) -> list[LinearHead]:
    """Bradley-Terry reward heads: ``r(x) = w . z(x) + b`` with ``P(a preferred) = sigmoid(r(a) - r(b))``, a
    logistic regression without intercept on the pairs' differences ``z(a) - z(b)`` (each pair also
    mirrored, so no side is favoured). ``b`` centres the rewards of the training responses on zero, so the
    head's good label has probability ``sigmoid(r)``: above one half for a response better than the typical
    one it was fitted on. As label logits: ``r`` on the good label, 0 on the other."""
    from sklearn.linear_model import LogisticRegression

    difference = z[:, 0] - z[:, 1]
    x = np.concatenate([difference, -difference])
    y = np.concatenate([truth == 0, truth != 0]).astype(int)
    model = LogisticRegression(max_iter=2000, warm_start=True, fit_intercept=False)
    heads: dict[float, LinearHead] = {}
    for c in sorted(set(cs)):
        model.set_params(C=c)
        model.fit(x, y)
        w = model.coef_[0]
        coef = np.zeros((2, z.shape[-1]))
        coef[shape.yes] = w
        intercept = np.zeros(2)
        intercept[shape.yes] = -float(np.mean(z.reshape(-1, z.shape[-1]) @ w))
        heads[c] = LinearHead(mean, scale, coef, intercept)
    return [heads[c] for c in cs]


def row_probabilities(shape: Shape, head: LinearHead, states: np.ndarray) -> np.ndarray:
    """Row-level class probabilities of rows' prompt states (rows x prompts x hidden size)."""
    return shape.row_probabilities(head.probabilities(states))


def folds_of(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``k`` folds of row indices 0..n-1 (shuffled; sizes differ by at most one)."""
    return [np.sort(part) for part in np.array_split(rng.permutation(n), min(k, n))]


def _accuracy(probs: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(probs.argmax(axis=1) == truth)) if len(truth) else 0.0


def choose(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    settings: FitSettings,
    rng: np.random.Generator,
    soft: np.ndarray | None = None,
) -> tuple[int, float, dict[tuple[int, float], float]]:
    """The layer (index into the features' layers) and C with the best cross-validated row accuracy on
    these rows (ties: the earlier layer, then the stronger regularisation), and every candidate's accuracy;
    with soft targets, the best mean log-likelihood of the target distributions instead (what the head is
    fitted to: a teacher that says Yes to most rows makes accuracy a poor judge of its probabilities)."""
    folds = folds_of(len(truth), settings.inner_folds, rng)
    scores: dict[tuple[int, float], float] = {}
    for li in range(states.shape[2]):
        total = dict.fromkeys(settings.cs, 0.0)
        for test in folds:
            train_rows = np.setdiff1d(np.arange(len(truth)), test)
            heads = train_path(
                shape, states[train_rows, :, li], truth[train_rows], settings.cs, _at(soft, train_rows)
            )
            for c, head in zip(settings.cs, heads, strict=True):
                probs = row_probabilities(shape, head, states[test, :, li])
                if soft is None:
                    total[c] += float(np.sum(probs.argmax(axis=1) == truth[test]))
                else:
                    total[c] += float(np.sum(soft[test] * np.log(np.clip(probs, 1e-12, 1.0))))
        for c in settings.cs:
            scores[(li, c)] = total[c] / len(truth)
    best = max(scores.values())
    li, c = next(key for key, value in scores.items() if value == best)
    return li, c, scores


def fit(
    found: Examples, states: np.ndarray, own: np.ndarray | None, layers: Sequence[int], settings: FitSettings
) -> FitResult:
    """Choose, measure and fit a head (see the module docstring). ``states``: rows x prompts x layers x
    hidden size; ``own``: the judge's own label probabilities (rows x prompts x labels) or None."""
    shape, truth, soft = found.shape, found.truth, found.soft
    n = len(truth)
    if n < 2 * settings.folds or len(set(truth.tolist())) < 2:
        raise InputError(
            f"a probe head needs at least {2 * settings.folds} labelled rows with both verdicts among them "
            f"(got {n}, verdicts {sorted(set(truth.tolist()))}); label more rows or give fewer --folds"
        )
    rng = np.random.default_rng(settings.seed)
    outer = folds_of(n, settings.folds, rng)
    head_probs = np.zeros((n, len(shape.classes)))
    length_right = np.zeros(n, dtype=bool)
    majority_right = np.zeros(n, dtype=bool)
    classes, sides = truth.tolist(), [shape.classes[t] for t in truth.tolist()]
    paired = any(pair is not None for pair in found.lengths)  # answers' lengths: the length rule
    chosen: list[int] = []
    for test in outer:
        train_rows = np.setdiff1d(np.arange(n), test)
        li, c, _ = choose(shape, states[train_rows], truth[train_rows], settings, rng, _at(soft, train_rows))
        chosen.append(layers[li])
        head = train(shape, states[train_rows, :, li], truth[train_rows], c, _at(soft, train_rows))
        head_probs[test] = row_probabilities(shape, head, states[test, :, li])
        majority_right[test] = fitted_majority(classes, train_rows.tolist(), test.tolist())
        if paired:
            length_right[test] = fitted_length_rule(found.lengths, sides, train_rows.tolist(), test.tolist())
    li, c, grid = choose(shape, states, truth, settings, rng, soft)
    head = train(shape, states[:, :, li], truth, c, soft)
    correct = head_probs.argmax(axis=1) == truth
    confidence = head_probs.max(axis=1)
    report: dict[str, Any] = {
        "rows": n,
        "skipped": found.skipped,
        "layer": layers[li],
        "c": c,
        "folds": len(outer),
        "layers_chosen_in_folds": chosen,
        "accuracy": Share.of(correct).as_dict(),
        "ece": expected_calibration_error(confidence, correct),
        "confidence_auc": _auc(confidence, correct),
        "baselines": {"majority": Share.of(majority_right).as_dict()},
        "by_layer": accuracy_by_layer(grid, layers, settings.cs),
        "learning_curve": learning_curve(shape, states[:, :, li], truth, c, settings, soft),
    }
    if soft is not None:  # distilled: how the head's probabilities follow the targets' on unseen rows
        report["target_probability"] = probability_agreement(head_probs, soft)
    if paired:
        report["baselines"]["length_rule"] = Share.of(length_right).as_dict()
    if own is not None:
        own_probs = shape.row_probabilities(own)
        own_correct = own_probs.argmax(axis=1) == truth
        report["own_verdict"] = Share.of(own_correct).as_dict()
        report["own_confidence_auc"] = _auc(own_probs.max(axis=1), own_correct)
    return FitResult(layers[li], c, head, report)


def learning_curve(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    c: float,
    settings: FitSettings,
    soft: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """Accuracy on the other rows of a head fitted on k random rows, for each k of the curve below the row
    count, averaged over ``repeats`` draws (the layer and C fixed at the fit's choice)."""
    rng = np.random.default_rng(settings.seed + 1)
    n = len(truth)
    out = []
    for k in settings.curve:
        if k >= n - 5:
            continue
        accuracies = []
        for _ in range(settings.repeats):
            order = rng.permutation(n)
            train_rows, test = order[:k], order[k:]
            if len(set(truth[train_rows].tolist())) < 2:
                continue
            head = train(shape, states[train_rows], truth[train_rows], c, _at(soft, train_rows))
            accuracies.append(_accuracy(row_probabilities(shape, head, states[test]), truth[test]))
        if accuracies:
            out.append({"labels": k, "accuracy": float(np.mean(accuracies)), "draws": len(accuracies)})
    return out


def _at(soft: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if soft is None else soft[rows]


def probability_agreement(probs: np.ndarray, targets: np.ndarray) -> dict[str, Any]:
    """How a head's class probabilities (rows x classes, measured on rows it did not see) follow target
    distributions: Spearman's correlation of the expected class index (the first class's probability, for
    two), with its 95 % interval (:func:`jurist.stats.ranking.spearman`), and the mean absolute difference of
    the probabilities."""
    index = np.arange(probs.shape[1])
    head, target = (probs @ index, targets @ index) if probs.shape[1] > 2 else (probs[:, 0], targets[:, 0])
    return {
        **spearman(head, target).as_dict(),
        "mean_absolute_difference": float(np.mean(np.abs(probs - targets))),
    }


def accuracy_by_layer(
    grid: dict[tuple[int, float], float], layers: Sequence[int], cs: Sequence[float]
) -> dict[str, float]:
    """Each layer's cross-validated accuracy at its best C (from :func:`choose`'s grid; with soft targets,
    its mean log-likelihood of them)."""
    return {str(layers[li]): max(grid[(li, c)] for c in cs) for li in range(len(layers))}


def _auc(confidence: np.ndarray, correct: np.ndarray) -> float | None:
    """The AUC of confidence separating right verdicts from wrong ones (None when all are one or the
    other)."""
    if correct.all() or not correct.any():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(correct.astype(int), confidence))
