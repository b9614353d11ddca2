"""The real vLLM engine on the embedded default model (SmolLM2-135M-Instruct) with the built-in judges.

SmolLM2 is a weak judge; what is tested is that its every answer is well-formed and typed: 40 LLMBar rows
(the first 20 instructions, each with each of its two outputs) per response format, for a simple and a
rubric judge; log-probability scoring on 100 rows. The adversarial case, a simple and a rubric judge
in JSON and XML on 200 rows each, runs on the random-weight tiny model (tests/backends/test_vllm_engine.py).

Generating on CPU bounds these tests: the simple judge in JSON runs in the default tier, and the other three
formats, the LLMBar protocol, label scores and sampling in the slow tier (``-m slow``, which CI runs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import Engine, InferenceConfig, load_judge_config

pytestmark = [
    pytest.mark.engine,
    pytest.mark.smollm2,
    pytest.mark.skipif(not have("vllm"), reason="vLLM not installed"),
]

LLMBAR = Path(__file__).resolve().parents[2] / "examples" / "llmbar" / "Natural.json"


def llmbar_rows(instructions: int = 100) -> list[dict[str, str]]:
    records = json.loads(LLMBAR.read_text(encoding="utf-8"))[:instructions]
    return [{"request": r["input"], "response": r[key]} for r in records for key in ("output_1", "output_2")]


@pytest.fixture(scope="module")
def backend(smollm2_dir: Path) -> Iterator[Any]:
    from jurist.backends.vllm.backend import VLLMBackend

    made = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": str(smollm2_dir), "model_max_length": 4096},
            }
        )
    )
    yield made
    made.close()


SIMPLE, RUBRIC = ("graded/instruction_following", 400), ("rubric/response_quality", 160)


@pytest.mark.parametrize(
    ("builtin", "explanation_chars", "fmt"),
    [
        pytest.param(*SIMPLE, "JSON", id="simple-JSON"),
        pytest.param(*SIMPLE, "XML", id="simple-XML", marks=pytest.mark.slow),
        pytest.param(*RUBRIC, "JSON", id="rubric-JSON", marks=pytest.mark.slow),
        pytest.param(*RUBRIC, "XML", id="rubric-XML", marks=pytest.mark.slow),
    ],
)
def test_builtin_judges_give_a_well_formed_row_for_every_input(
    backend: Any, builtin: str, explanation_chars: int, fmt: str
) -> None:
    rows = llmbar_rows(20)
    assert len(rows) == 40
    config = load_judge_config(
        builtin,
        {"judge_params.response_format": fmt, "judge_params.max_explanation_chars": explanation_chars},
    )
    engine = Engine(config, backend)
    table = engine.run(rows)
    judge = engine.judges[0]
    name = judge.name
    assert table.num_rows == 40
    statuses = table[f"{name}.status"].to_pylist()
    failures = [
        (s, e, r)
        for s, e, r in zip(
            statuses, table[f"{name}.error"].to_pylist(), table[f"{name}.raw"].to_pylist(), strict=True
        )
        if s != "ok"
    ]
    assert not failures, failures[:3]
    for field in judge.spec.fields:
        assert None not in table[f"{name}.{field.name}"].to_pylist(), field.name
    pattern = re.compile(judge.spec.regex() or "", re.DOTALL)
    for raw in table[f"{name}.raw"].to_pylist():
        assert pattern.fullmatch(raw)
        assert "Ġ" not in raw and "Ċ" not in raw  # the byte-level tokenizer decodes to real text
    scores = table[f"{name}.score"].to_pylist()
    assert all(s is None or 0.0 <= s <= 1.0 for s in scores)


@pytest.mark.slow
def test_llmbar_pairwise_protocol_end_to_end(backend: Any, tmp_path: Path) -> None:
    """`jurist judge` + `jurist agree` on the first 40 rows of LLMBar's Natural set, checked against a
    computation of our own from the output table (SmolLM2 is near chance; the point is that the harness is
    right)."""
    from jurist.analysis.human import agreement_report, as_results
    from jurist.io.writers import read_output
    from jurist.labels.source import LabelSource

    data = tmp_path / "natural.json"
    data.write_text(json.dumps(json.loads(LLMBAR.read_text(encoding="utf-8"))[:40]), encoding="utf-8")
    out = tmp_path / "natural.parquet"
    Engine(load_judge_config("pairwise/preference"), backend).run_file(data, out)
    table = read_output(out)
    assert table.num_rows == 40
    rows = table.to_pylist()
    assert all(r["preference.status"] == "ok" for r in rows)
    truth = ["a" if r["label"] == 1 else "b" for r in rows]
    ab = [{"A": "a", "B": "b"}[r["preference.ab_judgment"]] for r in rows]
    ba = [{"A": "b", "B": "a"}[r["preference.ba_judgment"]] for r in rows]
    winners = [x if x == y else "tie" for x, y in zip(ab, ba, strict=True)]
    assert [r["preference.winner"] for r in rows] == winners
    accuracy = sum(w == t for w, t in zip(winners, truth, strict=True)) / 40
    consistency = sum(x == y for x, y in zip(ab, ba, strict=True)) / 40
    p_o = accuracy
    categories = {"a", "b", "tie"}
    p_e = sum((winners.count(c) / 40) * (truth.count(c) / 40) for c in categories)
    kappa = (p_o - p_e) / (1 - p_e)
    labels = LabelSource(column="label").for_results(as_results(table)).labels
    report = agreement_report(table, labels)["preference"]
    assert report["accuracy"]["estimate"] == pytest.approx(accuracy)
    assert report["order_consistency"] == pytest.approx(consistency)
    assert report["cohen_kappa"] == pytest.approx(kappa)
    assert report["accuracy_by_order"]["ab"] == pytest.approx(
        sum(x == t for x, t in zip(ab, truth, strict=True)) / 40
    )


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["JSON", "XML"])
def test_logprob_scoring_on_the_default_model(backend: Any, fmt: str) -> None:
    config = load_judge_config(
        "graded/truthfulness", {"judge_params.scoring": "LOGPROBS", "judge_params.response_format": fmt}
    )
    table = Engine(config, backend).run(llmbar_rows(25))
    assert table["truthfulness.status"].to_pylist() == ["ok"] * 50
    for row in table.to_pylist():
        probs = [row[f"truthfulness.judgment_p.{label}"] for label in ("Yes", "Unsure", "No")]
        assert sum(probs) == pytest.approx(1.0, abs=1e-4)
        assert 0.0 <= row["truthfulness.judgment_expected"] <= 1.0
        assert row["truthfulness.judgment"] == max(
            ("Yes", "Unsure", "No"), key=lambda label: row[f"truthfulness.judgment_p.{label}"]
        )


@pytest.mark.slow
def test_an_oumi_config_at_temperature_one_gives_every_row(
    backend: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Per-request seeds used to crash vLLM's CPU sampler once long prompts were prefilled in pieces."""
    config = load_judge_config(
        "graded/instruction_following",
        {"inference_config.generation.temperature": 1.0, "inference_config.generation.seed": 42},
    )
    engine = Engine(config, backend, chunk_size=60)
    table = engine.run(llmbar_rows()[:120])
    assert table["instruction_following.status"].to_pylist() == ["ok"] * 120
    assert engine.tally.requests == 120
    assert "failed" not in caplog.text  # no stream or batch failed and was split to find a culprit
