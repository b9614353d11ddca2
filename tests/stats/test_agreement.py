"""Agreement statistics: hand-computed values, Krippendorff's published example checked by brute force."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import pytest

from jurist.stats.agreement import (
    ConfusionMatrix,
    accuracy,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    plurality,
    position_bias,
)

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


# --------------------------------------------------------------------------------------------- accuracy


class TestAccuracy:
    def test_skips_none_on_either_side(self) -> None:
        # pairs kept: (a,a) (b,a) (c,c) (a,a); position 2 (None predicted) and 5 (None truth) drop out.
        # 3 matches / 4 pairs = 0.75
        predicted = ["a", "b", None, "c", "a", "b"]
        truth = ["a", "a", "b", "c", "a", None]
        assert accuracy(predicted, truth) == 0.75

    def test_no_pair_is_none(self) -> None:
        assert accuracy([], []) is None
        assert accuracy([None, "a"], ["a", None]) is None

    def test_exact_and_mixed_types(self) -> None:
        assert accuracy([1, 2, 3], [1, 2, 3]) == 1.0
        assert accuracy([True, False], [False, True]) == 0.0

    def test_length_mismatch(self) -> None:
        with pytest.raises(ValueError, match="differ in length"):
            accuracy([1, 2], [1])


# ------------------------------------------------------------------------------------- confusion matrix


class TestConfusionMatrix:
    PREDICTED = ("cat", "dog", "cat", "bird", None, "dog")
    TRUTH = ("cat", "cat", "cat", "bird", "dog", None)

    def test_counts(self) -> None:
        # counted (truth, predicted) pairs: (cat,cat) (cat,dog) (cat,cat) (bird,bird); the last two positions
        # hold a None and are skipped. Labels: sorted union of the counted values = bird, cat, dog.
        cm = confusion_matrix(self.PREDICTED, self.TRUTH)
        assert cm.labels == ("bird", "cat", "dog")
        assert cm.counts == (
            (1, 0, 0),  # truth bird
            (0, 2, 1),  # truth cat: predicted cat twice, dog once
            (0, 0, 0),  # truth dog: its only pair had predicted None
        )
        assert cm.total == 4
        assert cm.count("cat", "dog") == 1
        assert cm.count("dog", "cat") == 0

    def test_to_text(self) -> None:
        cm = confusion_matrix(self.PREDICTED, self.TRUTH)
        # first column 17 wide (len("truth \\ predicted")), label columns as wide as their header.
        assert cm.to_text() == (
            "truth \\ predicted  bird  cat  dog\n"
            "bird                  1    0    0\n"
            "cat                   0    2    1\n"
            "dog                   0    0    0"
        )

    def test_to_text_wide_counts_and_labels(self) -> None:
        cm = ConfusionMatrix(labels=(1, "a_very_long_label"), counts=((1234, 0), (5, 6)))
        assert cm.to_text() == (
            "truth \\ predicted     1  a_very_long_label\n"
            "1                  1234                  0\n"
            "a_very_long_label     5                  6"
        )

    def test_explicit_labels_order_and_unseen(self) -> None:
        cm = confusion_matrix(["y", "n", "y"], ["y", "y", "n"], labels=["y", "n", "maybe"])
        # rows truth y: predicted y once, n once; truth n: predicted y once.
        assert cm.counts == ((1, 1, 0), (1, 0, 0), (0, 0, 0))
        assert cm.total == 3

    def test_unknown_or_repeated_label_raises(self) -> None:
        with pytest.raises(ValueError, match="not among labels"):
            confusion_matrix(["y", "n"], ["y", "y"], labels=["y"])
        with pytest.raises(ValueError, match="repeated"):
            confusion_matrix(["y"], ["y"], labels=["y", "y"])

    def test_incomparable_labels_sort_by_str(self) -> None:
        cm = confusion_matrix(["a", 1], [1, "a"])
        assert cm.labels == (1, "a")  # "1" < "a"
        assert cm.counts == ((0, 1), (1, 0))

    def test_empty(self) -> None:
        cm = confusion_matrix([None], ["x"])
        assert cm.labels == () and cm.counts == () and cm.total == 0
        assert cm.to_text() == "truth \\ predicted"

    def test_frozen_and_shape_checked(self) -> None:
        cm = confusion_matrix(["a"], ["a"])
        with pytest.raises(AttributeError):
            cm.labels = ("b",)  # type: ignore[misc]
        with pytest.raises(ValueError, match="2x2"):
            ConfusionMatrix(labels=("a", "b"), counts=((1, 2),))


# ---------------------------------------------------------------------------------------- Cohen's kappa


def from_table(labels: Sequence[str], table: Sequence[Sequence[int]]) -> tuple[list[str], list[str]]:
    """Rater sequences whose cross-tabulation (rows = rater a, columns = rater b) is ``table``."""
    a: list[str] = []
    b: list[str] = []
    for row_label, row in zip(labels, table, strict=True):
        for col_label, count in zip(labels, row, strict=True):
            a += [row_label] * count
            b += [col_label] * count
    return a, b


class TestCohenKappa:
    def test_two_by_two(self) -> None:
        #            b=yes  b=no | a total
        #   a=yes      20      5 |   25
        #   a=no       10     15 |   25
        #   b total    30     20 |   50
        # p_o = (20 + 15) / 50 = 0.7
        # p_e = (25/50)(30/50) + (25/50)(20/50) = 0.3 + 0.2 = 0.5
        # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
        a, b = from_table(["yes", "no"], [[20, 5], [10, 15]])
        assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)

    def test_three_classes(self) -> None:
        #            b=x  b=y  b=z | a total
        #   a=x        5    1    0 |   6
        #   a=y        1    4    1 |   6
        #   a=z        0    2    6 |   8
        #   b total    6    7    7 |  20
        # p_o = (5 + 4 + 6) / 20 = 0.75
        # p_e = (6*6 + 6*7 + 8*7) / 20^2 = (36 + 42 + 56) / 400 = 0.335
        # kappa = (0.75 - 0.335) / (1 - 0.335) = 0.415 / 0.665 = 83/133 = 0.62406...
        a, b = from_table(["x", "y", "z"], [[5, 1, 0], [1, 4, 1], [0, 2, 6]])
        assert cohen_kappa(a, b) == pytest.approx(83 / 133, abs=1e-12)
        assert cohen_kappa(b, a) == pytest.approx(83 / 133, abs=1e-12)  # symmetric

    def test_none_skipped(self) -> None:
        # the 2x2 example plus items where one or both raters gave no label: same kappa.
        a, b = from_table(["yes", "no"], [[20, 5], [10, 15]])
        a_missing = [*a, None, "yes", None]
        b_missing = [*b, "no", None, None]
        assert cohen_kappa(a_missing, b_missing) == pytest.approx(0.4, abs=1e-12)

    def test_perfect_and_inverse(self) -> None:
        assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
        # a/b swapped on every item: p_o = 0, p_e = (2*2 + 2*2) / 16 = 0.5, kappa = -0.5 / 0.5 = -1
        assert cohen_kappa(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0

    def test_expected_agreement_one_convention(self) -> None:
        # both raters say "x" on every item: p_o = 1, p_e = 1, (1 - 1)/(1 - 1) is 0/0 -> 1.0 by convention.
        assert cohen_kappa(["x", "x", "x"], ["x", "x", "x"]) == 1.0
        assert cohen_kappa(["x"], ["x"]) == 1.0

    def test_constant_rater_is_chance(self) -> None:
        # a always "x"; b says "x" 2 of 4 times: p_o = 0.5, p_e = 1 * 0.5 = 0.5, kappa = 0
        # (p_e < 1: not the p_e == 1 convention)
        assert cohen_kappa(["x"] * 4, ["x", "y", "x", "y"]) == 0.0

    def test_no_items(self) -> None:
        assert cohen_kappa([], []) is None
        assert cohen_kappa([None, "a"], ["a", None]) is None

    def test_length_mismatch(self) -> None:
        with pytest.raises(ValueError):
            cohen_kappa(["a"], ["a", "b"])

    def test_pairwise(self) -> None:
        a, b = from_table(["yes", "no"], [[20, 5], [10, 15]])
        ratings = {"judge_b": b, "judge_a": a, "judge_c": list(a)}
        result = pairwise_cohen_kappa(ratings)
        # keys follow the mapping's order, one per unordered pair
        assert list(result) == [("judge_b", "judge_a"), ("judge_b", "judge_c"), ("judge_a", "judge_c")]
        assert result[("judge_b", "judge_a")] == pytest.approx(0.4, abs=1e-12)
        assert result[("judge_b", "judge_c")] == pytest.approx(0.4, abs=1e-12)
        assert result[("judge_a", "judge_c")] == 1.0
        assert pairwise_cohen_kappa({"only": ["a"]}) == {}
        assert pairwise_cohen_kappa({"p": [None], "q": ["a"]}) == {("p", "q"): None}


# --------------------------------------------------------------------------------- Krippendorff's alpha


def brute_force_alpha(ratings: Sequence[Sequence[Any]], level: Level) -> Fraction | None:
    """Independent reference: alpha = 1 - D_o / D_e in the pairwise-disagreement formulation, exact.

    D_o = (1/n) * sum over pairable units u of 1/(m_u - 1) * sum over ordered pairs (i, j), i != j, of values
          within u of delta(v_i, v_j);
    D_e = 1/(n(n-1)) * sum over ordered pairs (i, j), i != j, of all n pairable values of delta(v_i, v_j).
    No coincidence matrix is built; the ordinal metric uses the frequencies n_g of the pooled pairable values.
    """
    units = [[v for v in column if v is not None] for column in zip(*ratings, strict=True)]
    units = [u for u in units if len(u) >= 2]
    pooled = [v for u in units for v in u]
    n = len(pooled)
    if n == 0:
        return None
    freq = Counter(pooled)

    def delta(c: Any, k: Any) -> Fraction:
        if level == "nominal":
            return Fraction(0 if c == k else 1)
        if level == "ordinal":
            lo, hi = min(c, k), max(c, k)
            between = sum(count for g, count in freq.items() if lo <= g <= hi)
            return (between - Fraction(freq[c] + freq[k], 2)) ** 2
        if level == "interval":
            return Fraction(c - k) ** 2
        assert level == "ratio"
        return Fraction(0) if c == k else Fraction(c - k, c + k) ** 2

    d_o = (
        sum(
            (
                Fraction(1, len(u) - 1)
                * sum(delta(u[i], u[j]) for i, j in itertools.permutations(range(len(u)), 2))
                for u in units
            ),
            Fraction(0),
        )
        / n
    )
    d_e = sum((delta(pooled[i], pooled[j]) for i, j in itertools.permutations(range(n), 2)), Fraction(0)) / (
        n * (n - 1)
    )
    if d_e == 0:
        return Fraction(1)
    return 1 - d_o / d_e


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12 units,
# values 1-5, missing values marked "." there and None here. Unit 12 has a single value (B's 3): not pairable.
#   unit:  1  2  3  4  5  6  7  8  9 10 11 12
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],  # observer A
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],  # observer B
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],  # observer C
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],  # observer D
]
# Published values (same paper): nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
PUBLISHED_2011 = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


class TestKrippendorffPublishedExample:
    def test_nominal_by_hand(self) -> None:
        # Pairable values n = 40 (units 1-11): n_1 = 9, n_2 = 13, n_3 = 10, n_4 = 5, n_5 = 3.
        # Diagonal coincidences o_cc = sum_u n_uc (n_uc - 1) / (m_u - 1):
        #   o_11 = 3*2/2 (u1) + 3*2/3 (u8) + 2*1/1 (u11) = 3 + 2 + 2 = 7
        #   o_22 = 3*2/3 (u2) + 4*3/3 (u5) + 4*3/3 (u9) = 2 + 4 + 4 = 10
        #   o_33 = 4 (u3) + 4 (u4) = 8;  o_44 = 4 (u7);  o_55 = 3*2/2 (u10) = 3      -> sum o_cc = 32
        # alpha = 1 - (n - 1)(n - sum o_cc) / (n(n - 1) - sum n_c(n_c - 1))
        #       = 1 - 39 * 8 / (1560 - (72 + 156 + 90 + 20 + 6)) = 1 - 312 / 1216 = 113/152 = 0.74342...
        alpha = krippendorff_alpha(KRIPPENDORFF_2011, "nominal")
        assert alpha is not None
        assert alpha == pytest.approx(113 / 152, abs=1e-12)
        assert round(alpha, 3) == 0.743

    @pytest.mark.parametrize("level", LEVELS)
    def test_matches_brute_force_and_publication(self, level: Level) -> None:
        reference = brute_force_alpha(KRIPPENDORFF_2011, level)
        assert reference is not None
        # The brute force reproduces the published three-decimal values at every level.
        assert round(float(reference), 3) == PUBLISHED_2011[level]
        alpha = krippendorff_alpha(KRIPPENDORFF_2011, level)
        assert alpha == pytest.approx(float(reference), abs=1e-12)

    def test_brute_force_exact_values(self) -> None:
        # Exact values of the brute force (nominal agrees with the hand computation above); all four round to
        # the published 0.743 / 0.815 / 0.849 / 0.797, so no discrepancy with the paper.
        assert brute_force_alpha(KRIPPENDORFF_2011, "nominal") == Fraction(113, 152)  # 0.74342
        assert brute_force_alpha(KRIPPENDORFF_2011, "ordinal") == Fraction(108577, 133160)  # 0.81539
        assert brute_force_alpha(KRIPPENDORFF_2011, "interval") == Fraction(951, 1120)  # 0.84911
        assert brute_force_alpha(KRIPPENDORFF_2011, "ratio") == Fraction(18222619, 22852465)  # 0.79740

    def test_unpairable_unit_is_ignored(self) -> None:
        # dropping unit 12 (one value) changes nothing
        trimmed = [row[:11] for row in KRIPPENDORFF_2011]
        for level in LEVELS:
            assert krippendorff_alpha(trimmed, level) == pytest.approx(
                krippendorff_alpha(KRIPPENDORFF_2011, level),
                abs=1e-12,
            )


class TestKrippendorffHandComputed:
    # Two raters, units u1 = {1, 1}, u2 = {2, 3}: n = 4, n_1 = 2, n_2 = 1, n_3 = 1;
    # coincidences o_11 = 2, o_23 = o_32 = 1 (each unit has m_u - 1 = 1).
    # alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck
    #       = 1 - 3 * 2 d_23 / (2 (2 d_12 + 2 d_13 + d_23))
    SMALL = ((1, 2), (1, 3))

    def test_nominal(self) -> None:
        # d = 1 off the diagonal: 1 - 3 * 2 / (2 * (2 + 2 + 1)) = 1 - 6/10 = 0.4
        assert krippendorff_alpha(self.SMALL, "nominal") == pytest.approx(0.4, abs=1e-12)

    def test_ordinal(self) -> None:
        # d_12 = (n_1 + n_2 - (n_1 + n_2)/2)^2 = (3 - 1.5)^2 = 2.25
        # d_13 = (n_1 + n_2 + n_3 - (n_1 + n_3)/2)^2 = (4 - 1.5)^2 = 6.25
        # d_23 = (n_2 + n_3 - (n_2 + n_3)/2)^2 = (2 - 1)^2 = 1
        # alpha = 1 - 3 * 2 * 1 / (2 * (2 * 2.25 + 2 * 6.25 + 1)) = 1 - 6/36 = 5/6
        assert krippendorff_alpha(self.SMALL, "ordinal") == pytest.approx(5 / 6, abs=1e-12)

    def test_interval(self) -> None:
        # d_12 = 1, d_13 = 4, d_23 = 1: alpha = 1 - 6 / (2 * (2 + 8 + 1)) = 1 - 6/22 = 8/11
        assert krippendorff_alpha(self.SMALL, "interval") == pytest.approx(8 / 11, abs=1e-12)

    def test_ratio(self) -> None:
        # d_12 = (1/3)^2 = 1/9, d_13 = (2/4)^2 = 1/4, d_23 = (1/5)^2 = 1/25
        # sum n n d = 2 * (2/9 + 2/4 + 1/25) = 2 * 686/900 = 343/225;  (n-1) sum o d = 3 * 2/25 = 54/225
        # alpha = 1 - 54/343 = 289/343
        assert krippendorff_alpha(self.SMALL, "ratio") == pytest.approx(289 / 343, abs=1e-12)

    @pytest.mark.parametrize("level", LEVELS)
    def test_perfect_agreement(self, level: Level) -> None:
        ratings: list[list[int | None]] = [[1, 2, 3, 2], [1, 2, 3, 2], [1, None, 3, 2]]
        assert krippendorff_alpha(ratings, level) == 1.0

    def test_systematic_disagreement(self) -> None:
        # u1 = {1, 2}, u2 = {2, 1}: n = 4, n_1 = n_2 = 2, o_12 = o_21 = 2, o_11 = o_22 = 0
        # alpha = 1 - (n - 1)(o_12 + o_21) / (n_1 n_2 + n_2 n_1) = 1 - 3 * 4 / 8 = -0.5
        assert krippendorff_alpha([[1, 2], [2, 1]], "nominal") == pytest.approx(-0.5, abs=1e-12)
        # same data at interval level: d_12 = 1 everywhere, so the same -0.5
        assert krippendorff_alpha([[1, 2], [2, 1]], "interval") == pytest.approx(-0.5, abs=1e-12)

    def test_missing_data(self) -> None:
        # unit:        1     2     3     4
        ratings = [
            [1, 1, None, 2],  # A
            [1, 2, 3, None],  # B
            [None, 1, None, 2],  # C
        ]
        # u1 = {1, 1} (m=2), u2 = {1, 2, 1} (m=3), u3 = {3} not pairable (the 3 is not counted at all),
        # u4 = {2, 2} (m=2).  n = 7, n_1 = 4, n_2 = 3.
        # o_11 = 2*1/1 + 2*1/2 = 3,  o_22 = 2*1/1 = 2,  o_12 = o_21 = 2*1/2 = 1   (rows sum to n_1=4, n_2=3)
        # alpha = 1 - (n - 1)(o_12 + o_21) / (2 n_1 n_2) = 1 - 6 * 2 / 24 = 0.5
        assert krippendorff_alpha(ratings, "nominal") == pytest.approx(0.5, abs=1e-12)
        assert krippendorff_alpha(ratings, "nominal") == pytest.approx(
            float(brute_force_alpha(ratings, "nominal") or 0)
        )

    def test_no_variation_convention(self) -> None:
        # D_e == 0 (one distinct pairable value) and D_o == 0 -> 1.0 by convention.
        assert krippendorff_alpha([[5, 5], [5, 5]], "interval") == 1.0
        # the 7 is in a unit with one value, so the only pairable values are the two 5s
        assert krippendorff_alpha([[5, None], [5, 7]], "nominal") == 1.0

    def test_no_pairable_values(self) -> None:
        assert krippendorff_alpha([]) is None
        assert krippendorff_alpha([[1, 2, 3]]) is None  # one rater
        assert krippendorff_alpha([[1, None], [None, 2]]) is None
        assert krippendorff_alpha([[], []]) is None

    def test_nominal_accepts_any_hashable(self) -> None:
        # same structure as the missing-data case with labels instead of numbers
        ratings = [["good", "good", None, "bad"], ["good", "bad", "ugly", None], [None, "good", None, "bad"]]
        assert krippendorff_alpha(ratings) == pytest.approx(0.5, abs=1e-12)

    def test_errors(self) -> None:
        with pytest.raises(ValueError, match="different numbers"):
            krippendorff_alpha([[1, 2], [1]])
        with pytest.raises(ValueError, match="NaN"):
            krippendorff_alpha([[1.0, float("nan")], [1.0, 2.0]])
        with pytest.raises(ValueError, match="real numbers"):
            krippendorff_alpha([["a", "b"], ["a", "b"]], "interval")
        with pytest.raises(ValueError, match=">= 0"):
            krippendorff_alpha([[-1, 2], [1, 2]], "ratio")
        with pytest.raises(ValueError, match="comparable"):
            krippendorff_alpha([[1, "a"], [1, "a"]], "ordinal")
        with pytest.raises(ValueError, match="unknown level"):
            krippendorff_alpha([[1], [1]], "cardinal")  # type: ignore[arg-type]

    @pytest.mark.parametrize("level", LEVELS)
    def test_random_data_matches_brute_force(self, level: Level) -> None:
        rng = random.Random(20240611)
        for _ in range(20):
            raters, items = rng.randint(2, 4), rng.randint(1, 8)
            ratings = [
                [None if rng.random() < 0.25 else rng.randint(0, 4) for _ in range(items)]
                for _ in range(raters)
            ]
            reference = brute_force_alpha(ratings, level)
            alpha = krippendorff_alpha(ratings, level)
            if reference is None:
                assert alpha is None
            else:
                assert alpha == pytest.approx(float(reference), abs=1e-9)


# ------------------------------------------------------------------------------------ panels and verdicts


class TestPlurality:
    def test_clear_winner(self) -> None:
        assert plurality(["a", "b", "a", None, "c", "a"]) == ("a", 3)

    def test_tie_returns_none_with_count(self) -> None:
        # "a" and "b" both twice: no verdict, count 2; order of appearance does not break the tie
        assert plurality(["a", "b", "b", "a", "c"]) == (None, 2)
        assert plurality(["b", "a", "a", "b"]) == (None, 2)
        assert plurality([1, 2]) == (None, 1)

    def test_none_ignored_even_when_most_common(self) -> None:
        assert plurality([None, None, None, "x"]) == ("x", 1)

    def test_empty(self) -> None:
        assert plurality([]) == (None, 0)
        assert plurality([None, None]) == (None, 0)


class TestPositionBias:
    def test_share_of_first(self) -> None:
        # 3 True of 4 verdicts (the None is no verdict) = 0.75
        assert position_bias([True, False, None, True, True]) == 0.75

    def test_unbiased_and_empty(self) -> None:
        assert position_bias([True, False]) == 0.5
        assert position_bias([]) is None
        assert position_bias([None]) is None
