"""The fit's statistics against independent computations and simulations of what they promise: nested
cross-validation on features whose best accuracy is known, the ECE of known miscalibration, the fitted
length rule counted by hand, and a pairwise head's antisymmetry by construction."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from jurist.errors import InputError
from jurist.models.probe_head import HeadArrays
from jurist.probe.examples import Examples, Shape
from jurist.probe.fit import FitSettings, fit, row_probabilities, train
from jurist.stats.calibration import expected_calibration_error
from jurist.stats.share import Share

PAIR = Shape("pairwise", ("A", "B"), ("a", "b"))


def pair_states(rng: np.random.Generator, n: int, d: int, signal: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows x 2 prompts x 3 layers x d: layer 1 (the middle) carries the verdict along its first axis, the
    others are noise. In order ab the first axis is +signal when a wins, in order ba the sign flips."""
    truth = rng.integers(0, 2, n)
    states = rng.normal(size=(n, 2, 3, d))
    sign = np.where(truth == 0, 1.0, -1.0)
    states[:, 0, 1, 0] += signal * sign
    states[:, 1, 1, 0] -= signal * sign
    return states, truth


def examples_of(
    shape: Shape, truth: np.ndarray, lengths: list[tuple[float, float] | None] | None = None
) -> Examples:
    n = len(truth)
    return Examples(shape, list(range(n)), [[] for _ in range(n)], truth, lengths or [None] * n, {})


def test_nested_cross_validation_finds_the_layer_and_reaches_the_known_accuracy() -> None:
    """With the verdict in one coordinate at +-s and unit noise, the best rule (the sign of that coordinate,
    averaged over both orders: noise sd 1/sqrt(2)) is right with probability Phi(s * sqrt(2)). The nested
    estimate on 400 rows must land within a few standard errors of it, and no layer of noise is chosen."""
    rng = np.random.default_rng(1)
    signal = 0.5
    states, truth = pair_states(rng, 400, 8, signal)
    result = fit(examples_of(PAIR, truth), states, None, (4, 8, 12), FitSettings(folds=5, inner_folds=4))
    bayes = norm.cdf(signal * math.sqrt(2))
    measured = result.report["accuracy"]["estimate"]
    assert abs(measured - bayes) < 3 * math.sqrt(bayes * (1 - bayes) / 400) + 0.02
    assert result.layer == 8 and set(result.report["layers_chosen_in_folds"]) == {8}
    low, high = result.report["accuracy"]["low"], result.report["accuracy"]["high"]
    assert low < measured < high
    assert result.report["accuracy"] == Share(round(measured * 400), 400).as_dict()
    assert result.report["by_layer"]["8"] > max(
        result.report["by_layer"]["4"], result.report["by_layer"]["12"]
    )


def test_noise_features_give_chance_accuracy_not_a_flattered_one() -> None:
    """Pure noise: whichever of 3 layers x 3 Cs the inner loop picks, the nested estimate stays near 50 %
    (an estimate from the same folds that chose would be biased upwards)."""
    rng = np.random.default_rng(2)
    states, truth = pair_states(rng, 300, 16, 0.0)
    result = fit(examples_of(PAIR, truth), states, None, (1, 2, 3), FitSettings(folds=5, inner_folds=3))
    assert abs(result.report["accuracy"]["estimate"] - 0.5) < 3 * math.sqrt(0.25 / 300) + 0.01


def test_a_pairwise_heads_p_a_is_one_minus_its_mirrors() -> None:
    rng = np.random.default_rng(3)
    states, truth = pair_states(rng, 60, 4, 1.0)
    head = train(PAIR, states[:, :, 1], truth, 0.3)
    probs = row_probabilities(PAIR, head, states[:, :, 1])
    mirrored = row_probabilities(PAIR, head, states[:, ::-1, 1])  # the same prompts, orders swapped
    np.testing.assert_allclose(probs[:, 0], 1 - mirrored[:, 0], atol=1e-12)
    pointwise_pair = Shape("pointwise_pair", ("Yes", "No"), ("a", "b"), yes=0)
    pp_probs = pointwise_pair.row_probabilities(head.probabilities(states[:, :, 1]))
    pp_mirror = pointwise_pair.row_probabilities(head.probabilities(states[:, ::-1, 1]))
    np.testing.assert_allclose(pp_probs[:, 0], 1 - pp_mirror[:, 0], atol=1e-12)


def test_ece_of_known_miscalibration() -> None:
    """Confidence 0.9 everywhere and 60 % right: ECE 0.3. Predictions drawn from their own confidence are
    calibrated: ECE shrinks towards 0 as rows grow."""
    correct = np.array([True] * 60 + [False] * 40)
    assert expected_calibration_error(np.full(100, 0.9), correct) == pytest.approx(0.3)
    rng = np.random.default_rng(4)
    confidence = rng.uniform(0.5, 1.0, 200_000)
    calibrated = rng.uniform(size=confidence.size) < confidence
    assert expected_calibration_error(confidence, calibrated) < 0.01


def test_the_length_rule_is_fitted_on_training_rows_and_counted_like_a_hand_count() -> None:
    """Rows where the shorter answer always wins: the rule learns 'shorter' on every training fold, so it
    is right on every row with unequal lengths and wrong on the equal ones."""
    rng = np.random.default_rng(5)
    states, truth = pair_states(rng, 100, 4, 1.0)
    lengths: list[tuple[float, float] | None] = []
    for index, cls in enumerate(truth):
        if index % 10 == 0:
            lengths.append((50.0, 50.0))  # equal: the rule cannot decide
        else:
            lengths.append((10.0, 90.0) if cls == 0 else (90.0, 10.0))  # the winner is the shorter
    result = fit(
        examples_of(PAIR, truth, lengths), states, None, (1, 2, 3), FitSettings(folds=5, inner_folds=3)
    )
    assert result.report["baselines"]["length_rule"] == Share(90, 100).as_dict()
    majority = int(max(np.sum(truth == 0), np.sum(truth == 1)))
    assert abs(result.report["baselines"]["majority"]["successes"] - majority) <= 10  # chosen per fold


def test_the_judges_own_verdict_is_scored_on_the_same_rows() -> None:
    rng = np.random.default_rng(6)
    states, truth = pair_states(rng, 80, 4, 1.0)
    own = np.zeros((80, 2, 2))
    own[:, :, 0] = 0.9  # always names the first-shown answer
    own[:, :, 1] = 0.1
    result = fit(examples_of(PAIR, truth), states, own, (1, 2, 3), FitSettings(folds=4, inner_folds=3))
    # p_a = (0.9 + 0.1) / 2 = 0.5 on every row: argmax picks a, right exactly where a wins
    assert result.report["own_verdict"]["successes"] == int(np.sum(truth == 0))


def test_a_pointwise_head_on_three_labels() -> None:
    shape = Shape("pointwise", ("poor", "fair", "good"), ("poor", "fair", "good"))
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 3, 300)
    states = rng.normal(size=(300, 1, 2, 6))
    states[np.arange(300), 0, 0, truth] += 2.0  # layer 1 (index 0) names the class
    result = fit(examples_of(shape, truth), states, None, (3, 6), FitSettings(folds=5, inner_folds=3))
    assert result.layer == 3 and result.report["accuracy"]["estimate"] > 0.75
    assert result.head.coef.shape == (3, 6)


def test_too_few_labelled_rows_are_refused_with_the_counts() -> None:
    rng = np.random.default_rng(8)
    states, truth = pair_states(rng, 12, 4, 1.0)
    with pytest.raises(InputError, match="at least 20 labelled rows"):
        fit(examples_of(PAIR, truth), states, None, (1, 2, 3), FitSettings())


def test_the_fit_trains_and_measures_the_head_judging_reads() -> None:
    """The fitted head is the arrays a head file holds: a ProbeHead built from them (as ``jurist probe fit``
    writes it) gives judging the very log-probabilities the fit measured its accuracy with."""
    from jurist.models.probe_head import ProbeHead, ProbeModel

    rng = np.random.default_rng(9)
    states, truth = pair_states(rng, 60, 4, 1.0)
    head = train(PAIR, states[:, :, 1], truth, 0.3)
    assert isinstance(head, HeadArrays)
    saved = ProbeHead(
        model=ProbeModel(name="m", weights=None, num_layers=2, hidden_size=4),
        layer=1,
        judge="j",
        prompt_fingerprint="p",
        answer_fingerprint="a",
        labels=("A", "B"),
        mean=tuple(head.mean.tolist()),
        scale=tuple(head.scale.tolist()),
        coef=tuple(tuple(row) for row in head.coef.tolist()),
        intercept=tuple(head.intercept.tolist()),
    )
    features = states[:, 0, 1]
    np.testing.assert_array_equal(saved.log_probabilities(features), head.log_probabilities(features))
    probabilities = head.probabilities(features)
    np.testing.assert_allclose(np.exp(head.log_probabilities(features)), probabilities, atol=1e-15)


def test_soft_targets_recover_the_teacher_probabilities_on_unseen_rows() -> None:
    """A teacher whose P(Yes) is the logistic of a linear function of the state: a head fitted on its
    probabilities (soft targets) learns that function, and the cross-validated report says its probabilities
    rank unseen rows as the teacher's do; fitted on the teacher's hard verdicts alone it learns less."""
    rng = np.random.default_rng(5)
    n, d = 400, 6
    states = rng.normal(size=(n, 1, 1, d))
    p_yes = 1 / (1 + np.exp(-(1.5 * states[:, 0, 0, 0] - 0.8 * states[:, 0, 0, 1])))
    soft = np.stack([p_yes, 1 - p_yes], axis=1)
    shape = Shape("pointwise", ("Yes", "No"), ("Yes", "No"), 0)
    truth = soft.argmax(axis=1)
    found = Examples(shape, list(range(n)), [[] for _ in range(n)], truth, [None] * n, {}, soft)
    result = fit(found, states, None, (3,), FitSettings(folds=5, inner_folds=3, curve=()))
    agreement = result.report["target_probability"]
    assert agreement["spearman"] > 0.95 and agreement["low"] < agreement["spearman"] < agreement["high"]
    assert agreement["mean_absolute_difference"] < 0.06
    head = result.head.probabilities(states[:, 0, 0])[:, 0]
    assert np.corrcoef(head, p_yes)[0, 1] > 0.98
    hard = train(shape, states[:, :, 0], truth, result.c)  # the verdicts alone carry less of p_yes
    assert np.mean(np.abs(hard.probabilities(states[:, 0, 0])[:, 0] - p_yes)) > np.mean(np.abs(head - p_yes))


def test_a_reward_head_fitted_as_bradley_terry_is_antisymmetric_and_recovers_the_reward() -> None:
    """Responses with a latent reward w . x; people prefer a over b with probability sigmoid(r_a - r_b). The
    head's rewards (log-odds of its good label) rank responses as the latent reward does, a pair's p_a is
    sigmoid of the reward difference, and p_a of a pair plus p_a of its mirror is one to the last bit."""
    rng = np.random.default_rng(7)
    n, d = 600, 5
    states = rng.normal(size=(n, 2, 1, d))
    w = np.array([2.0, -1.0, 0.0, 0.0, 0.0])
    latent = states[:, :, 0] @ w
    truth = (rng.random(n) > 1 / (1 + np.exp(latent[:, 1] - latent[:, 0]))).astype(int)  # 0: a preferred
    shape = Shape("pointwise", ("Yes", "No"), ("Yes", "No"), 0).preference()
    head = train(shape, states[:, :, 0], truth, 3.0)
    reward = np.diff(head.logits(states[:, :, 0])[..., ::-1], axis=-1)[..., 0]  # logit(Yes) - logit(No)
    assert abs(np.mean(reward)) < 1e-9  # centred on the responses it was fitted on
    assert np.corrcoef(reward.ravel(), latent.ravel())[0, 1] > 0.97
    p_a = row_probabilities(shape, head, states[:, :, 0])[:, 0]
    np.testing.assert_allclose(p_a, 1 / (1 + np.exp(reward[:, 1] - reward[:, 0])), rtol=1e-9)
    mirrored = row_probabilities(shape, head, states[:, ::-1, 0])[:, 0]
    assert np.max(np.abs(p_a + mirrored - 1)) < 1e-12
    result = fit(examples_of(shape, truth), states, None, (3,), FitSettings(folds=5, inner_folds=3, curve=()))
    bayes = np.mean((latent[:, 0] > latent[:, 1]) == (truth == 0))  # the latent reward's own accuracy
    assert result.report["accuracy"]["estimate"] > bayes - 0.05


POINT = Shape("pointwise", ("Yes", "No"), ("Yes", "No"), 0)


def xor_rows(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows x 1 prompt x 1 layer x 6: the verdict is Yes where the first two coordinates share a sign (an
    XOR: no linear rule does better than chance), the rest noise."""
    states = rng.normal(size=(n, 1, 1, 6))
    truth = np.where(states[:, 0, 0, 0] * states[:, 0, 0, 1] > 0, 0, 1)
    return states, truth


def test_an_mlp_head_is_kept_where_nested_cross_validation_says_it_beats_the_linear_one() -> None:
    """On an XOR the linear head stays near chance in nested cross-validation and the MLP does not: the MLP
    is kept, its accuracy reported, both families' scores beside it, and the head it writes has the MLP's
    hidden layer."""
    rng = np.random.default_rng(11)
    states, truth = xor_rows(rng, 240)
    settings = FitSettings(folds=3, inner_folds=2, curve=(), mlp_units=8, alphas=(1.0,))
    result = fit(examples_of(POINT, truth), states, None, (5,), settings)
    families = result.report["head_families"]
    assert families["kept"] == "mlp" and result.family == "mlp"
    assert families["linear"] < 0.65 < 0.8 < families["mlp"]
    assert result.report["accuracy"]["estimate"] == families["mlp"]
    assert len(result.head.hidden) == 1 and result.head.hidden[0][0].shape == (8, 6)


@pytest.mark.parametrize("width", [6, 80])
def test_an_mlp_heads_arrays_give_scikit_learns_probabilities(width: int) -> None:
    """The arrays a head file holds are the network scikit-learn fitted: for a state wider than the
    projection, its principal components folded into the hidden layer (an independent computation: PCA,
    then MLPClassifier's own predict_proba)."""
    from sklearn.decomposition import PCA
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    from jurist.probe.fit import MLP_COMPONENTS, train_mlp

    rng = np.random.default_rng(13)
    states = rng.normal(size=(150, 1, width))
    truth = np.where(states[:, 0, 0] * states[:, 0, 1] > 0, 0, 1)
    head = train_mlp(POINT, states, truth, 10.0, 8, seed=3)  # converged: one optimum, whatever the float path
    x = states[:, 0]
    z = (x - head.mean) / head.scale
    if width > MLP_COMPONENTS:
        z = PCA(n_components=MLP_COMPONENTS, random_state=3).fit(z).transform(z)
    reference = MLPClassifier(
        hidden_layer_sizes=(8,), alpha=10.0, solver="lbfgs", max_iter=500, random_state=3
    )
    with warnings.catch_warnings():  # as train_mlp: the same iteration cap, its warning silenced
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(z, truth)
    assert head.hidden[0][0].shape == (8, width)
    # projected, both fits see the same inputs up to rounding, and L-BFGS stops at its tolerance (1e-4)
    tolerance = 1e-9 if width <= MLP_COMPONENTS else 5e-3
    np.testing.assert_allclose(head.probabilities(x)[:, 1], reference.predict_proba(z)[:, 1], atol=tolerance)


def test_the_linear_head_is_kept_where_the_mlp_does_not_beat_it() -> None:
    """A verdict linear in the state: the MLP's nested score is no better, the linear head is written (no
    hidden layers), and on noise the kept family's nested accuracy stays near chance (choosing between two
    nested estimates flatters little)."""
    rng = np.random.default_rng(12)
    states = rng.normal(size=(240, 1, 1, 6))
    truth = np.where(states[:, 0, 0, 0] > 0, 0, 1)
    settings = FitSettings(folds=3, inner_folds=2, curve=(), mlp_units=8, alphas=(1.0,))
    result = fit(examples_of(POINT, truth), states, None, (5,), settings)
    assert result.report["head_families"]["kept"] == "linear" and result.head.hidden == ()
    noise = rng.integers(0, 2, 300)
    chance = fit(examples_of(POINT, noise), rng.normal(size=(300, 1, 1, 8)), None, (5,), settings)
    assert abs(chance.report["accuracy"]["estimate"] - 0.5) < 3 * math.sqrt(0.25 / 300) + 0.02


def test_a_reward_head_is_linear() -> None:
    from jurist.probe.fit import train_mlp

    states = np.zeros((20, 2, 4))
    with pytest.raises(InputError, match=r"a reward head .* is linear"):
        train_mlp(POINT.preference(), states, np.zeros(20, dtype=int), 1.0, 4)
