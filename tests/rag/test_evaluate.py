"""``evaluate_answers`` over the 200-row RAG set: one model call per step for the whole dataset, the same
scores as one ``LLMJudge`` call per row, panels; ``jurist judge dataset -c rag/...`` from the command line;
the callable backend."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from fake_server import ChatServer, chat_server, completion
from jurist import LLMJudge, ScriptedBackend, evaluate_answers
from jurist.backends.callable import CallableBackend
from jurist.backends.scripted import ScriptedStreamingBackend
from jurist.records import GenerationRequest, Message
from jurist.scikitplots.evaluate import METADATA_KEY
from rag_answers import answer

DATA = Path(__file__).resolve().parents[2] / "examples" / "rag_qa.jsonl"
METRICS = [
    "answer_correctness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "faithfulness",
    "criteria_score",
]
STATUSES = {"ok", "missing_input"}


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def scripted(model_id: str = "scripted") -> ScriptedBackend:
    return ScriptedBackend(lambda request: answer(request.messages[-1].content), model_id=model_id)


def test_every_metric_over_200_rows_takes_one_call_per_step() -> None:
    backend = scripted()
    table = evaluate_answers(str(DATA), LLMJudge(backend), METRICS)
    assert table.num_rows == 200
    # two calls in all: every row's first steps (extractions and ratings), then every row's verifications
    assert len(backend.calls) == 2 and sum(backend.calls) == len(backend.requests) > 400
    assert table["row_id"].to_pylist() == [r["id"] for r in rows()]
    for metric in METRICS:
        statuses = table[f"{metric}.status"].to_pylist()
        assert set(statuses) <= STATUSES, metric
        for status, score, undefined in zip(
            statuses,
            table[f"{metric}.score"].to_pylist(),
            table[f"{metric}.undefined"].to_pylist(),
            strict=True,
        ):
            if status == "ok":
                assert (score is None) == (undefined is not None)
                assert score is None or 0.0 <= score <= 1.0
    cases = table["case"].to_pylist()
    for metric in ("context_precision", "context_recall", "faithfulness"):
        undefined = table[f"{metric}.undefined"].to_pylist()
        assert [u for u, c in zip(undefined, cases, strict=True) if c == "unretrieved"] == [
            "no contexts were given (no call made)"
        ] * 40
    missing = [
        s
        for s, r in zip(table["answer_correctness.status"].to_pylist(), rows(), strict=True)
        if not r["reference"]
    ]
    assert missing == ["missing_input"] * 8
    abstained = table["faithfulness.undefined"].to_pylist()[3::5]
    assert abstained == ["the answer makes no claim"] * 40
    metadata = json.loads(table.schema.metadata[METADATA_KEY])
    assert metadata["metrics"] == METRICS and set(metadata["judges"]["scripted"]) == {
        "model",
        "prompt_version",
        "prompt_hash",
    }


def test_batched_scores_equal_one_llmjudge_call_per_row() -> None:
    table = evaluate_answers(rows(), LLMJudge(scripted()), METRICS).to_pylist()
    judge = LLMJudge(lambda prompt, system: answer(prompt), on_error="record")
    for row, out in list(zip(rows(), table, strict=True))[::7]:
        q, a, c, r = row["question"], row["answer"], row["contexts"], row["reference"]
        results = {
            "answer_relevance": judge.answer_relevance(q, a),
            "context_precision": judge.context_precision(q, c, reference=r),
            "faithfulness": judge.faithfulness(q, a, c),
            "criteria_score": judge.criteria_score(q, a, row["criteria"], reference=r, contexts=c),
        }
        if r is not None:
            results["answer_correctness"] = judge.answer_correctness(q, a, r)
            results["context_recall"] = judge.context_recall(q, c, r)
        for metric, result in results.items():
            batched = out[f"{metric}.score"]
            assert (math.isnan(result.score) and batched is None) or result.score == batched, (
                metric,
                row["id"],
            )


def test_the_continuous_schedule_gives_the_same_rows() -> None:
    streaming = ScriptedStreamingBackend(lambda r: answer(r.messages[-1].content), window=37)
    streamed = evaluate_answers(str(DATA), LLMJudge(streaming), METRICS, chunk_size=64)
    chunked = evaluate_answers(str(DATA), LLMJudge(scripted()), METRICS, chunk_size=64)
    assert streamed.drop_columns([c for c in streamed.column_names if c.endswith(".model")]).equals(
        chunked.drop_columns([c for c in chunked.column_names if c.endswith(".model")])
    )


def test_a_panel_gives_each_judge_their_mean_and_agreement() -> None:
    def disagreeing(request: GenerationRequest) -> str:
        text = answer(request.messages[-1].content)
        return text.replace('"score": 5', '"score": 1')

    judges = [LLMJudge(scripted(), name="one"), LLMJudge(ScriptedBackend(disagreeing), name="two")]
    table = evaluate_answers(rows()[:20], judges, ["answer_relevance", "faithfulness"])
    for metric in ("answer_relevance", "faithfulness"):
        for column in (
            "one.score",
            "two.score",
            "panel.score",
            "panel.score_median",
            "panel.valid",
            "panel.status",
        ):
            assert f"{metric}.{column}" in table.column_names
    one, two = (
        table["answer_relevance.one.score"].to_pylist(),
        table["answer_relevance.two.score"].to_pylist(),
    )
    assert table["answer_relevance.panel.score"].to_pylist() == [
        (x + y) / 2 for x, y in zip(one, two, strict=True)
    ]
    assert table["faithfulness.panel.valid"].to_pylist() == [2] * 20
    agreement = json.loads(table.schema.metadata[METADATA_KEY])["agreement"]
    assert agreement["faithfulness"]["krippendorff_alpha"] == 1.0  # both judges agree on every claim
    assert agreement["answer_relevance"]["krippendorff_alpha"] < 1.0
    assert agreement["answer_relevance"]["quorum"] == 2


def test_a_panel_row_below_the_quorum_is_inconclusive() -> None:
    broken = LLMJudge(ScriptedBackend(["not json"], cycle=True), name="broken")
    table = evaluate_answers(rows()[:5], [LLMJudge(scripted(), name="good"), broken], ["answer_relevance"])
    assert table["answer_relevance.panel.status"].to_pylist() == ["inconclusive"] * 5
    assert table["answer_relevance.broken.status"].to_pylist() == ["parse_error"] * 5
    lenient = evaluate_answers(
        rows()[:5], [LLMJudge(scripted(), name="good"), broken], ["answer_relevance"], quorum=1
    )
    assert (
        lenient["answer_relevance.panel.score"].to_pylist()
        == lenient["answer_relevance.good.score"].to_pylist()
    )


def test_metric_parameters_and_preference() -> None:
    backend = ScriptedBackend(
        lambda r: (
            json.dumps({"reason": "r", "score": 10})
            if "Task: rate" in r.messages[-1].content
            else json.dumps({"explanation": "e", "judgment": "A"})
        )
    )
    data = [{"question": "q", "answer": "a", "response_a": "x", "response_b": "y"}]
    table = evaluate_answers(
        data, LLMJudge(backend), [("criteria_score", {"criteria": "is short", "scale": 10}), "preference"]
    )
    assert table["criteria_score.score"].to_pylist() == [1.0] and table[
        "criteria_score.scale"
    ].to_pylist() == [10]
    assert table["preference.winner"].to_pylist() == ["tie"]


@pytest.mark.parametrize(
    ("judges", "metrics", "message"),
    [
        ("one", ["bleu"], "unknown metric 'bleu'"),
        ("one", ["faithfulness", "faithfulness"], "metric faithfulness is given twice"),
        ("two", ["faithfulness"], "two judges are named same"),
        ("none", ["faithfulness"], "no judge given"),
        ("one", [("faithfulness", {"scale": 3})], "scale belongs to metric criteria_score"),
        ("one", [("faithfulness", {"colour": 3})], "unknown faithfulness parameter 'colour'"),
    ],
)
def test_bad_evaluate_arguments_raise(judges: str, metrics: list[Any], message: str) -> None:
    panel = {"one": [LLMJudge(scripted())], "two": [LLMJudge(scripted(), name="same")] * 2, "none": []}[
        judges
    ]
    with pytest.raises(ValueError, match=re.escape(message)):
        evaluate_answers(rows()[:2], panel, metrics)


# ------------------------------------------------------------------------------------- command line
def served(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    text = answer(body["messages"][-1]["content"])
    regex = body["structured_outputs"]["regex"]
    assert re.fullmatch(regex, text), (regex, text)
    return 200, completion(text)


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    with chat_server(served) as srv:
        yield srv


def test_judge_dataset_with_a_builtin_rag_config(server: ChatServer, tmp_path: Path) -> None:
    out = tmp_path / "faith.parquet"
    result = subprocess.run(
        [
            sys.executable, "-m", "jurist", "judge", "dataset", "-c", "rag/faithfulness", "-i", str(DATA),
            "-o", str(out), "--limit", "50", "--inference_config.engine", "REMOTE_VLLM",
            "--inference_config.model.model_name", "fake",
            "--inference_config.remote_params.api_url", server.url,
            "--rag_judge_params.max_statements", "4",
        ],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out)
    assert table.num_rows == 50
    for column in (
        "score",
        "n_claims",
        "n_supported",
        "undefined",
        "status",
        "raw",
        "prompt_hash",
        "schema_hash",
    ):
        assert f"faithfulness.{column}" in table.column_names
    assert set(table["faithfulness.status"].to_pylist()) == {"ok"}
    assert max(n for n in table["faithfulness.n_claims"].to_pylist() if n is not None) <= 4
    # 40 extractions (none for the 10 rows without contexts), 30 verifications (none for "I don't know.")
    assert len(server.bodies) == 40 + 30


def test_jurist_list_shows_the_rag_judges() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "list"], capture_output=True, text=True, timeout=120
    )
    for metric in METRICS:
        assert f"rag/{metric}" in result.stdout


# ---------------------------------------------------------------------------------- callable backend
def request(*messages: tuple[str, str]) -> GenerationRequest:
    return GenerationRequest(tuple(Message(role, text) for role, text in messages), max_tokens=8)  # type: ignore[arg-type]


def test_callable_backend_splits_system_and_prompt_and_never_raises() -> None:
    seen: list[tuple[str, str]] = []

    def fn(prompt: str, system: str) -> Any:
        seen.append((prompt, system))
        if prompt == "boom":
            raise RuntimeError("down")
        return 7 if prompt == "number" else f"echo {prompt}"

    backend = CallableBackend(fn)
    out = backend.generate(
        [request(("system", "S"), ("user", "hi")), request(("user", "boom")), request(("user", "number"))]
    )
    assert [c.text for c in out] == ["echo hi", "", ""]
    assert [c.finish_reason for c in out] == ["stop", "error", "error"]
    assert out[1].error == "RuntimeError: down" and "returned a int, not text" in (out[2].error or "")
    assert seen[0] == ("hi", "S") and seen[1] == ("boom", "")
    assert backend.constraint_kinds == () and backend.model_id.startswith("callable:")


def test_callable_backend_threads_keep_request_order() -> None:
    threads: set[int] = set()

    def fn(prompt: str, system: str) -> str:
        threads.add(threading.get_ident())
        return prompt.upper()

    backend = CallableBackend(fn, max_workers=4)
    out = backend.generate([request(("user", f"p{i}")) for i in range(40)])
    assert [c.text for c in out] == [f"P{i}" for i in range(40)]
