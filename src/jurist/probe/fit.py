"""Fitting a probe head, and the numbers that say whether to trust it.

A head (:class:`~jurist.models.probe_head.HeadArrays`, the class judging reads a head file with) is a
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

Asked for (``FitSettings.mlp_units``, ``jurist probe fit --mlp N``), a small MLP (one ReLU hidden layer,
scikit-learn's ``MLPClassifier``) goes through the same nested cross-validation on the same outer folds,
and is kept only when it scores better there than the linear head (accuracy, or the targets'
log-likelihood); both scores are in the report.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jurist.errors import InputError
from jurist.models.probe_head import HeadArrays
from jurist.probe.examples import Examples, Shape
from jurist.stats.baselines import fitted_length_rule, fitted_majority
from jurist.stats.calibration import expected_calibration_error
from jurist.stats.ranking import spearman
from jurist.stats.share import Share

DEFAULT_CS = (0.003, 0.03, 0.3, 3.0)
"""Inverse regularisation strengths a fit chooses from (features standardised; a few hundred rows of
hundreds of dimensions want strong regularisation)."""
DEFAULT_ALPHAS = (1.0, 10.0, 100.0)
"""L2 strengths an MLP head chooses from (scikit-learn's ``alpha``, on standardised features)."""
MLP_COMPONENTS = 64
"""Principal components an MLP head reads of a wider state (a 1.5B model's 1,536 values: without the
projection one fit of the nested cross-validation took minutes on two cores)."""


@dataclass(frozen=True)
class FitSettings:
    """How a head is chosen: ``folds`` outer folds (nested cross-validation), ``inner_folds`` inside each,
    the regularisation grid ``cs``, the learning curve's sizes ``curve`` (each drawn ``repeats`` times);
    ``mlp_units``: also fit an MLP head with one hidden layer of that many units (its L2 grid ``alphas``),
    kept only where its nested cross-validation beats the linear head's."""

    cs: tuple[float, ...] = DEFAULT_CS
    folds: int = 10
    inner_folds: int = 5
    curve: tuple[int, ...] = (25, 50, 100, 200, 400)
    repeats: int = 5
    seed: int = 0
    mlp_units: int | None = None
    alphas: tuple[float, ...] = DEFAULT_ALPHAS

    def family(self, name: str) -> Family:
        """The linear family (grid ``cs``) or the MLP one (grid ``alphas``, ``mlp_units`` units)."""
        if name == "mlp":
            return Family("mlp", self.alphas, self.mlp_units or 0, self.seed)
        return Family("linear", self.cs)


@dataclass(frozen=True)
class Family:
    """A kind of head and its regularisation grid: ``linear`` (logistic regression, C) or ``mlp`` (one ReLU
    hidden layer of ``units`` units, scikit-learn's MLPClassifier, L2 ``alpha``; seeded)."""

    name: str
    grid: tuple[float, ...]
    units: int = 0
    seed: int = 0

    def path(
        self, shape: Shape, states: np.ndarray, truth: np.ndarray, soft: np.ndarray | None = None
    ) -> list[HeadArrays]:
        """One head per value of the grid (:func:`train_path` or :func:`train_mlp`)."""
        if self.name == "mlp":
            return [train_mlp(shape, states, truth, a, self.units, soft, self.seed) for a in self.grid]
        return train_path(shape, states, truth, self.grid, soft)

    def train(
        self, shape: Shape, states: np.ndarray, truth: np.ndarray, value: float, soft: np.ndarray | None
    ) -> HeadArrays:
        """One head at one value of the grid."""
        if self.name == "mlp":
            return train_mlp(shape, states, truth, value, self.units, soft, self.seed)
        return train_path(shape, states, truth, (value,), soft)[0]


@dataclass
class FitResult:
    """The chosen layer and regularisation, the head fitted on every row, and the report."""

    layer: int
    c: float
    head: HeadArrays
    report: dict[str, Any] = field(default_factory=dict)
    family: str = "linear"


def train(
    shape: Shape, states: np.ndarray, truth: np.ndarray, c: float, soft: np.ndarray | None = None
) -> HeadArrays:
    """A head on rows' prompt states (rows x prompts x hidden size) and row classes (or, for a pointwise
    judge, class distributions ``soft``: rows x classes)."""
    return train_path(shape, states, truth, (c,), soft)[0]


def train_path(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    cs: Sequence[float],
    soft: np.ndarray | None = None,
) -> list[HeadArrays]:
    """One head per C of ``cs`` on the same rows (as :func:`train`), fitted in order of increasing C, each
    started from the previous one's weights: the weaker the regularisation, the more iterations a fit
    from zero needs (3.5x less time over the default grid, measured on 500 LLMBar pairs). Soft targets are
    the cross-entropy with each row's class distribution: every (prompt, class) is a sample weighted by the
    class's probability. A preference shape is fitted as Bradley-Terry (:func:`_preference_path`)."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = _standard(states)
    if shape.kind == "preference":
        return _preference_path(shape, (states - mean) / scale, truth, cs, mean, scale)
    x, y, weights = _samples(shape, states, truth, soft)
    labels = len(shape.labels)
    present = sorted(set(y.tolist()))
    if len(present) == 1:
        coef = np.zeros((labels, x.shape[1]))
        intercept = np.full(labels, -30.0)  # a label never seen in training gets (almost) no mass
        intercept[present[0]] = 0.0
        return [HeadArrays(mean, scale, coef, intercept) for _ in cs]
    standard = (x - mean) / scale
    model = LogisticRegression(max_iter=2000, warm_start=True)
    heads: dict[float, HeadArrays] = {}
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
        heads[c] = HeadArrays(mean, scale, coef, intercept)
    return [heads[c] for c in cs]


def _preference_path(
    shape: Shape, z: np.ndarray, truth: np.ndarray, cs: Sequence[float], mean: np.ndarray, scale: np.ndarray
) -> list[HeadArrays]:
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
    heads: dict[float, HeadArrays] = {}
    for c in sorted(set(cs)):
        model.set_params(C=c)
        model.fit(x, y)
        w = model.coef_[0]
        coef = np.zeros((2, z.shape[-1]))
        coef[shape.yes] = w
        intercept = np.zeros(2)
        intercept[shape.yes] = -float(np.mean(z.reshape(-1, z.shape[-1]) @ w))
        heads[c] = HeadArrays(mean, scale, coef, intercept)
    return [heads[c] for c in cs]


def _standard(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The features' mean and standard deviation over every prompt (a constant feature's scale is 1)."""
    flat = states.reshape(-1, states.shape[-1]).astype(np.float64)
    scale = flat.std(axis=0)
    scale[scale < 1e-8] = 1.0
    return flat.mean(axis=0), scale


def _standard_rows(states: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.asarray((states.reshape(-1, states.shape[-1]).astype(np.float64) - mean) / scale)


def _samples(
    shape: Shape, states: np.ndarray, truth: np.ndarray, soft: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prompt states (flattened), their label targets and sample weights, as :func:`train_path` fits them:
    each prompt's label for its row's class, or with soft targets a sample per (row, class) weighted by the
    class's probability."""
    x = states.reshape(-1, states.shape[-1]).astype(np.float64)
    if soft is None:
        y = np.asarray([t for cls in truth for t in shape.prompt_targets(int(cls))])
        return x, y, np.ones(len(y))
    rows, y = np.nonzero(soft > 0)
    return x[rows], y, soft[rows, y]


def train_mlp(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    alpha: float,
    units: int,
    soft: np.ndarray | None = None,
    seed: int = 0,
) -> HeadArrays:
    """An MLP head (one ReLU hidden layer of ``units`` units, L2 ``alpha``, L-BFGS from a seeded start) on
    the same standardised features and targets as :func:`train_path`'s, projected first on their
    :data:`MLP_COMPONENTS` principal components where they have more dimensions (a hidden state of
    thousands: the projection is linear, so it is folded into the hidden layer's weights and the head reads
    the state as it is). Not for preference pairs (a Bradley-Terry reward is linear in the state)."""
    from sklearn.decomposition import PCA
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    if shape.kind == "preference":
        raise InputError("an MLP head fits labels or label distributions; a reward head (--pairs) is linear")
    mean, scale = _standard(states)
    x, y, weights = _samples(shape, states, truth, soft)
    labels, present = len(shape.labels), sorted(set(y.tolist()))
    coef, intercept = np.zeros((labels, units)), np.full(labels, -30.0)
    hidden = ((np.zeros((units, x.shape[1])), np.zeros(units)),)
    if len(present) == 1:
        intercept[present[0]] = 0.0
        return HeadArrays(mean, scale, coef, intercept, hidden)
    model = MLPClassifier(
        hidden_layer_sizes=(units,), alpha=alpha, solver="lbfgs", max_iter=500, random_state=seed
    )
    z = (x - mean) / scale
    projection, centre = np.eye(z.shape[1]), np.zeros(z.shape[1])
    if z.shape[1] > MLP_COMPONENTS:  # fitted on the prompts, once each (soft targets repeat them)
        pca = PCA(n_components=MLP_COMPONENTS, random_state=seed).fit(_standard_rows(states, mean, scale))
        projection, centre = pca.components_, pca.mean_
    with warnings.catch_warnings():  # the iteration cap is a regularisation too: nested CV judges the result
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit((z - centre) @ projection.T, y, sample_weight=weights)
    weights_in = model.coefs_[0].T @ projection  # units x features: the projection folded in
    hidden = ((weights_in, model.intercepts_[0] - weights_in @ centre),)
    out_w, out_b = model.coefs_[1], model.intercepts_[1]
    if len(present) == 2:  # a logistic output: the logit of the second class
        coef[present[1]], intercept[present[1]] = out_w[:, 0], float(out_b[0])
        intercept[present[0]] = 0.0
    else:
        for column, cls in enumerate(model.classes_):
            coef[int(cls)], intercept[int(cls)] = out_w[:, column], float(out_b[column])
    return HeadArrays(mean, scale, coef, intercept, hidden)


def row_probabilities(shape: Shape, head: HeadArrays, states: np.ndarray) -> np.ndarray:
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
    family: Family | None = None,
) -> tuple[int, float, dict[tuple[int, float], float]]:
    """The layer (index into the features' layers) and regularisation (C; an MLP family's alpha) with the
    best cross-validated row accuracy on these rows (ties: the earlier layer, then the first of the grid),
    and every candidate's accuracy; with soft targets, the best mean log-likelihood of the target
    distributions instead (what the head is fitted to: a teacher that says Yes to most rows makes accuracy
    a poor judge of its probabilities). ``family``: the linear head's (the default) or another."""
    family = family or settings.family("linear")
    folds = folds_of(len(truth), settings.inner_folds, rng)
    scores: dict[tuple[int, float], float] = {}
    for li in range(states.shape[2]):
        total = dict.fromkeys(family.grid, 0.0)
        for test in folds:
            train_rows = np.setdiff1d(np.arange(len(truth)), test)
            heads = family.path(shape, states[train_rows, :, li], truth[train_rows], _at(soft, train_rows))
            for c, head in zip(family.grid, heads, strict=True):
                probs = row_probabilities(shape, head, states[test, :, li])
                if soft is None:
                    total[c] += float(np.sum(probs.argmax(axis=1) == truth[test]))
                else:
                    total[c] += float(np.sum(soft[test] * np.log(np.clip(probs, 1e-12, 1.0))))
        for c in family.grid:
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
    length_right = np.zeros(n, dtype=bool)
    majority_right = np.zeros(n, dtype=bool)
    classes, sides = truth.tolist(), [shape.classes[t] for t in truth.tolist()]
    paired = any(pair is not None for pair in found.lengths)  # answers' lengths: the length rule
    for test in outer:
        train_rows = np.setdiff1d(np.arange(n), test)
        majority_right[test] = fitted_majority(classes, train_rows.tolist(), test.tolist())
        if paired:
            length_right[test] = fitted_length_rule(found.lengths, sides, train_rows.tolist(), test.tolist())
    linear = settings.family("linear")
    head_probs, chosen = _nested(shape, states, truth, soft, settings, outer, rng, linear)
    li, c, grid = choose(shape, states, truth, settings, rng, soft)
    family, families = linear, None
    if settings.mlp_units is not None:  # the MLP is kept only where its nested cross-validation is better
        mlp = settings.family("mlp")
        mlp_rng = np.random.default_rng(settings.seed + 2)
        mlp_probs, mlp_chosen = _nested(shape, states, truth, soft, settings, outer, mlp_rng, mlp)
        scored = {
            "linear": _outer_score(head_probs, truth, soft),
            "mlp": _outer_score(mlp_probs, truth, soft),
        }
        if scored["mlp"] > scored["linear"]:
            family, head_probs, chosen = mlp, mlp_probs, mlp_chosen
            li, c, grid = choose(shape, states, truth, settings, mlp_rng, soft, mlp)
        families = {
            **scored,
            "mlp_units": settings.mlp_units,
            "measure": "accuracy" if soft is None else "mean log-likelihood of the targets",
            "kept": family.name,
        }
    head = family.train(shape, states[:, :, li], truth, c, soft)
    correct = head_probs.argmax(axis=1) == truth
    confidence = head_probs.max(axis=1)
    report: dict[str, Any] = {
        "rows": n,
        "skipped": found.skipped,
        "layer": layers[li],
        "c": c,
        "folds": len(outer),
        "layers_chosen_in_folds": [layers[i] for i in chosen],
        "accuracy": Share.of(correct).as_dict(),
        "ece": expected_calibration_error(confidence, correct),
        "confidence_auc": _auc(confidence, correct),
        "baselines": {"majority": Share.of(majority_right).as_dict()},
        "by_layer": accuracy_by_layer(grid, layers, family.grid),
        "learning_curve": learning_curve(shape, states[:, :, li], truth, c, settings, soft, family),
    }
    if families is not None:
        report["head_families"] = families
    if soft is not None:  # distilled: how the head's probabilities follow the targets' on unseen rows
        report["target_probability"] = probability_agreement(head_probs, soft)
    if paired:
        report["baselines"]["length_rule"] = Share.of(length_right).as_dict()
    if own is not None:
        own_probs = shape.row_probabilities(own)
        own_correct = own_probs.argmax(axis=1) == truth
        report["own_verdict"] = Share.of(own_correct).as_dict()
        report["own_confidence_auc"] = _auc(own_probs.max(axis=1), own_correct)
    return FitResult(layers[li], c, head, report, family.name)


def _nested(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    soft: np.ndarray | None,
    settings: FitSettings,
    outer: list[np.ndarray],
    rng: np.random.Generator,
    family: Family,
) -> tuple[np.ndarray, list[int]]:
    """Nested cross-validation of one family: each outer fold's rows scored by a head whose layer and
    regularisation were chosen, and which was fitted, on the other folds alone; with the layers chosen."""
    n = len(truth)
    probs = np.zeros((n, len(shape.classes)))
    chosen: list[int] = []
    for test in outer:
        train_rows = np.setdiff1d(np.arange(n), test)
        li, c, _ = choose(
            shape, states[train_rows], truth[train_rows], settings, rng, _at(soft, train_rows), family
        )
        chosen.append(li)
        head = family.train(shape, states[train_rows, :, li], truth[train_rows], c, _at(soft, train_rows))
        probs[test] = row_probabilities(shape, head, states[test, :, li])
    return probs, chosen


def _outer_score(probs: np.ndarray, truth: np.ndarray, soft: np.ndarray | None) -> float:
    """What families are compared on, over rows scored in nested cross-validation: accuracy, or with soft
    targets their mean log-likelihood (as :func:`choose` chooses)."""
    if soft is None:
        return _accuracy(probs, truth)
    return float(np.mean(np.sum(soft * np.log(np.clip(probs, 1e-12, 1.0)), axis=1)))


def learning_curve(
    shape: Shape,
    states: np.ndarray,
    truth: np.ndarray,
    c: float,
    settings: FitSettings,
    soft: np.ndarray | None = None,
    family: Family | None = None,
) -> list[dict[str, Any]]:
    """Accuracy on the other rows of a head (of ``family``, linear by default) fitted on k random rows, for
    each k of the curve below the row count, averaged over ``repeats`` draws (the layer and regularisation
    fixed at the fit's choice)."""
    family = family or settings.family("linear")
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
            head = family.train(shape, states[train_rows], truth[train_rows], c, _at(soft, train_rows))
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
