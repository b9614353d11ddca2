"""Fitting a probe head, and the numbers that say whether to trust it.

A head is a logistic regression (scikit-learn; features standardised) on each prompt's state, fitted on the
label each prompt should get (:meth:`~jurist.probe.examples.Shape.prompt_targets`); a row's verdict combines
its prompts as the judge does. The layer and the regularisation are chosen by cross-validation over rows
(both prompts of a row stay in one fold). Every figure a fit reports is measured on rows the head did not
see: the accuracy comes from nested cross-validation (the layer and regularisation chosen again inside each
outer training fold), so choosing among many candidates does not flatter it. Beside it, on the same rows:
the judge's own verdict (LOGPROBS), the majority label and, for pairs, a fitted length rule ("in these rows
the longer, or the shorter, answer wins", its direction chosen on each training fold), each with a Wilson
95 % interval; the head's expected calibration error; how well its confidence ranks its right verdicts above
its wrong ones (AUC); and a learning curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jurist.analysis.agreement import wilson_interval
from jurist.errors import InputError
from jurist.probe.examples import Examples, Shape

DEFAULT_CS = (0.003, 0.03, 0.3, 3.0)
"""Inverse regularisation strengths a fit chooses from (features standardised; a few hundred rows of
hundreds of dimensions want strong regularisation)."""
ECE_BINS = 10


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


@dataclass(frozen=True)
class Linear:
    """A fitted head in arrays: standardisation and per-label logits (labels x hidden size)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray

    def label_probabilities(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.coef.T + self.intercept
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=-1, keepdims=True))


@dataclass
class FitResult:
    """The chosen layer and regularisation, the head fitted on every row, and the report."""

    layer: int
    c: float
    head: Linear
    report: dict[str, Any] = field(default_factory=dict)


def train(shape: Shape, states: np.ndarray, truth: np.ndarray, c: float) -> Linear:
    """A head on rows' prompt states (rows x prompts x hidden size) and row classes."""
    return train_path(shape, states, truth, (c,))[0]


def train_path(shape: Shape, states: np.ndarray, truth: np.ndarray, cs: Sequence[float]) -> list[Linear]:
    """One head per C of ``cs`` on the same rows (as :func:`train`), fitted in order of increasing C, each
    started from the previous one's weights: the weaker the regularisation, the more iterations a fit
    from zero needs (3.5x less time over the default grid, measured on 500 LLMBar pairs)."""
    from sklearn.linear_model import LogisticRegression

    x = states.reshape(-1, states.shape[-1]).astype(np.float64)
    y = np.asarray([t for cls in truth for t in shape.prompt_targets(int(cls))])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-8] = 1.0
    labels = len(shape.labels)
    present = sorted(set(y.tolist()))
    if len(present) == 1:
        coef = np.zeros((labels, x.shape[1]))
        intercept = np.full(labels, -30.0)  # a label never seen in training gets (almost) no mass
        intercept[present[0]] = 0.0
        return [Linear(mean, scale, coef, intercept) for _ in cs]
    standard = (x - mean) / scale
    model = LogisticRegression(max_iter=2000, warm_start=True)
    heads: dict[float, Linear] = {}
    for c in sorted(set(cs)):
        model.set_params(C=c)
        model.fit(standard, y)
        coef = np.zeros((labels, x.shape[1]))
        intercept = np.full(labels, -30.0)
        if len(present) == 2:  # scikit-learn's binary model: one row of logits for the second class
            coef[present[1]] = model.coef_[0]
            intercept[present[0]], intercept[present[1]] = 0.0, float(model.intercept_[0])
        else:
            for row, cls in enumerate(model.classes_):
                coef[int(cls)] = model.coef_[row]
                intercept[int(cls)] = model.intercept_[row]
        heads[c] = Linear(mean, scale, coef, intercept)
    return [heads[c] for c in cs]


def row_probabilities(shape: Shape, head: Linear, states: np.ndarray) -> np.ndarray:
    """Row-level class probabilities of rows' prompt states (rows x prompts x hidden size)."""
    return shape.row_probabilities(head.label_probabilities(states.astype(np.float64)))


def folds_of(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``k`` folds of row indices 0..n-1 (shuffled; sizes differ by at most one)."""
    return [np.sort(part) for part in np.array_split(rng.permutation(n), min(k, n))]


def _accuracy(probs: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(probs.argmax(axis=1) == truth)) if len(truth) else 0.0


def choose(
    shape: Shape, states: np.ndarray, truth: np.ndarray, settings: FitSettings, rng: np.random.Generator
) -> tuple[int, float, dict[tuple[int, float], float]]:
    """The layer (index into the features' layers) and C with the best cross-validated row accuracy on
    these rows (ties: the earlier layer, then the stronger regularisation), and every candidate's accuracy."""
    folds = folds_of(len(truth), settings.inner_folds, rng)
    scores: dict[tuple[int, float], float] = {}
    for li in range(states.shape[2]):
        right = dict.fromkeys(settings.cs, 0)
        for test in folds:
            train_rows = np.setdiff1d(np.arange(len(truth)), test)
            heads = train_path(shape, states[train_rows, :, li], truth[train_rows], settings.cs)
            for c, head in zip(settings.cs, heads, strict=True):
                probs = row_probabilities(shape, head, states[test, :, li])
                right[c] += int(np.sum(probs.argmax(axis=1) == truth[test]))
        for c in settings.cs:
            scores[(li, c)] = right[c] / len(truth)
    best = max(scores.values())
    li, c = next(key for key, value in scores.items() if value == best)
    return li, c, scores


def fit(
    found: Examples, states: np.ndarray, own: np.ndarray | None, layers: Sequence[int], settings: FitSettings
) -> FitResult:
    """Choose, measure and fit a head (see the module docstring). ``states``: rows x prompts x layers x
    hidden size; ``own``: the judge's own label probabilities (rows x prompts x labels) or None."""
    shape, truth = found.shape, found.truth
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
    lengths = _length_signs(found.lengths)
    chosen: list[int] = []
    for test in outer:
        train_rows = np.setdiff1d(np.arange(n), test)
        li, c, _ = choose(shape, states[train_rows], truth[train_rows], settings, rng)
        chosen.append(layers[li])
        head = train(shape, states[train_rows, :, li], truth[train_rows], c)
        head_probs[test] = row_probabilities(shape, head, states[test, :, li])
        common = np.bincount(truth[train_rows], minlength=len(shape.classes)).argmax()
        majority_right[test] = truth[test] == common
        if lengths is not None:
            length_right[test] = _length_rule(lengths, truth, train_rows, test)
    li, c, grid = choose(shape, states, truth, settings, rng)
    head = train(shape, states[:, :, li], truth, c)
    correct = head_probs.argmax(axis=1) == truth
    confidence = head_probs.max(axis=1)
    report: dict[str, Any] = {
        "rows": n,
        "skipped": found.skipped,
        "layer": layers[li],
        "c": c,
        "folds": len(outer),
        "layers_chosen_in_folds": chosen,
        "accuracy": share(int(correct.sum()), n),
        "ece": expected_calibration_error(confidence, correct),
        "confidence_auc": _auc(confidence, correct),
        "baselines": {"majority": share(int(majority_right.sum()), n)},
        "by_layer": accuracy_by_layer(grid, layers, settings.cs),
        "learning_curve": learning_curve(shape, states[:, :, li], truth, c, settings),
    }
    if lengths is not None:
        report["baselines"]["length_rule"] = share(int(length_right.sum()), n)
    if own is not None:
        own_probs = shape.row_probabilities(own)
        own_correct = own_probs.argmax(axis=1) == truth
        report["own_verdict"] = share(int(own_correct.sum()), n)
        report["own_confidence_auc"] = _auc(own_probs.max(axis=1), own_correct)
    return FitResult(layers[li], c, head, report)


def share(right: int, n: int) -> dict[str, Any]:
    """A share with its Wilson 95 % interval."""
    interval = wilson_interval(right, n)
    return {
        "right": right,
        "n": n,
        "value": right / n if n else None,
        "ci95": list(interval) if interval else None,
    }


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = ECE_BINS) -> float:
    """ECE: over equal-width confidence bins, the row-weighted mean of |accuracy - mean confidence|."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        members = index == b
        if members.any():
            total += members.sum() * abs(correct[members].mean() - confidence[members].mean())
    return float(total / len(confidence)) if len(confidence) else 0.0


def learning_curve(
    shape: Shape, states: np.ndarray, truth: np.ndarray, c: float, settings: FitSettings
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
            head = train(shape, states[train_rows], truth[train_rows], c)
            accuracies.append(_accuracy(row_probabilities(shape, head, states[test]), truth[test]))
        if accuracies:
            out.append({"labels": k, "accuracy": float(np.mean(accuracies)), "draws": len(accuracies)})
    return out


def accuracy_by_layer(
    grid: dict[tuple[int, float], float], layers: Sequence[int], cs: Sequence[float]
) -> dict[str, float]:
    """Each layer's cross-validated accuracy at its best C (from :func:`choose`'s grid)."""
    return {str(layers[li]): max(grid[(li, c)] for c in cs) for li in range(len(layers))}


def _length_signs(lengths: Sequence[tuple[float, float] | None]) -> np.ndarray | None:
    """+1 where answer a is longer, -1 where b is, 0 where they are equal or missing (None: no pairs)."""
    if not lengths or all(pair is None for pair in lengths):
        return None
    return np.asarray([0 if p is None else int(np.sign(p[0] - p[1])) for p in lengths])


def _length_rule(
    signs: np.ndarray, truth: np.ndarray, train_rows: np.ndarray, test: np.ndarray
) -> np.ndarray:
    """Whether the length rule fitted on ``train_rows`` (the longer answer wins, or the shorter: whichever
    is right more often there) is right on each ``test`` row (a row of equal lengths counts as wrong)."""
    longer_wins = np.where(signs > 0, 0, 1)  # class 0 = a
    decided = signs[train_rows] != 0
    right_longer = np.sum(longer_wins[train_rows][decided] == truth[train_rows][decided])
    prefer_longer = right_longer >= decided.sum() - right_longer
    guess = longer_wins[test] if prefer_longer else 1 - longer_wins[test]
    return np.asarray((guess == truth[test]) & (signs[test] != 0))


def _auc(confidence: np.ndarray, correct: np.ndarray) -> float | None:
    """The AUC of confidence separating right verdicts from wrong ones (None when all are one or the
    other)."""
    if correct.all() or not correct.any():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(correct.astype(int), confidence))
