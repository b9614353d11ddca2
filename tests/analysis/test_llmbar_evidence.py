"""The audit on the committed LLMBar run (benchmarks/llmbar_evidence.py: SmolLM2, LOGPROBS, 100 Natural
pairs): the length slope and the position rate against a hand computation from the result files."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jurist.analysis.audit import audit_judge, default_responses
from jurist.io.results import ResultTable
from jurist.labels.source import LabelSource

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "llmbar_evidence"


def results(kind: str) -> Path:
    path = RUN / f"{kind}.parquet"
    if not path.is_file():
        pytest.skip(f"{path} is absent: benchmarks/llmbar_evidence.py writes it")
    return path


def ols_slope(x: list[float], y: list[float]) -> float:
    mx, my = statistics.fmean(x), statistics.fmean(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sum((a - mx) ** 2 for a in x)


def test_the_length_slope_of_the_pointwise_run_equals_a_hand_computation() -> None:
    path = results("pointwise")
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == 200
    score = "instruction_following.score"
    pairs = [(len(r["response"]) / 100, r[score]) for r in rows if r[score] is not None]
    table = ResultTable.open(path)
    judge = table.judge("instruction_following")
    labels = LabelSource(RUN / "pointwise_labels.jsonl", id_column="id").for_results(table).labels
    audit = audit_judge(table, judge.name, labels, default_responses(table, judge))
    assert audit["length"]["score"]["slope"] == pytest.approx(
        ols_slope([p[0] for p in pairs], [p[1] for p in pairs])
    )
    assert audit["length"]["score"]["rows"] == len(pairs)
    # the error's slope: score minus the label (yes = 1) on the same lengths
    truth = {
        r["id"]: r["label"] == "yes"
        for r in map(json.loads, (RUN / "pointwise_labels.jsonl").read_text().splitlines())
    }
    errors = [(len(r["response"]) / 100, r[score] - truth[r["row_id"]]) for r in rows if r[score] is not None]
    assert audit["length"]["error"]["slope"] == pytest.approx(
        ols_slope([e[0] for e in errors], [e[1] for e in errors])
    )
    committed = json.loads((RUN / "pointwise_audit.json").read_text())["instruction_following"]
    assert committed["length"]["score"]["slope"] == pytest.approx(audit["length"]["score"]["slope"])


def test_the_position_rate_of_the_pairwise_run_equals_a_hand_count() -> None:
    path = results("pairwise")
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == 100
    verdicts = [r[f"preference.{order}_judgment"] for r in rows for order in ("ab", "ba")]
    decided = [v for v in verdicts if v in ("A", "B")]
    table = ResultTable.open(path)
    audit = audit_judge(table, "preference", None, default_responses(table, table.judge("preference")))
    position = audit["position"]["first_shown_wins"]
    assert position["trials"] == len(decided)
    assert position["estimate"] == pytest.approx(decided.count("A") / len(decided))
    consistent = [
        r["preference.position_consistent"] for r in rows if r["preference.position_consistent"] is not None
    ]
    assert audit["position"]["order_consistency"]["estimate"] == pytest.approx(
        sum(consistent) / len(consistent)
    )
    committed = json.loads((RUN / "pairwise_audit.json").read_text())["preference"]
    assert committed["position"]["first_shown_wins"]["estimate"] == pytest.approx(position["estimate"])
