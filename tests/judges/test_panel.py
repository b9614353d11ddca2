"""Panels and human agreement, against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.analysis.human import agreement_report, as_results
from jurist.errors import JuristError
from jurist.io.writers import read_output
from jurist.judges.panel import Panel
from jurist.labels.source import LabelSource
from jurist.records import GenerationRequest

ROWS = [{"question": f"q{i}", "answer": f"a{i}"} for i in range(4)]


def simple(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "judge_params": {"system_instruction": f"judge {name}", "prompt_template": "{question} {answer}"},
    }


# verdicts per judge and row: Yes / No / a malformed answer (x)
VERDICTS = {
    "j1": ["Yes", "No", "Yes", "Yes"],
    "j2": ["Yes", "No", "No", "x"],
    "j3": ["No", "No", "x", "x"],
}


def panel_script(request: GenerationRequest) -> str:
    judge = request.messages[0].content.split()[1]
    row = int(request.messages[-1].content.split()[0][1:])
    answer = VERDICTS[judge][row]
    return "garbage" if answer == "x" else json.dumps({"judgment": answer})


@pytest.fixture()
def panel_table() -> tuple[pa.Table, Engine]:
    engine = Engine([simple("j1"), simple("j2"), simple("j3")], ScriptedBackend(panel_script), panel=True)
    return engine.run(ROWS), engine


def test_panel_rows_plurality_mean_and_quorum(panel_table: tuple[pa.Table, Engine]) -> None:
    table, engine = panel_table
    assert engine.panel is not None and engine.panel.quorum == 2  # majority of 3
    # row 0: Yes Yes No -> Yes (2 votes); row 1: No x3; row 2: Yes No (j3 failed) -> tie, no plurality;
    # row 3: only j1 is valid, below the quorum of 2 -> inconclusive
    assert table["panel.judgment"].to_pylist() == [True, False, None, None]
    assert table["panel.judgment_votes"].to_pylist() == [2, 3, 1, 0]
    assert table["panel.valid"].to_pylist() == [3, 3, 2, 1]
    assert table["panel.status"].to_pylist() == ["ok", "ok", "ok", "inconclusive"]
    # mean of scores: (1+1+0)/3, 0, (1+0)/2, none
    assert table["panel.score"].to_pylist() == pytest.approx([2 / 3, 0.0, 0.5, None])  # type: ignore[arg-type]
    assert table["panel.score_median"].to_pylist() == [1.0, 0.0, 0.5, None]


def test_panel_agreement_alpha_and_kappa(panel_table: tuple[pa.Table, Engine]) -> None:
    table, engine = panel_table
    assert engine.panel is not None
    report = engine.panel.agreement(table)
    stats = report["fields"]["judgment"]
    # Krippendorff (nominal). Pairable units: row0 (T,T,F), row1 (F,F,F), row2 (T,F); row3 has one value.
    # Coincidences, weight 1/(m-1): row0 -> TT 1, TF 1, FT 1; row1 -> FF 3; row2 -> TF 1, FT 1.
    # n_T = 1 + 2 = 3, n_F = 2 + 3 = 5, n = 8. alpha = 1 - (n-1)(o_TF+o_FT) / (2 n_T n_F) = 1 - 7*4/30 = 1/15
    assert stats["krippendorff_alpha"] == pytest.approx(1 / 15)
    # Cohen's kappa, j1 vs j2 over rows 0-2: p_o = 2/3, p_e = 2/3*1/3 + 1/3*2/3 = 4/9 -> (2/9)/(5/9) = 0.4
    # j1 vs j3 over rows 0-1: p_o = 1/2, p_e = 1/2*0 + 1/2*1 = 1/2 -> 0; j2 vs j3 likewise 0
    assert stats["cohen_kappa"] == {"j1|j2": pytest.approx(0.4), "j1|j3": 0.0, "j2|j3": 0.0}
    assert report["inconclusive_rows"] == 1


def test_quorum_is_configurable_and_checked() -> None:
    engine = Engine(
        [simple("j1"), simple("j2"), simple("j3")], ScriptedBackend(panel_script), panel=True, quorum=1
    )
    table = engine.run(ROWS)
    assert table["panel.status"].to_pylist() == ["ok"] * 4
    assert table["panel.judgment"][3].as_py() is True
    with pytest.raises(JuristError, match="quorum"):
        Engine([simple("j1"), simple("j2")], ScriptedBackend([]), panel=True, quorum=3)


def test_panel_needs_shared_fields() -> None:
    other = {"name": "o", "judge_params": {"prompt_template": "{question}", "judgment_type": "FLOAT"}}
    with pytest.raises(JuristError, match="share no judgment field"):
        Engine([simple("j1"), other], ScriptedBackend([]), panel=True)


PAIR: dict[str, Any] = {
    "judge_params": {"prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}"},
    "pairwise_judge_params": {},
}
PAIR_ROWS = [
    {"question": "q0", "response_a": "GOOD", "response_b": "BAD", "label": 1},
    {"question": "q1", "response_a": "BAD", "response_b": "GOOD", "label": 2},
]


def pair_script(request: GenerationRequest) -> str:
    first = request.messages[-1].content.split("FIRST: ")[1].split("\n")[0]
    if request.messages[0].content.startswith("always-first"):
        return json.dumps({"judgment": "A"})
    return json.dumps({"judgment": "A" if first == "GOOD" else "B"})


def test_pairwise_panel_winner_and_position_bias() -> None:
    biased = {
        **PAIR,
        "name": "biased",
        "judge_params": {**PAIR["judge_params"], "system_instruction": "always-first"},
    }
    fair = {**PAIR, "name": "fair", "judge_params": {**PAIR["judge_params"], "system_instruction": "fair"}}
    engine = Engine([biased, fair], ScriptedBackend(pair_script), panel=True)
    table = engine.run(PAIR_ROWS)
    assert table["biased.winner"].to_pylist() == ["tie", "tie"]
    assert table["fair.winner"].to_pylist() == ["a", "b"]
    # one vote each for tie and for the right side: no plurality
    assert table["panel.winner"].to_pylist() == [None, None]
    assert table["panel.score"].to_pylist() == [0.75, 0.25]  # mean of 0.5 and 1.0 / 0.0
    assert engine.panel is not None
    bias = engine.panel.agreement(table)["position_bias"]
    # biased: 4 of 4 verdicts named the first-shown response; fair: GOOD was first in 2 of 4 prompts
    assert bias == {"biased": 1.0, "fair": 0.5}


def test_models_run_one_after_another() -> None:
    events: list[str] = []

    class Recording(ScriptedBackend):
        def generate(self, requests):  # type: ignore[no-untyped-def]
            events.append(f"generate {self.model_id} {len(requests)}")
            return super().generate(requests)

        def close(self) -> None:
            events.append(f"close {self.model_id}")

    def factory(config):  # type: ignore[no-untyped-def]
        events.append(f"load {config.model.model_name}")
        return Recording(lambda r: json.dumps({"judgment": "Yes"}), model_id=config.model.model_name)

    judges = [
        load_judge_config({**simple(n), "inference_config": {"model": {"model_name": m}}})
        for n, m in (("j1", "m1"), ("j2", "m2"))
    ]
    engine = Engine(judges, backend_factory=factory, chunk_size=2, panel=True)
    table = engine.run(ROWS)
    engine.close()
    assert events == [
        "load m1", "generate m1 2", "generate m1 2", "close m1",
        "load m2", "generate m2 2", "generate m2 2", "close m2",
    ]  # fmt: skip
    assert table["j1.model"].to_pylist() == ["m1"] * 4 and table["j2.model"].to_pylist() == ["m2"] * 4
    assert table["panel.judgment"].to_pylist() == [True] * 4


AGREE_ROWS = [
    {"question": f"q{i}", "response_a": f"A{i}", "response_b": f"B{i}", "label": label}
    for i, label in enumerate([1, 2, 1, 2])
]
# per row, the verdicts of order ab then order ba, as position labels
AGREE_SCRIPT = ["A", "B", "A", "B", "A", "A", "B", "A"]


def agree_table() -> pa.Table:
    answers = [json.dumps({"judgment": v}) for v in AGREE_SCRIPT]
    return Engine({**PAIR, "name": "p"}, ScriptedBackend(answers)).run(AGREE_ROWS)


def test_agreement_with_human_labels_by_hand() -> None:
    table = agree_table()
    # winners: row0 A/B -> a,a = a; row1 A/B -> a; row2 A/A -> a,b -> tie; row3 B/A -> b,b = b
    assert table["p.winner"].to_pylist() == ["a", "a", "tie", "b"]
    report = agreement_report(table, LabelSource(column="label").for_results(as_results(table)).labels)["p"]
    # labels 1,2,1,2 -> a,b,a,b; right on rows 0 and 3
    assert report["accuracy"]["estimate"] == 0.5
    assert (report["accuracy"]["successes"], report["accuracy"]["trials"]) == (2, 4)
    # kappa: p_o = 2/4; predicted a .5, tie .25, b .25; truth a .5, b .5
    # p_e = .5*.5 + .25*.5 = .375; kappa = (.5 - .375) / (1 - .375) = 0.2
    assert report["cohen_kappa"] == pytest.approx(0.2)
    assert report["order_consistency"] == 0.75  # 3 of 4 rows named the same winner in both orders
    # order ab alone: a,a,a,b vs a,b,a,b -> 3/4; order ba alone: a,a,b,b -> 2/4; mean 0.625
    assert report["accuracy_by_order"] == {"ab": 0.75, "ba": 0.5, "mean": 0.625}
    assert report["confusion"] == {"labels": ["a", "b", "tie"], "counts": [[1, 0, 1], [1, 1, 0], [0, 0, 0]]}


def test_agree_command_on_an_llmbar_style_file(tmp_path: Path) -> None:
    results = tmp_path / "results.parquet"
    import pyarrow.parquet as pq

    pq.write_table(agree_table(), results)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps([{"input": r["question"], "label": r["label"]} for r in AGREE_ROWS]))
    command = [sys.executable, "-m", "jurist", "agree", str(results), "--labels", str(labels)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "accuracy 50.0 %" in done.stdout and "order consistency 75.0 %" in done.stdout
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(as_json.stdout)["p"]["cohen_kappa"] == pytest.approx(0.2)
    assert read_output(results).num_rows == 4


def test_panel_class_rejects_one_judge() -> None:
    from jurist.judges.judge import Judge

    with pytest.raises(JuristError, match="at least two"):
        Panel([Judge.from_config(simple("j1"))])


def reward(name: str, mark: str) -> dict[str, Any]:
    return {
        "name": name,
        "judge_params": {"prompt_template": "{question}" + mark},
        "reward_judge_params": {"response_template": "{answer}"},
    }


def test_a_panel_of_reward_models_combines_their_scores() -> None:
    # r1 rewards row i with i, r2 with 3i: mean 2i, median (of two) 2i; no judgment field to vote on
    def rewards(request: Any) -> list[float]:
        user = request.messages[-2].content
        row = float(user.strip("q!"))
        return [3 * row if user.endswith("!") else row]

    engine = Engine([reward("r1", ""), reward("r2", "!")], ScriptedBackend([], rewards=rewards), panel=True)
    table = engine.run(ROWS)
    assert table["r2.reward"].to_pylist() == [0.0, 3.0, 6.0, 9.0]
    assert table["panel.score"].to_pylist() == [0.0, 2.0, 4.0, 6.0]
    assert table["panel.score_median"].to_pylist() == [0.0, 2.0, 4.0, 6.0]
    assert table["panel.status"].to_pylist() == ["ok"] * 4
    assert not [c for c in table.column_names if c.startswith("panel.judgment")]
