"""The real vLLM engine (CPU build) on a random-weight tiny model built in the test session.

A random model is the adversarial case for guided decoding: left to itself it writes noise forever, so
every well-formed row here is the constraint's doing. Each case runs at least 200 rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installed import have
from jurist import Engine, InferenceConfig, Message
from jurist.records import Constraint, GenerationRequest

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not have("vllm"), reason="vLLM not installed"),
]

ROWS = [
    {"question": f"Question {i}: what is {i} plus {i}?", "answer": f"It is {2 * i}." + " Really." * (i % 7)}
    for i in range(200)
]

SIMPLE = {
    "name": "simple",
    "judge_params": {
        "system_instruction": "You judge whether an answer is correct.",
        "prompt_template": "Question: {question}\nAnswer: {answer}",
        "include_explanation": True,
        "max_explanation_chars": 48,
    },
}

RUBRIC = {
    "name": "rubric",
    "judge_params": {
        "system_instruction": "You grade answers.",
        "prompt_template": "Question: {question}\nAnswer: {answer}",
        "max_explanation_chars": 48,
    },
    "rubric_judge_params": {
        "criteria": [
            {"id": "correct", "description": "The answer is correct.", "weight": 2.0},
            {
                "id": "style",
                "description": "How well is it written?",
                "judgment_type": "ENUM",
                "judgment_scores": {"good": 1.0, "fair": 0.5, "poor": 0.0, "not_applicable": None},
            },
            {
                "id": "rating",
                "description": "Rate it from 1 to 5.",
                "judgment_type": "INT",
                "judgment_scores": {"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0},
                "include_explanation": False,
            },
            {"id": "confidence", "description": "Your confidence, 0 to 1.", "judgment_type": "FLOAT"},
            {"id": "summary", "description": "Summarize the answer.", "judgment_type": "TEXT"},
        ]
    },
}


def with_params(config: dict[str, Any], **judge_params: Any) -> dict[str, Any]:
    return {**config, "judge_params": {**config["judge_params"], **judge_params}}


def with_generation(config: dict[str, Any], **generation: Any) -> dict[str, Any]:
    return {**config, "inference_config": {"generation": generation}}


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> Iterator[Any]:
    from jurist.backends.vllm.backend import VLLMBackend

    made = VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": str(tiny_model_dir), "model_max_length": 2048},
            }
        )
    )
    yield made
    made.close()


def assert_well_formed(table: Any, engine: Engine) -> None:
    judge = engine.judges[0]
    name = judge.name
    statuses = table[f"{name}.status"].to_pylist()
    assert statuses == ["ok"] * table.num_rows, {s: statuses.count(s) for s in set(statuses)}
    for field in judge.spec.fields:
        values = table[f"{name}.{field.name}"].to_pylist()
        assert None not in values, field.name
    pattern = re.compile(judge.spec.regex() or "", re.DOTALL)
    for raw in table[f"{name}.raw"].to_pylist():
        assert pattern.fullmatch(raw), raw[:200]
    tokens = table[f"{name}.completion_tokens"].to_pylist()
    assert max(tokens) <= judge.max_tokens


@pytest.mark.parametrize("fmt", ["JSON", "XML"])
@pytest.mark.parametrize("config", [SIMPLE, RUBRIC], ids=["simple", "rubric"])
def test_every_row_parses_with_every_field(backend: Any, config: dict[str, Any], fmt: str) -> None:
    engine = Engine(with_params(config, response_format=fmt), backend)
    table = engine.run(ROWS)
    assert table.num_rows == len(ROWS)
    assert_well_formed(table, engine)
    if config is RUBRIC:
        name = "rubric"
        scores = [s for s in table[f"{name}.score"].to_pylist() if s is not None]
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert set(table[f"{name}.rating"].to_pylist()) <= {1, 2, 3, 4, 5}


def test_sampling_is_well_formed(backend: Any) -> None:
    config = with_generation(RUBRIC, temperature=1.0, seed=7)
    first = Engine(config, backend).run(ROWS)
    assert_well_formed(first, Engine(config, backend))
    assert len(set(first["rubric.raw"].to_pylist())) > 1
    # on CPU the engine samples with its own seed: vLLM's CPU sampler crashes on per-request seeds
    params = backend.sampling_params(
        Engine(config, backend)
        .judges[0]
        .generation_request(Engine(config, backend).judges[0].render(ROWS[0])),
        10,
    )
    assert params.seed is None and params.temperature == 1.0


def test_default_explanation_bound_never_truncates(backend: Any) -> None:
    config = with_params(SIMPLE, max_explanation_chars=400)
    engine = Engine(config, backend)
    table = engine.run(ROWS[:24])
    assert_well_formed(table, engine)


def test_over_long_prompt_is_a_row_status_not_a_crash(backend: Any) -> None:
    rows = [*ROWS[:5], {"question": "word " * 5000, "answer": "x"}, *ROWS[5:10]]
    table = Engine(SIMPLE, backend).run(rows)
    statuses = table["simple.status"].to_pylist()
    assert statuses[5] == "too_long"
    assert statuses[:5] + statuses[6:] == ["ok"] * 10
    assert "allows 2048" in table["simple.error"][5].as_py()


def test_too_few_tokens_is_truncated_never_a_verdict(backend: Any) -> None:
    table = Engine(with_generation(SIMPLE, max_new_tokens=4), backend).run(ROWS[:8])
    assert table["simple.status"].to_pylist() == ["truncated"] * 8
    assert table["simple.judgment"].to_pylist() == [None] * 8


def test_the_head_keeps_the_models_dtype_unless_told(backend: Any) -> None:
    # built without a judge that reads labels (head_dtype auto): the head computes in the model's dtype,
    # which with no torch_dtype_str set is this machine's choice (bfloat16 only with bf16 instructions)
    from jurist.backends.local.dtype import choose_dtype

    chosen = choose_dtype(None, on_cpu=True)
    described = backend.describe()
    assert described["head_dtype"] == described["dtype"] == chosen.dtype
    assert described["dtype_reason"] == chosen.reason


def test_results_come_back_in_request_order(backend: Any) -> None:
    # rows of very different lengths: each row's prompt token count must be its own
    rows = [{"question": "q " * n, "answer": "a"} for n in (300, 2, 150, 40, 500, 7)]
    engine = Engine(SIMPLE, backend)
    table = engine.run(rows)
    judge = engine.judges[0]
    expected = [len(ids) for ids in backend.tokenize([judge.request(judge.render(r)) for r in rows])]
    assert table["simple.prompt_tokens"].to_pylist() == expected


def test_shared_prefix_is_served_from_the_cache(backend: Any) -> None:
    system = Message("system", "Shared judge instructions. " * 40)
    requests = [
        GenerationRequest(
            messages=(system, Message("user", f"row {i}")),
            max_tokens=8,
            constraint=Constraint(regex="(?:Yes|No)"),
        )
        for i in range(16)
    ]
    completions = backend.generate(requests)
    assert all(c.finish_reason == "stop" and c.text in ("Yes", "No") for c in completions)
    assert all((c.cached_tokens or 0) > 0 for c in completions[1:])
    stats = backend.prefix_cache_stats()
    assert stats["hits"] > 0 and stats["queries"] >= stats["hits"]


def test_rows_that_share_a_request_reuse_its_cached_blocks(backend: Any) -> None:
    """Several responses to one prompt: the later rows read the shared part from the prefix cache, at the
    granularity of one KV block (32 tokens on CPU rather than vLLM's 128)."""
    from jurist.backends.local.placement import vllm_on_cpu as _on_cpu
    from jurist.backends.vllm.params import CPU_BLOCK_SIZE

    block = backend.llm.llm_engine.vllm_config.cache_config.block_size
    if _on_cpu():
        assert block == CPU_BLOCK_SIZE
    question = "Question: list the prime numbers below fifty and explain each step. " * 3

    def request(answer: str) -> GenerationRequest:
        return GenerationRequest(
            messages=(Message("user", f"{question}\nAnswer: {answer}"),),
            max_tokens=4,
            constraint=Constraint(regex="(?:Yes|No)"),
        )

    first, second = request("two, three, five"), request("seven, eleven")
    ids = backend.tokenize([first, second])
    shared = next(i for i, (a, b) in enumerate(zip(*ids, strict=False)) if a != b)
    assert 2 * block <= shared < 128  # vLLM's CPU default block would cache none of it
    backend.reset_prefix_cache()
    backend.generate([first])
    [completion] = backend.generate([second])
    assert completion.cached_tokens == shared // block * block


def test_panel_on_one_engine_in_one_call(backend: Any) -> None:
    table = Engine([SIMPLE, with_params(RUBRIC, response_format="XML")], backend).run(ROWS[:30])
    assert table["simple.status"].to_pylist() == ["ok"] * 30
    assert table["rubric.status"].to_pylist() == ["ok"] * 30


def test_unconstrained_decoding_still_gives_one_row_per_input(backend: Any) -> None:
    config = with_generation(with_params(SIMPLE, use_guided_decoding=False), max_new_tokens=16)
    table = Engine(config, backend).run(ROWS[:10])
    assert table.num_rows == 10
    assert set(table["simple.status"].to_pylist()) <= {"ok", "parse_error", "truncated"}


# ---------------------------------------------------------------------------- label probabilities

LOGPROB_JUDGES = {
    "bool": {"judgment_type": "BOOL"},
    "enum_shared_first_tokens": {
        "judgment_type": "ENUM",
        "judgment_scores": {"not_applicable": None, "not_sure": 0.5, "nothing_wrong": 1.0, "wrong": 0.0},
    },
    "int_scale": {
        "judgment_type": "INT",
        "judgment_scores": {"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0},
    },
}


@pytest.mark.parametrize("kind", list(LOGPROB_JUDGES))
@pytest.mark.parametrize("fmt", ["JSON", "XML"])
def test_logprob_scoring_gives_a_distribution_for_every_row(backend: Any, kind: str, fmt: str) -> None:
    params = {
        **LOGPROB_JUDGES[kind],
        "scoring": "LOGPROBS",
        "response_format": fmt,
        "include_explanation": False,
    }
    engine = Engine(with_params(SIMPLE, **params), backend)
    table = engine.run(ROWS)
    field = engine.judges[0].spec.judgment_fields[0]
    labels = list(field.labels or ())
    assert table["simple.status"].to_pylist() == ["ok"] * len(ROWS)
    scores = [s for s in (field.scores or {"Yes": 1.0, "No": 0.0}).values() if s is not None]
    for row in table.to_pylist():
        probs = [row[f"simple.judgment_p.{label}"] for label in labels]
        assert sum(probs) == pytest.approx(1.0, abs=1e-4)
        assert min(scores) - 1e-9 <= row["simple.judgment_expected"] <= max(scores) + 1e-9
        assert row["simple.score"] == row["simple.judgment_expected"]
        assert row["simple.completion_tokens"] == 0


def test_label_scores_equal_a_brute_force_sequence_probability(backend: Any) -> None:
    """Labels sharing first tokens: the trie's per-step next-token scores must equal each label's whole
    continuation log-probability, read here (as a reference only) from prompt log-probabilities."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    from jurist.records import LabelRequest

    labels = ("not_applicable", "not_sure", "nothing_wrong", "wrong")
    messages = (Message("system", "Judge."), Message("user", "Is 2 + 2 = 4?"))
    prefix = '{"judgment": "'
    scored = backend.score_labels([LabelRequest(messages, labels, prefix, '"')])[0]
    assert scored.logprobs is not None
    base_text = backend.chat_text(messages) + prefix
    full = {label: backend._encode(base_text + label) for label in labels}
    shared = min(len(ids) for ids in full.values())
    for position in range(shared):
        if len({ids[position] for ids in full.values()}) > 1:
            shared = position
            break
    reference = {}
    for label, ids in full.items():
        out = backend.llm.generate(
            [TokensPrompt(prompt_token_ids=ids)],
            SamplingParams(max_tokens=1, prompt_logprobs=0),
            use_tqdm=False,
        )[0]
        reference[label] = sum(out.prompt_logprobs[i][ids[i]].logprob for i in range(shared, len(ids)))
    for label in labels:
        assert scored.logprobs[label] == pytest.approx(reference[label], abs=2e-3)


def test_pairwise_logprob_scoring(backend: Any) -> None:
    config = {
        "name": "pair",
        "judge_params": {
            "prompt_template": "{question}\nA: {response_a}\nB: {response_b}",
            "scoring": "LOGPROBS",
        },
        "pairwise_judge_params": {},
    }
    rows = [
        {"question": r["question"], "response_a": r["answer"], "response_b": "no idea"} for r in ROWS[:50]
    ]
    table = Engine(config, backend).run(rows)
    assert table["pair.status"].to_pylist() == ["ok"] * 50
    for row in table.to_pylist():
        assert 0.0 <= row["pair.p_a"] <= 1.0
        assert row["pair.p_a"] == pytest.approx(
            (row["pair.ab_p_first"] + (1 - row["pair.ba_p_first"])) / 2, abs=0.5
        )


def test_label_probabilities_during_generation(backend: Any) -> None:
    config = with_params(RUBRIC, label_probabilities=True)
    engine = Engine(config, backend)
    table = engine.run(ROWS[:40])
    assert_well_formed(table, engine)
    for row in table.to_pylist():
        style = [row[f"rubric.style_p.{label}"] for label in ("good", "fair", "poor", "not_applicable")]
        if None not in style:
            assert sum(style) == pytest.approx(1.0, abs=1e-4)
    found = sum(row["rubric.correct_p.Yes"] is not None for row in table.to_pylist())
    assert found >= 30  # read off the top-20 alternatives; a row whose value token is not aligned has none
