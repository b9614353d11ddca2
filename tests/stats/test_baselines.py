"""The baselines counted by hand: the majority label, the first-shown, longer- and shorter-answer rules,
the rules fitted on training rows (probe fit's), the accuracy by length ratio, and whether a judge beats a
baseline."""

from __future__ import annotations

import pytest

from jurist.stats.baselines import (
    accuracy_by_length_ratio,
    baselines,
    beats,
    compare_to_baselines,
    fitted_length_rule,
    fitted_majority,
    majority_baseline,
)
from jurist.stats.share import Share, wilson_interval


def test_majority_baseline_counts_the_commonest_label() -> None:
    assert majority_baseline([True] * 13 + [False] * 7 + [None] * 3) == (True, 13, 20)
    assert majority_baseline(["a", "b"]) == ("a", 1, 2)  # a tie goes to the first label in sorted order
    assert majority_baseline([None, None]) == (None, 0, 0)


def test_pairwise_baselines_count_by_hand() -> None:
    truth = ["a", "b", "b", "a", "b", None, "b"]
    lengths = [(10, 5), (3, 9), (7, 7), (2, 8), (20, 1), (1, 2), None]
    found = {b.name: b for b in baselines(truth, pairwise=True, lengths=lengths)}
    assert list(found) == ["majority", "first shown", "longer answer", "shorter answer"]
    assert all(b.share.trials == 6 for b in found.values())  # the unlabelled row is left out
    assert (found["majority"].rule, found["majority"].share.successes) == ("always 'b'", 4)
    assert found["first shown"].share.successes == 2
    # longer: a, b, -, b, a, - -> right on rows 0 and 1 (rows 2 and 6 are no verdict)
    assert found["longer answer"].share.successes == 2
    # shorter: b, a, -, a, b, - -> right on rows 3 and 4
    assert found["shorter answer"].share.successes == 2
    assert found["majority"].as_dict() == {"rule": "always 'b'", **Share(4, 6).as_dict()}
    assert beats(Share(5, 6), found["majority"]) == "unclear"
    assert beats(Share(4, 6), found["majority"]) == "no"
    assert beats(Share(5, 7), found["majority"]) is None  # not the same rows
    with pytest.raises(ValueError):
        baselines(truth, pairwise=True, lengths=lengths[:3])


def test_a_judge_beats_a_baseline_below_its_interval() -> None:
    """13 of 20 for the baseline (65 %): 18 of 20 has its Wilson interval's low end above 0.65, 17 of 20
    does not (its interval is [64, 95] %)."""
    majority = baselines([True] * 13 + [False] * 7)
    assert wilson_interval(18, 20)[0] > 0.65 > wilson_interval(17, 20)[0]  # type: ignore[index]
    assert compare_to_baselines(Share(18, 20), majority)["majority"]["beaten"] == "yes"
    assert compare_to_baselines(Share(17, 20), majority)["majority"]["beaten"] == "unclear"
    assert compare_to_baselines(Share(13, 20), majority)["majority"]["beaten"] == "no"
    assert compare_to_baselines(Share(0, 0), baselines([]))["majority"]["beaten"] is None


def test_the_fitted_rules_are_chosen_on_the_training_rows_only() -> None:
    # training rows 0-5: the shorter answer wins 4 times, the longer once (row 5: equal lengths)
    lengths = [(1, 9), (9, 1), (2, 8), (8, 2), (5, 3), (4, 4), (1, 2), (7, 3), (3, 3), None]
    truth = ["a", "b", "a", "b", "a", "a", "a", "b", "a", "a"]
    train, test = list(range(6)), list(range(6, 10))
    # shorter wins on the test rows: a (1 < 2), b (3 < 7); equal and missing lengths are no verdict
    assert fitted_length_rule(lengths, truth, train, test) == [True, True, False, False]
    # the same test rows, with training rows where the longer answer wins: the rule turns
    flipped = ["b", "a", "b", "a", "b", "a", *truth[6:]]
    assert fitted_length_rule(lengths, flipped, train, test) == [False, False, False, False]
    # a tie on the training rows goes to the longer answer
    assert fitted_length_rule([(2, 1), (1, 2), (3, 1)], ["a", "a", "a"], [0, 1], [2]) == [True]
    # the majority of the training rows (a tie: the first label in sorted order), scored on the test rows
    assert fitted_majority([1, 0, 0, 1, 1, 0], [0, 1, 2, 3], [4, 5]) == [False, True]
    assert fitted_majority(["b", "b", "a", "b"], [0, 1, 2], [3]) == [True]


def test_accuracy_by_length_ratio_counts_by_hand() -> None:
    correct = [True, False, True, True, False, True, True]
    lengths = [(10, 40), (30, 40), (35, 40), (40, 40), (60, 40), (100, 40), None]
    buckets = {b["bucket"]: b for b in accuracy_by_length_ratio(correct, lengths)}
    assert [b["trials"] for b in buckets.values()] == [1, 2, 1, 1, 1]  # 0.25 | 0.75 0.875 | 1.0 | 1.5 | 2.5
    assert buckets["a 0.5-0.9x b"] == {"bucket": "a 0.5-0.9x b", **Share(1, 2).as_dict()}
    assert buckets["a 0.5-0.9x b"]["estimate"] == 0.5
    assert (buckets["a 0.5-0.9x b"]["low"], buckets["a 0.5-0.9x b"]["high"]) == wilson_interval(1, 2)
    assert buckets["a 1.1-2x b"]["estimate"] == 0.0
    with pytest.raises(ValueError):
        accuracy_by_length_ratio(correct, lengths[:2])
