"""``jurist bench`` with labels: accuracy with its Wilson interval, order consistency, the first-shown rate
and both decision rules of a pairwise judge, per group, each checked against a computation of the test's
own (the Wilson formula written out; winners decided by hand from the scripted probabilities)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jurist import ScriptedBackend
from jurist.bench import BenchSpec, run_bench, write
from jurist.errors import ConfigError, InputError
from jurist.labels.source import LabelSource
from jurist.records import LabelRequest

PAIRWISE = {
    "name": "p",
    "judge_params": {"prompt_template": "Q {question}\n1: {response_a}\n2: {response_b}"},
    "pairwise_judge_params": {},
}
# per row: P(first shown) in order ab (A first) and in order ba (B first), the human label (1: A, 2: B)
CASES = [
    (0.9, 0.2, 1),  # consistent for A: right
    (0.8, 0.7, 2),  # leans first both times; p_a = (0.8 + 0.3) / 2 = 0.55 -> A: wrong
    (0.6, 0.9, 2),  # p_a = (0.6 + 0.1) / 2 = 0.35 -> B: right (orders disagree: both-orders says tie)
    (0.3, 0.8, 2),  # consistent for B: right
    (0.7, 0.6, 1),  # p_a = 0.55 -> A: right, inconsistent
    (0.55, 0.5, 1),  # p_a = 0.525 -> A: right, inconsistent (ba: B first at exactly 0.5 -> label order)
]


def rows() -> list[dict[str, Any]]:
    return [
        {
            "question": f"q{i}",
            "response_a": f"a{i}",
            "response_b": f"b{i}",
            "label": label,
            "part": "xy"[i % 2],
        }
        for i, (_, _, label) in enumerate(CASES)
    ]


def scores(request: LabelRequest) -> dict[str, float]:
    text = request.messages[-1].content
    i = int(text.split()[1][1:])
    ab, ba, _ = CASES[i]
    p_first = ab if "1: a" in text else ba
    return {"A": math.log(p_first), "B": math.log(1 - p_first)}


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval, written out."""
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return centre - half, centre + half


def hand_decisions() -> tuple[list[str], list[str], list[bool], list[bool]]:
    """Winners by probability and by both orders, consistency, and whether each order named the first."""
    probability, both, consistent, firsts = [], [], [], []
    for ab, ba, _ in CASES:
        p_a = (ab + (1 - ba)) / 2
        probability.append("a" if p_a > 0.5 else "b" if p_a < 0.5 else "tie")
        side_ab = "a" if ab >= 0.5 else "b"  # the more likely label; A on an exact 0.5 (label order)
        side_ba = "b" if ba >= 0.5 else "a"
        both.append(side_ab if side_ab == side_ba else "tie")
        consistent.append(side_ab == side_ba)
        firsts += [ab >= 0.5, ba >= 0.5]
    return probability, both, consistent, firsts


def check_share(share: dict[str, Any], successes: int, trials: int) -> None:
    assert (share["successes"], share["trials"]) == (successes, trials)
    assert share["estimate"] == pytest.approx(successes / trials)
    low, high = wilson(successes, trials)
    assert share["low"] == pytest.approx(low, abs=1e-9) and share["high"] == pytest.approx(high, abs=1e-9)


def test_pairwise_quality_equals_a_computation_by_hand() -> None:
    data = rows()
    spec = BenchSpec(
        judges=[PAIRWISE],
        rows=data,
        modes=["logprobs"],
        cold_rows=1,
        labels=LabelSource(column="label"),
        by="part",
    )
    bench = run_bench(spec, lambda config: ScriptedBackend([], labels=scores), progress=None)
    entry = bench["results"][0]
    quality = entry["quality"]
    truth = ["a" if label == 1 else "b" for _, _, label in CASES]
    probability, both, consistent, firsts = hand_decisions()
    right = [w == t for w, t in zip(probability, truth, strict=True)]
    check_share(quality["accuracy"], sum(right), len(CASES))  # the default decision: probability
    check_share(quality["decided"], len(CASES), len(CASES))
    check_share(quality["order_consistency"], sum(consistent), len(CASES))
    check_share(quality["first_shown_rate"], sum(firsts), 2 * len(CASES))
    by_decision = quality["accuracy_by_decision"]
    check_share(by_decision["probability"], sum(right), len(CASES))
    check_share(by_decision["both_orders"], sum(w == t for w, t in zip(both, truth, strict=True)), len(CASES))
    p_a = [(ab + (1 - ba)) / 2 for ab, ba, _ in CASES]
    assert quality["exact_ties"] == sum(p == 0.5 for p in p_a) == 0
    assert quality["distinct_scores"] == len({round(p, 9) for p in p_a}) == 5  # rows 1 and 4 share 0.55
    for part in "xy":
        picked = [i for i, r in enumerate(data) if r["part"] == part]
        check_share(entry["quality_by_group"][part]["accuracy"], sum(right[i] for i in picked), len(picked))


def test_the_baselines_stand_beside_the_accuracy_counted_by_hand() -> None:
    """Answers of different lengths: the majority, first-shown, longer- and shorter-answer rules on the same
    rows, each counted here, with its Wilson interval and whether the judge beats it."""
    data = rows()
    extra = [3, 0, 2, 0, 1, 1]  # characters added to answer a; row 5 gets one on b too: equal, no verdict
    for row, n in zip(data, extra, strict=True):
        row["response_a"] += "!" * n
    data[5]["response_b"] += "!"
    spec = BenchSpec(
        judges=[PAIRWISE], rows=data, modes=["logprobs"], cold_rows=1, labels=LabelSource(column="label")
    )
    bench = run_bench(spec, lambda config: ScriptedBackend([], labels=scores), progress=None)
    quality = bench["results"][0]["quality"]
    truth = ["a" if label == 1 else "b" for _, _, label in CASES]  # a b b b a a
    longer = ["a", None, "a", None, "a", None]
    shorter = ["b", None, "b", None, "b", None]
    expected = {
        "majority": truth.count(max(("a", "b"), key=truth.count)),  # 3 a, 3 b: a tie goes to 'a'
        "first shown": truth.count("a"),
        "longer answer": sum(w == t for w, t in zip(longer, truth, strict=True)),
        "shorter answer": sum(w == t for w, t in zip(shorter, truth, strict=True)),
    }
    assert expected == {"majority": 3, "first shown": 3, "longer answer": 2, "shorter answer": 1}
    probability, _, _, _ = hand_decisions()
    judge_right = sum(w == t for w, t in zip(probability, truth, strict=True))
    assert list(quality["baselines"]) == list(expected)
    for name, right in expected.items():
        entry = quality["baselines"][name]
        check_share(entry, right, len(CASES))
        judge_low, _ = wilson(judge_right, len(CASES))
        word = "no" if judge_right <= right else "yes" if judge_low > right / len(CASES) else "unclear"
        assert entry["beaten"] == word
    assert quality["baselines"]["majority"]["rule"] == "always 'a'"


def test_labels_must_match_the_rows_and_groups_need_labels(tmp_path: Path) -> None:
    data = rows()
    elsewhere = tmp_path / "other.jsonl"
    elsewhere.write_text("".join(json.dumps({"row_id": f"x{i}", "label": 1}) + "\n" for i in range(6)))
    with pytest.raises(InputError, match=r"no label of .*other\.jsonl matches a row of the input"):
        BenchSpec(judges=[PAIRWISE], rows=data, labels=LabelSource(elsewhere)).check()
    with pytest.raises(ConfigError, match=r"groups \(--by\) need labels"):
        BenchSpec(judges=[PAIRWISE], rows=data, by="part").check()
    with pytest.raises(ConfigError, match="--by 'team': the input has no such column"):
        BenchSpec(judges=[PAIRWISE], rows=data, labels=LabelSource(column="label"), by="team").check()


def test_bench_command_reports_quality_from_a_labels_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line: labels by position from an LLMBar-style JSON file, the table's quality columns."""
    data = rows()
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "label"}) + "\n" for r in data))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps([{"label": r["label"]} for r in data]))
    judge = tmp_path / "pair.yaml"
    judge.write_text(json.dumps(PAIRWISE))
    monkeypatch.setattr("jurist.backends.create_backend", lambda config: ScriptedBackend([], labels=scores))
    base = ["bench", "-c", str(judge), "-i", str(source), "-o", str(tmp_path / "out"), "--modes", "logprobs",
            "--quiet", "--cold-rows", "1"]  # fmt: skip
    command = [*base, "--labels", str(labels), "--by", "part"]
    from jurist.cli import app

    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    probability, _, _, _ = hand_decisions()
    truth = ["a" if label == 1 else "b" for _, _, label in CASES]
    share = sum(w == t for w, t in zip(probability, truth, strict=True)) / len(CASES)
    assert f"accuracy {share:.3f} [" in result.output and "on 6 labelled rows" in result.output
    # the baselines on the same rows, each with its interval (the answers are of equal length here)
    assert "  baseline majority (always 'a'): 50.0 % [18.8, 81.2] %: " in result.output
    assert "  baseline first shown (always 'a'): 50.0 %" in result.output
    assert "  baseline longer answer (the longer answer wins): 0.0 %" in result.output
    table = (tmp_path / "out" / "bench.md").read_text()
    assert "accuracy [95 % CI]" in table and "first shown" in table
    saved = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert set(saved["results"][0]["quality_by_group"]) == {"x", "y"}
    missing = CliRunner().invoke(app, [*base, "--labels", str(source)])
    assert missing.exit_code == 2 and "has no label column 'label'" in missing.output


def test_written_files_hold_the_quality_columns(tmp_path: Path) -> None:
    data = rows()
    spec = BenchSpec(
        judges=[PAIRWISE], rows=data, modes=["logprobs"], cold_rows=1, labels=LabelSource(column="label")
    )
    bench = run_bench(spec, lambda c: ScriptedBackend([], labels=scores), progress=None)
    files = write(bench, tmp_path)
    table = files["markdown"].read_text()
    assert (
        "accuracy [95 % CI]" in table and "majority baseline" in table and "longer-answer baseline" in table
    )
