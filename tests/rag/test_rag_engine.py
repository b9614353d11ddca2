"""The six RAG metrics over the 200-row RAG set on the real vLLM CPU engine: the random-weight tiny model
(the adversarial case for guided decoding) on every row, and the embedded SmolLM2 on a sample of it (the
first 10 rows of each of the five cases and every row without a reference: 56 rows, a real model's answers
of each kind in a quarter of the time the 200 rows took).

Every row must be well-formed or carry a documented status: ``ok`` (with a score, or an undefined score and
its reason) or ``missing_input`` for the rows without a reference in the metrics that need one; and every
step's answer must be one the step's shape admits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import InferenceConfig, LLMJudge, evaluate_answers
from jurist.judges.rag.schemas import Rating, Statements, Verdicts

pytestmark = [pytest.mark.engine, pytest.mark.skipif(not have("vllm"), reason="vLLM not installed")]

DATA = Path(__file__).resolve().parents[2] / "examples" / "rag_qa.jsonl"
METRICS = [
    "answer_correctness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "faithfulness",
    "criteria_score",
]
NEEDS_REFERENCE = {"answer_correctness", "context_recall"}
BOUNDS = {"max_statements": 3, "max_statement_chars": 60, "max_reason_chars": 40}


def make_backend(model_dir: Path) -> Any:
    from jurist.backends.vllm.backend import VLLMBackend

    return VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": str(model_dir), "model_max_length": 4096},
            }
        )
    )


def rows(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def sample(folder: Path, per_case: int = 10) -> Path:
    """The first ``per_case`` rows of each case, and every row without a reference, as a JSONL file."""
    seen: dict[str, int] = {}
    kept = []
    for row in rows():
        seen[row["case"]] = seen.get(row["case"], 0) + 1
        if seen[row["case"]] <= per_case or row["reference"] is None:
            kept.append(row)
    path = folder / "rag_sample.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return path


def shapes(metric: str, row: dict[str, Any], raws: dict[str, str]) -> dict[str, Any]:
    """The shape each step of a row had to answer in; a verification has one entry per statement that its
    extraction gave (blank ones left out)."""
    statements = Statements(BOUNDS["max_statements"], BOUNDS["max_statement_chars"])
    reason = BOUNDS["max_reason_chars"]

    def verdicts(extraction: str) -> Verdicts:
        found = statements.read(json.loads(raws[extraction])) if extraction in raws else ()
        return Verdicts(max(1, len(found)), reason)

    if metric in ("answer_relevance", "criteria_score"):
        return {"rating": Rating(5, reason)}
    if metric == "context_precision":
        return {"verdicts": Verdicts(max(1, len(row["contexts"])), reason)}
    if metric == "faithfulness":
        return {"claims": statements, "verdicts": verdicts("claims")}
    if metric == "context_recall":
        return {"statements": statements, "verdicts": verdicts("statements")}
    return {
        "answer_statements": statements,
        "reference_statements": statements,
        "answer_verdicts": verdicts("answer_statements"),
        "reference_verdicts": verdicts("reference_statements"),
    }


def check_well_formed(table: Any, path: Path = DATA) -> dict[str, dict[str, int]]:
    data = rows(path)
    assert table.num_rows == len(data)
    counts: dict[str, dict[str, int]] = {}
    for metric in METRICS:
        out = table.select([c for c in table.column_names if c.startswith(f"{metric}.")]).to_pylist()
        statuses = [o[f"{metric}.status"] for o in out]
        counts[metric] = {s: statuses.count(s) for s in set(statuses)}
        for row, o in zip(data, out, strict=True):
            expected = "missing_input" if metric in NEEDS_REFERENCE and row["reference"] is None else "ok"
            assert o[f"{metric}.status"] == expected, (
                metric,
                row["id"],
                o[f"{metric}.error"],
                o[f"{metric}.raw"],
            )
            if expected != "ok":
                continue
            score, undefined = o[f"{metric}.score"], o[f"{metric}.undefined"]
            assert (score is None) == (undefined is not None), (metric, row["id"])
            assert score is None or 0.0 <= score <= 1.0
            raws = json.loads(o[f"{metric}.raw"]) if o[f"{metric}.raw"] else {}
            for step, schema in shapes(metric, row, raws).items():
                if step in raws:
                    assert re.fullmatch(schema.regex(), raws[step]), (metric, step, raws[step][:300])
    return counts


@pytest.fixture(scope="module")
def tiny_backend(tiny_model_dir: Path) -> Iterator[Any]:
    made = make_backend(tiny_model_dir)
    yield made
    made.close()


def test_six_metrics_on_the_tiny_random_model_give_well_formed_rows(tiny_backend: Any) -> None:
    table = evaluate_answers(str(DATA), LLMJudge(tiny_backend), [(m, BOUNDS) for m in METRICS])
    counts = check_well_formed(table)
    assert counts["faithfulness"] == {"ok": 200}


@pytest.mark.smollm2
@pytest.mark.slow  # the six metrics on the tiny model, every row, stay in the default tier
def test_six_metrics_on_smollm2_give_well_formed_rows(smollm2_dir: Path, tmp_path: Path) -> None:
    data = sample(tmp_path, per_case=5)
    # the 5 first rows of each of the 5 cases, and the 7 other rows without a reference (of 8; the
    # 200-row set runs on the tiny model)
    assert len(rows(data)) == 32
    backend = make_backend(smollm2_dir)
    try:
        table = evaluate_answers(str(data), LLMJudge(backend), [(m, BOUNDS) for m in METRICS])
    finally:
        backend.close()
    check_well_formed(table, data)
    faithful = [
        s
        for s, c in zip(table["faithfulness.score"].to_pylist(), table["case"].to_pylist(), strict=True)
        if c == "faithful"
    ]
    assert any(s is not None for s in faithful)
