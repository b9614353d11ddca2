"""What a head is fitted on, counted by hand: preference pairs grouped from single-response rows (which is
a, which is preferred, what is left out and why), and a bigger judge's label distributions as soft targets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jurist.config.loading import load_judge_config
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.probe.examples import examples, preference_examples

BOOL = "graded/instruction_following"


def judge(name: str = BOOL) -> Judge:
    return Judge(load_judge_config(name, {"judge_params.scoring": "LOGPROBS"}))


def row(pair: str | None, text: str) -> dict[str, Any]:
    return {"request": "Write a haiku.", "response": text, "pair": pair}


def test_preference_pairs_are_grouped_from_rows_and_what_is_left_out_is_counted() -> None:
    rows = [
        row("p1", "first of p1"), row("p2", "first of p2"), row("p1", "second of p1"),  # p1: b preferred
        row("p2", "second of p2"),  # p2: a preferred ("yes"/"no" labels)
        row("p3", "alone"),  # a pair of one
        row("p4", "x"), row("p4", "y"),  # both preferred: no preference
        row("p5", "u"), row("p5", "v"),  # unlabelled
        row(None, "no pair"),
    ]  # fmt: skip
    preferred = [False, "yes", True, "no", True, True, True, None, None, True]
    found = preference_examples(judge(), rows, [r["pair"] for r in rows], preferred)
    assert found.shape.kind == "preference" and found.shape.labels == ("Yes", "No")
    assert found.positions == [0, 1]  # each pair's a: the row that comes first in the input
    assert found.truth.tolist() == [1, 0]  # p1: b preferred, p2: a preferred
    first, second = found.requests[0]
    assert "first of p1" in first.messages[-1].content and "second of p1" in second.messages[-1].content
    assert found.skipped == {"not a pair": 1, "no preference": 2, "not rendered": 0}
    sizes = [sum(len(m.content) for m in r.messages) for r in found.requests[0]]
    assert found.lengths[0] == (float(sizes[0]), float(sizes[1]))


def test_a_reward_head_needs_a_two_label_judgment() -> None:
    with pytest.raises(ConfigError, match="two labels"):
        preference_examples(judge("graded/truthfulness"), [row("p", "a"), row("p", "b")], ["p", "p"], [1, 0])


def test_label_distributions_become_soft_targets_in_the_judges_class_order() -> None:
    rows = [row(None, "a"), row(None, "b"), row(None, "c"), row(None, "d")]
    labels = [{"Yes": 0.8, "No": 0.2}, {"No": 3.0, "Yes": 1.0}, True, None]  # unnormalised, a hard one, none
    found = examples(judge(), rows, labels)
    assert found.soft is not None and found.positions == [0, 1, 2]
    np.testing.assert_allclose(found.soft, [[0.8, 0.2], [0.25, 0.75], [1.0, 0.0]])
    assert found.truth.tolist() == [0, 1, 0] and found.skipped["unlabelled"] == 1
    assert examples(judge(), rows[:1], [True]).soft is None  # hard labels alone: no soft targets
