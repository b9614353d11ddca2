"""A pairwise judge in pointwise mode: each response judged alone, the winner from P(Yes) of A against B.

Logic through the scripted backend (what was sent is recorded), the numbers checked against the module's
formula worked by hand, mirrored rows against each other, and the commands that show a judge (`validate`,
`render`) on a real YAML file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jurist import Engine, ScriptedBackend
from jurist.config.loading import load_judge_config
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.pairwise_pointwise import SYSTEM_INSTRUCTION, PointwisePairJudge
from jurist.records import GenerationRequest, LabelRequest

POINTWISE = {"pairwise_judge_params.mode": "pointwise", "judge_params.scoring": "LOGPROBS"}
# P(Yes) the scripted model gives each answer, by the answer's text
P_YES = {"Paris.": 0.9, "Lyon.": 0.2, "Paris, obviously.": 0.6, "A city.": 0.6}
ROWS = [
    {"question": "Capital of France?", "response_a": "Paris.", "response_b": "Lyon."},
    {"question": "Capital of France?", "response_a": "Lyon.", "response_b": "Paris."},
    {"question": "Capital of France?", "response_a": "Paris, obviously.", "response_b": "A city."},
]


def answer_of(request: LabelRequest | GenerationRequest) -> str:
    text = request.messages[-1].content
    return text.split("[Response]\n", 1)[1].strip()


def yes_scores(request: LabelRequest) -> dict[str, float]:
    p = P_YES[answer_of(request)]
    return {"Yes": math.log(p), "No": math.log(1 - p)}


def test_each_prompt_holds_one_response_under_the_built_in_instruction() -> None:
    backend = ScriptedBackend([], labels=yes_scores)
    engine = Engine(load_judge_config("pairwise/preference", POINTWISE), backend)
    assert isinstance(engine.judges[0].kind, PointwisePairJudge)
    engine.run(ROWS[:1])
    sent = backend.label_requests
    assert len(sent) == 2
    for request, mine, other in zip(sent, ("Paris.", "Lyon."), ("Lyon.", "Paris."), strict=True):
        prompt = "\n".join(m.content for m in request.messages)
        assert mine in prompt and other not in prompt
        assert request.messages[0].content.startswith(SYSTEM_INSTRUCTION)
        assert "Capital of France?" in prompt
    assert sent[0].labels == sent[1].labels and len(sent[0].labels) == 2  # Yes / No after the answer prefix


def test_logprobs_winner_and_probability_by_hand_and_mirrored_rows_add_up_to_one() -> None:
    engine = Engine(
        load_judge_config("pairwise/preference", POINTWISE), ScriptedBackend([], labels=yes_scores)
    )
    table = engine.run(ROWS)
    name = engine.judges[0].name
    p_a = table[f"{name}.p_a"].to_pylist()
    for row, got in zip(ROWS, p_a, strict=True):
        expected = (1 + P_YES[row["response_a"]] - P_YES[row["response_b"]]) / 2
        assert got == pytest.approx(expected, abs=1e-9)
    assert p_a[0] + p_a[1] == pytest.approx(1.0, abs=1e-12)  # row 1 is row 0 mirrored
    assert table[f"{name}.winner"].to_pylist() == ["a", "b", "tie"]  # the third: equal P(Yes), a tie
    assert table[f"{name}.score"].to_pylist() == p_a
    assert table[f"{name}.a_p_yes"].to_pylist() == pytest.approx([0.9, 0.2, 0.6])
    assert table[f"{name}.a_judgment"].to_pylist() == [True, False, True]
    assert table[f"{name}.status"].to_pylist() == ["ok"] * 3
    assert f"{name}.ab_judgment" not in table.column_names  # no orders in pointwise mode


def test_the_tie_band_widens_ties() -> None:
    overrides = {**POINTWISE, "pairwise_judge_params.tie_band": 0.75}
    engine = Engine(
        load_judge_config("pairwise/preference", overrides), ScriptedBackend([], labels=yes_scores)
    )
    winners = engine.run(ROWS)[f"{engine.judges[0].name}.winner"].to_pylist()
    assert winners == ["tie", "tie", "tie"]  # |0.9 - 0.2| = 0.7 <= 0.75


def generated(request: GenerationRequest) -> str:
    verdict = {"Paris.": "Yes", "Lyon.": "No", "Paris, obviously.": "Yes"}.get(answer_of(request))
    if verdict is None:
        return "not json at all"
    return json.dumps({"explanation": "checked", "judgment": verdict})


def test_generation_decides_yes_against_no_and_a_failed_side_is_inconclusive() -> None:
    config = load_judge_config("pairwise/preference", {"pairwise_judge_params.mode": "pointwise"})
    config = config.model_copy(
        update={"judge_params": config.judge_params.model_copy(update={"use_guided_decoding": False})}
    )
    engine = Engine(config, ScriptedBackend(generated))
    table = engine.run([*ROWS, {"question": "q", "response_a": "Paris.", "response_b": "Paris."}])
    name = engine.judges[0].name
    assert table[f"{name}.winner"].to_pylist() == ["a", "b", "inconclusive", "tie"]
    assert table[f"{name}.score"].to_pylist() == [1.0, 0.0, None, 0.5]
    statuses = table[f"{name}.status"].to_pylist()
    assert statuses[:2] == ["ok", "ok"] and statuses[2] == "parse_error" and statuses[3] == "ok"
    assert "response B" in table[f"{name}.error"][2].as_py()
    assert f"{name}.p_a" not in table.column_names
    assert table[f"{name}.b_explanation"].to_pylist()[:2] == ["checked", "checked"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"judge_params.samples": 3, "inference_config.generation.temperature": 0.7},
            "samples > 1 is not supported",
        ),
        ({"pairwise_judge_params.decision": "both_orders"}, "decision both_orders compares two orders"),
        ({"pairwise_judge_params.allow_tie": True}, "a tie is a difference within tie_band"),
    ],
)
def test_what_pointwise_mode_refuses(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_judge_config("pairwise/preference", {"pairwise_judge_params.mode": "pointwise", **overrides})


def test_a_pointwise_prompt_needs_pointwise_mode() -> None:
    with pytest.raises(ConfigError, match="need mode: pointwise"):
        load_judge_config(
            "pairwise/preference", {"pairwise_judge_params.pointwise_prompt_template": "{response}"}
        )


def test_own_pointwise_prompt_and_the_reference(tmp_path: Path) -> None:
    config = {
        "name": "own",
        "judge_params": {
            "prompt_template": "Q {question}\nA {response_a}\nB {response_b}\nRef {reference}",
            "scoring": "LOGPROBS",
        },
        "pairwise_judge_params": {"mode": "pointwise"},
    }
    judge = Judge.from_config(config)
    text = "\n".join(m.content for m in judge.start({**ROWS[0], "reference": "Paris"}).requests[0].messages)
    assert "[Reference answer]\nParis" in text and "Lyon." not in text
    own = {
        **config,
        "pairwise_judge_params": {"mode": "pointwise", "pointwise_prompt_template": "Only {response}"},
    }
    request = Judge.from_config(own).start(ROWS[0]).requests[1]
    assert request.messages[-1].content == "Only Lyon."


def test_validate_and_render_show_the_mode(tmp_path: Path) -> None:
    from jurist.cli import app

    path = tmp_path / "pointwise.yaml"
    path.write_text(
        "judge_params:\n"
        "  prompt_template: 'Q {question} A {response_a} B {response_b}'\n"
        "  scoring: LOGPROBS\n"
        "pairwise_judge_params:\n"
        "  mode: pointwise\n"
    )
    shown = CliRunner().invoke(app, ["validate", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "mode pointwise: each response alone with the request" in shown.output
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(ROWS[0]) + "\n")
    rendered = CliRunner().invoke(app, ["render", "-c", str(path), "-i", str(rows)])
    assert rendered.exit_code == 0, rendered.output
    assert rendered.output.count("[Response]") == 2
    assert "Paris." in rendered.output and "Lyon." in rendered.output
