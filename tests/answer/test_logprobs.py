"""Scores from token probabilities, through the scripted backend with known distributions.

Every expected figure is computed by hand in the comments.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.errors import ConfigError, InputError
from jurist.records import Completion, LabelRequest, LabelScores
from jurist.stats.calibration import Calibration, expected_calibration_error, fit, fit_isotonic, fit_platt

ROWS = [{"question": "q", "answer": "a"}]


def judge(**params: Any) -> dict[str, Any]:
    return {
        "name": "j",
        "judge_params": {"prompt_template": "{question} {answer}", "scoring": "LOGPROBS", **params},
    }


def scripted(distribution: dict[str, float]) -> ScriptedBackend:
    return ScriptedBackend([], labels=lambda request: {k: math.log(v) for k, v in distribution.items()})


def test_bool_distribution_confidence_entropy_and_expected_score() -> None:
    # unnormalized probabilities 0.2 / 0.6 -> 0.25 / 0.75
    backend = scripted({"Yes": 0.2, "No": 0.6})
    row = Engine(judge(), backend).run(ROWS).to_pylist()[0]
    assert row["j.judgment_p.Yes"] == pytest.approx(0.25)
    assert row["j.judgment_p.No"] == pytest.approx(0.75)
    assert row["j.judgment"] is False and row["j.judgment_score"] == 0.0
    assert row["j.judgment_confidence"] == pytest.approx(0.75)
    # entropy = -(0.25 ln 0.25 + 0.75 ln 0.75) = 0.5623 nats
    assert row["j.judgment_entropy"] == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))
    # expected score = 0.25 * 1 + 0.75 * 0 = 0.25, and it is the row's score
    assert row["j.judgment_expected"] == pytest.approx(0.25) and row["j.score"] == pytest.approx(0.25)
    assert row["j.status"] == "ok" and row["j.completion_tokens"] == 0
    assert json.loads(row["j.raw"]) == {
        "Yes": pytest.approx(math.log(0.2)),
        "No": pytest.approx(math.log(0.6)),
    }
    request = backend.label_requests[0]
    assert request.labels == ("Yes", "No") and request.answer_prefix == '{"judgment": "'
    assert request.answer_suffix == '"' and not request.with_suffix


def test_enum_with_not_applicable_leaves_its_mass_out_of_the_expected_score() -> None:
    config = judge(judgment_type="ENUM", judgment_scores={"good": 1.0, "bad": 0.0, "na": None})
    row = Engine(config, scripted({"good": 0.5, "bad": 0.3, "na": 0.2})).run(ROWS).to_pylist()[0]
    assert row["j.judgment"] == "good"
    # (0.5 * 1 + 0.3 * 0) / (0.5 + 0.3) = 0.625
    assert row["j.judgment_expected"] == pytest.approx(0.625)


def test_int_scale_geval_expectation_and_unquoted_labels() -> None:
    scale = {"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0}
    config = judge(judgment_type="INT", judgment_scores=scale)
    backend = scripted({"1": 0.1, "2": 0.2, "3": 0.4, "4": 0.2, "5": 0.1})
    row = Engine(config, backend).run(ROWS).to_pylist()[0]
    # 0.1*0 + 0.2*0.25 + 0.4*0.5 + 0.2*0.75 + 0.1*1 = 0.5
    assert row["j.judgment_expected"] == pytest.approx(0.5)
    assert row["j.judgment"] == 3 and row["j.judgment_score"] == 0.5
    assert backend.label_requests[0].answer_prefix == '{"judgment": '  # JSON integers are not quoted


def test_xml_prefix_and_labels_that_prefix_each_other() -> None:
    config = judge(response_format="XML", judgment_type="ENUM", judgment_scores={"good": 1.0, "goodish": 0.5})
    backend = scripted({"good": 0.5, "goodish": 0.5})
    Engine(config, backend).run(ROWS)
    request = backend.label_requests[0]
    assert request.answer_prefix == "<judgment>" and request.answer_suffix == "</judgment>"
    assert request.with_suffix  # "good" is a prefix of "goodish": score each label with what follows it


def test_logprob_mode_drops_the_explanation() -> None:
    config = load_judge_config("graded/truthfulness", {"judge_params.scoring": "LOGPROBS"})
    engine = Engine(config, scripted({"Yes": 0.7, "Unsure": 0.2, "No": 0.1}))
    row = engine.run([{"request": "r", "response": "s"}]).to_pylist()[0]
    assert "truthfulness.explanation" not in row
    # expected = 0.7 * 1 + 0.2 * 0.5 + 0.1 * 0 = 0.8
    assert row["truthfulness.score"] == pytest.approx(0.8)


def _pairwise_row(pair: dict[str, Any], *orders: dict[str, float]) -> dict[str, Any]:
    """One row judged by a LOGPROBS pairwise judge whose two orders answer with these distributions."""
    config = {
        "name": "p",
        "judge_params": {
            "prompt_template": "{question}\n1: {response_a}\n2: {response_b}",
            "scoring": "LOGPROBS",
        },
        "pairwise_judge_params": pair,
    }
    distributions = iter(orders)
    backend = ScriptedBackend([], labels=lambda r: {k: math.log(v) for k, v in next(distributions).items()})
    rows = [{"question": "q", "response_a": "x", "response_b": "y"}]
    return dict(Engine(config, backend).run(rows).to_pylist()[0])


def test_pairwise_order_averaged_probability_that_a_wins() -> None:
    # order ab (A shown first): P(first) = 0.8; order ba (B shown first): P(first) = 0.6, P(second) = 0.4
    row = _pairwise_row({}, {"A": 0.8, "B": 0.2}, {"A": 0.6, "B": 0.4})
    # P(A wins) = (P_ab(first) + P_ba(second)) / 2 = (0.8 + 0.4) / 2 = 0.6
    assert row["p.p_a"] == pytest.approx(0.6) and row["p.score"] == pytest.approx(0.6)
    assert row["p.ab_p_first"] == pytest.approx(0.8) and row["p.ba_p_first"] == pytest.approx(0.6)
    # the most likely label of each order is first (A) both times: a, then b -> not position consistent;
    # the default decision under LOGPROBS is the order-averaged probability: p_a 0.6 > p_b 0.4 -> a
    assert row["p.winner"] == "a" and row["p.position_consistent"] is False


def test_pairwise_both_orders_rule_under_logprobs() -> None:
    row = _pairwise_row({"decision": "both_orders"}, {"A": 0.8, "B": 0.2}, {"A": 0.6, "B": 0.4})
    assert row["p.winner"] == "tie" and row["p.position_consistent"] is False
    assert row["p.p_a"] == pytest.approx(0.6)  # the score does not depend on the decision
    row = _pairwise_row(
        {"decision": "both_orders", "inconsistent": "inconclusive"},
        {"A": 0.8, "B": 0.2},
        {"A": 0.6, "B": 0.4},
    )
    assert row["p.winner"] == "inconclusive"


@pytest.mark.parametrize(
    ("band", "ab", "ba", "winner"),
    [
        (0.0, 0.5, 0.5, "tie"),  # p_a = p_b = 0.5 exactly
        (0.0, 0.5, 0.49, "a"),  # p_a = 0.505
        (0.05, 0.52, 0.5, "tie"),  # p_a - p_b = 0.02 inside the band
        (0.05, 0.6, 0.5, "a"),  # p_a - p_b = 0.1 outside it
        (0.05, 0.3, 0.6, "b"),  # p_a = 0.35, p_b = 0.65
    ],
)
def test_pairwise_probability_decision_and_its_tie_band(
    band: float, ab: float, ba: float, winner: str
) -> None:
    row = _pairwise_row({"tie_band": band}, {"A": ab, "B": 1 - ab}, {"A": ba, "B": 1 - ba})
    p_a = (ab + (1 - ba)) / 2
    assert row["p.p_a"] == pytest.approx(p_a)
    assert row["p.winner"] == winner


def test_pairwise_probability_decision_with_ties_allowed() -> None:
    # the tie label's averaged probability (0.5) is above p_a (0.3) and p_b (0.2): a tie
    row = _pairwise_row(
        {"allow_tie": True}, {"A": 0.3, "B": 0.2, "tie": 0.5}, {"A": 0.2, "B": 0.3, "tie": 0.5}
    )
    assert row["p.winner"] == "tie"
    row = _pairwise_row(
        {"allow_tie": True}, {"A": 0.6, "B": 0.1, "tie": 0.3}, {"A": 0.2, "B": 0.5, "tie": 0.3}
    )
    assert row["p.winner"] == "a"  # p_a = 0.55, p_b = 0.15, p_tie = 0.3


def test_pairwise_probability_decision_needs_logprobs() -> None:
    with pytest.raises(ConfigError, match=r"decision probability .* needs judge_params.scoring LOGPROBS"):
        load_judge_config("pairwise/preference", {"pairwise_judge_params.decision": "probability"})


def test_label_probabilities_in_generation_mode() -> None:
    raw = '{"explanation": "fine", "judgment": "Yes"}'
    tokens = ('{"', "explanation", '":', ' "', "fine", '",', ' "', "judgment", '":', ' "', "Yes", '"}', "")
    alternatives: list[dict[str, float]] = [{t: 0.0} for t in tokens]
    # at the token that writes the value: Yes 0.6, No 0.3, and a token no label starts with (dropped)
    alternatives[10] = {"Yes": math.log(0.6), "No": math.log(0.3), "Maybe": math.log(0.1)}
    completion = Completion(raw, "stop", 10, len(tokens), token_logprobs=tuple(alternatives), tokens=tokens)
    config = {
        "name": "j",
        "judge_params": {
            "prompt_template": "{question}",
            "include_explanation": True,
            "label_probabilities": True,
        },
    }
    backend = ScriptedBackend([completion])
    row = Engine(config, backend).run(ROWS).to_pylist()[0]
    assert backend.requests[0].logprobs == 20
    # renormalized over the labels: 0.6 / 0.9 and 0.3 / 0.9
    assert row["j.judgment_p.Yes"] == pytest.approx(2 / 3) and row["j.judgment_p.No"] == pytest.approx(1 / 3)
    assert row["j.judgment_confidence"] == pytest.approx(2 / 3)
    assert row["j.judgment"] is True and row["j.score"] == 1.0  # the verdict itself is the generated one


def test_statuses_in_logprob_mode() -> None:
    backend = ScriptedBackend([], labels=lambda r: LabelScores(None, "too_long", 9999, "prompt too long"))
    assert Engine(judge(), backend).run(ROWS)["j.status"].to_pylist() == ["too_long"]

    class NoLabels:
        model_id = "generate-only"
        constraint_kinds = ("regex",)

        def generate(self, requests: Any) -> list[Completion]:
            return []

        def close(self) -> None:
            pass

    table = Engine(judge(), NoLabels()).run(ROWS)  # type: ignore[arg-type]
    assert table["j.status"].to_pylist() == ["backend_error"]
    assert "cannot score labels" in table["j.error"][0].as_py()


def test_logprob_config_rules() -> None:
    with pytest.raises(ConfigError, match="BOOL, ENUM or INT"):
        load_judge_config(judge(judgment_type="FLOAT"))
    with pytest.raises(ConfigError, match="needs judgment_scores"):
        load_judge_config(judge(judgment_type="INT"))
    rubric = {
        "judge_params": {"prompt_template": "{q}", "scoring": "LOGPROBS"},
        "rubric_judge_params": {"criteria": [{"id": "x", "description": "d"}]},
    }
    with pytest.raises(ConfigError, match="rubric"):
        load_judge_config(rubric)


def test_label_request_is_a_plain_value() -> None:
    request = LabelRequest((), ("Yes", "No"), '{"judgment": "', '"')
    assert request.with_suffix is False


# ----------------------------------------------------------------------------------- calibration


def test_isotonic_pool_adjacent_violators_by_hand() -> None:
    # y = 0, 1, 0, 1 at x = .1 .2 .3 .4: the middle pair violates order and pools to 0.5
    assert fit_isotonic([0.1, 0.2, 0.3, 0.4], [False, True, False, True]) == (
        [0.1, 0.2, 0.3, 0.4],
        [0.0, 0.5, 0.5, 1.0],
    )
    assert fit_isotonic([0.5, 0.5], [False, True]) == ([0.5], [0.5])  # ties pool first


def test_expected_calibration_error_by_hand() -> None:
    # bin [0.1, 0.2): p .1 and .15, one positive -> |0.5 - 0.125| * 2/3 = 0.25
    # bin [0.9, 1.0]: p .9, positive -> |1 - 0.9| * 1/3 = 0.0333
    assert expected_calibration_error([0.1, 0.15, 0.9], [False, True, True]) == pytest.approx(0.25 + 0.1 / 3)


def test_platt_is_finite_on_separable_labels_and_monotone() -> None:
    a, b = fit_platt([0.2, 0.4, 0.6, 0.8, 0.9], [False, False, True, True, True])
    assert math.isfinite(a) and math.isfinite(b) and a > 0


def test_fit_reports_ece_and_maps_values() -> None:
    # an over-confident judge: says 0.9 but is right only half the time
    probs = [0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1] * 2
    truth = [True, False, True, False, False, False, False, False] * 2
    calibration = fit(probs, truth, method="isotonic", judge="j", column="j.p", positive="True")
    assert calibration.fitted_rows == 8
    # fitted slice: bin .9 -> |0.5 - 0.9| * 4/8, bin .1 -> |0 - 0.1| * 4/8: ECE 0.25 before
    assert calibration.report["fitted"]["ece_before"] == pytest.approx(0.25)
    assert calibration.report["held_out"]["ece_after"] == pytest.approx(0.0)
    assert calibration.apply([0.9, 0.1, 0.5, None]) == [0.5, 0.0, 0.25, None]


def test_calibrated_column_is_written_and_the_file_round_trips(tmp_path: Path) -> None:
    calibration = Calibration("platt", "j", "j.judgment_p.Yes", "True", {"a": 1.0, "b": 0.0}, 10)
    path = tmp_path / "cal.json"
    calibration.save(path)
    loaded = Calibration.load(path)
    table = Engine(judge(), scripted({"Yes": 0.2, "No": 0.6}), calibrations=[loaded]).run(ROWS)
    # a = 1, b = 0 is the identity on probabilities
    assert table["j.calibrated"].to_pylist() == [pytest.approx(0.25)]
    with pytest.raises(InputError, match="matches no output column"):
        Engine(
            judge(),
            scripted({"Yes": 1.0, "No": 1.0}),
            calibrations=[Calibration("platt", "x", "x.p", "1", {}, 1)],
        ).run(ROWS)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="calibration file"):
        Calibration.load(tmp_path / "bad.json")


def test_calibrate_command(tmp_path: Path) -> None:
    import subprocess
    import sys

    rows = [{"question": f"q{i}", "answer": "a", "label": "yes" if i % 2 else "no"} for i in range(20)]
    probabilities = iter([0.9 if i % 4 else 0.2 for i in range(20)])
    backend = ScriptedBackend(
        [], labels=lambda r: (lambda p: {"Yes": math.log(p), "No": math.log(1 - p)})(next(probabilities))
    )
    results = tmp_path / "r.parquet"
    pq.write_table(Engine(judge(), backend).run(rows), results)
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "calibrate", str(results), "--column", "j.judgment_p.Yes",
         "--label-column", "label", "--method", "platt"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ECE" in done.stdout
    saved = Calibration.load(tmp_path / "r.parquet.calibration.json")
    assert saved.method == "platt" and saved.positive == "True" and saved.fitted_rows == 10
