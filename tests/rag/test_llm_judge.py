"""``LLMJudge`` with a scripted ``fn(prompt, system)``: every method's formula, its details, its undefined
cases and ``on_error``, as scikit-plots documents them."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pytest
from rag_script import Model, statements_json, verdicts_json

from jurist import InferenceConfig, JudgementError, JudgeResult, LLMJudge, ScriptedBackend
from jurist.judges.rag.schemas import Statements, Verdicts
from jurist.records import Completion, GenerationRequest

QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France. It has 50 million inhabitants."
REFERENCE = "Paris is the capital of France. Paris lies on the Seine."
CONTEXTS = [
    "Paris is the capital and largest city of France.",
    "Lyon is a city in France.",
    "Paris is on the Seine.",
]


def run(model: Model, method: str, *args: Any, on_error: str = "raise", **kwargs: Any) -> JudgeResult:
    result: JudgeResult = getattr(LLMJudge(model, on_error=on_error), method)(*args, **kwargs)  # type: ignore[arg-type]
    return result


# ---------------------------------------------------------------------------------- answer_relevance
def test_the_seeds_own_example_rating_4_is_075() -> None:
    judge = LLMJudge(lambda prompt, system: '{"score": 4, "reason": "direct"}')
    result = judge.answer_relevance("Capital of France?", "Paris.")
    assert result.score == 0.75
    assert result.details == {"rating": 4, "reason": "direct"}
    assert result.error is None and result.reason is None and result.status == "ok"


@pytest.mark.parametrize(("rating", "score"), [(1, 0.0), (2, 0.25), (3, 0.5), (4, 0.75), (5, 1.0)])
def test_answer_relevance_is_rating_minus_one_over_four(rating: int, score: float) -> None:
    model = Model(rating=rating)
    result = run(model, "answer_relevance", QUESTION, ANSWER)
    assert result.score == score
    prompt, system = model.calls[0]
    assert QUESTION in prompt and ANSWER in prompt and "from 1 to 5" in prompt
    assert "question-answering assistant" in system and QUESTION not in system


# -------------------------------------------------------------------------------- answer_correctness
def test_answer_correctness_is_statement_f1_with_tp_fp_fn() -> None:
    model = Model(
        statements={"answer": ["a1", "a2", "a3"], "reference": ["r1", "r2"]},
        verdicts={"answer_vs_reference": ["Yes", "Yes", "No"], "reference_vs_answer": ["Yes", "No"]},
    )
    result = run(model, "answer_correctness", QUESTION, ANSWER, REFERENCE)
    assert result.details == {"tp": 2, "fp": 1, "fn": 1}
    assert result.score == pytest.approx(2 / (2 + (1 + 1) / 2))
    assert len(model.calls) == 4  # two extractions, then two verifications
    assert "1. a1\n2. a2\n3. a3" in model.calls[2][0] and "1. r1\n2. r2" in model.calls[3][0]


def test_answer_correctness_is_undefined_when_tp_fp_fn_are_all_zero() -> None:
    model = Model(statements={"answer": [], "reference": []})
    result = run(model, "answer_correctness", QUESTION, "Hmm.", "")
    assert math.isnan(result.score) and not result.defined
    assert result.details == {"tp": 0, "fp": 0, "fn": 0}
    assert "tp = fp = fn = 0" in (result.reason or "")
    assert result.error is None and len(model.calls) == 2  # nothing to verify


def test_answer_correctness_with_an_empty_side_needs_no_verification() -> None:
    model = Model(statements={"answer": [], "reference": ["r1", "r2"]})
    result = run(model, "answer_correctness", QUESTION, "I don't know.", REFERENCE)
    assert (result.score, result.details) == (0.0, {"tp": 0, "fp": 0, "fn": 2})
    assert len(model.calls) == 2


# --------------------------------------------------------------------------------- context_precision
@pytest.mark.parametrize(
    ("labels", "score"),
    [
        (["Yes", "No", "Yes"], (1 / 1 + 2 / 3) / 2),
        (["No", "Yes", "Yes"], (1 / 2 + 2 / 3) / 2),
        (["Yes", "Yes", "Yes"], 1.0),
        (["No", "No", "Yes"], 1 / 3),
        (["No", "No", "No"], 0.0),  # nothing relevant: 0.0, not undefined
    ],
)
def test_context_precision_is_average_precision_over_relevant_ranks(labels: list[str], score: float) -> None:
    model = Model(verdicts={"precision": labels})
    result = run(model, "context_precision", QUESTION, CONTEXTS)
    assert result.score == pytest.approx(score)
    relevant = [label == "Yes" for label in labels]
    assert result.details == {"relevant": relevant, "n_relevant": sum(relevant)}
    assert result.defined and result.reason is None


def test_context_precision_numbers_the_contexts_and_shows_the_reference() -> None:
    model = Model(verdicts={"precision": ["Yes", "No", "No"]})
    run(model, "context_precision", QUESTION, CONTEXTS, reference=REFERENCE)
    prompt = model.calls[0][0]
    assert "[1] Paris is the capital and largest city of France.\n\n[2] Lyon" in prompt
    assert REFERENCE in prompt and "(1 to 3)" in prompt and "and the reference answer" in prompt
    without = Model(verdicts={"precision": ["Yes", "No", "No"]})
    run(without, "context_precision", QUESTION, CONTEXTS)
    assert "(none given)" in without.calls[0][0] and "and the reference answer" not in without.calls[0][0]


def test_context_precision_without_contexts_is_undefined_and_makes_no_call() -> None:
    model = Model()
    result = run(model, "context_precision", QUESTION, [])
    assert math.isnan(result.score) and "no contexts" in (result.reason or "")
    assert model.calls == [] and result.error is None


INVALID_INDEX_VERDICTS = {
    "missing": (verdicts_json(["Yes", "No"], [1, 2]), "no entry for index 3"),
    "repeated": (verdicts_json(["Yes", "No", "Yes"], [1, 2, 2]), "index 2 appears more than once"),
    "out of range": (verdicts_json(["Yes", "No", "Yes", "No"], [1, 2, 3, 4]), "index 4 is out of range 1-3"),
    "zero": (verdicts_json(["Yes", "No", "Yes"], [0, 1, 2]), "index 0 is out of range 1-3"),
}


@pytest.mark.parametrize("case", list(INVALID_INDEX_VERDICTS))
def test_an_invalid_index_verdict_raises_under_on_error_raise(case: str) -> None:
    text, message = INVALID_INDEX_VERDICTS[case]
    with pytest.raises(JudgementError) as caught:
        run(Model(verdicts={"precision": text}), "context_precision", QUESTION, CONTEXTS)
    assert "invalid verdict" in str(caught.value) and message in str(caught.value)
    assert caught.value.result.status == "parse_error"


@pytest.mark.parametrize("case", list(INVALID_INDEX_VERDICTS))
def test_an_invalid_index_verdict_is_recorded_under_on_error_record(case: str) -> None:
    text, message = INVALID_INDEX_VERDICTS[case]
    result = run(
        Model(verdicts={"precision": text}), "context_precision", QUESTION, CONTEXTS, on_error="record"
    )
    assert math.isnan(result.score)
    assert result.error is not None and "invalid verdict" in result.error and message in result.error
    assert result.status == "parse_error" and result.reason is None
    assert result.details == {"relevant": None, "n_relevant": None}
    assert json.loads(result.raw or "{}")["verdicts"] == text


def test_index_verdicts_may_come_in_any_order_when_each_index_is_there_once() -> None:
    text = verdicts_json(["No", "Yes", "Yes"], [3, 1, 2])
    result = run(Model(verdicts={"precision": text}), "context_precision", QUESTION, CONTEXTS)
    assert result.details["relevant"] == [True, True, False]


# ------------------------------------------------------------------------------------ context_recall
def test_context_recall_is_attributed_over_statements() -> None:
    model = Model(
        statements={"reference": ["r1", "r2", "r3", "r4"]}, verdicts={"recall": ["Yes", "Yes", "No", "Yes"]}
    )
    result = run(model, "context_recall", QUESTION, CONTEXTS, REFERENCE)
    assert result.score == 0.75
    assert result.details == {"n_statements": 4, "n_attributed": 3}
    assert "Statements of the reference answer:\n1. r1" in model.calls[1][0]


def test_context_recall_is_undefined_when_the_reference_yields_no_statement() -> None:
    model = Model(statements={"reference": []})
    result = run(model, "context_recall", QUESTION, CONTEXTS, "Well.")
    assert math.isnan(result.score) and result.reason == "the reference yields no statement"
    assert result.details == {"n_statements": 0, "n_attributed": 0} and len(model.calls) == 1


def test_context_recall_without_contexts_is_undefined_and_makes_no_call() -> None:
    model = Model()
    result = run(model, "context_recall", QUESTION, [], REFERENCE)
    assert math.isnan(result.score) and "no contexts" in (result.reason or "") and model.calls == []


# -------------------------------------------------------------------------------------- faithfulness
def test_faithfulness_is_supported_over_claims() -> None:
    model = Model(
        statements={"answer": ["Paris is the capital.", "It has 50M people."]},
        verdicts={"faithfulness": ["Yes", "No"]},
    )
    result = run(model, "faithfulness", QUESTION, ANSWER, CONTEXTS)
    assert result.score == 0.5
    assert result.details == {"n_claims": 2, "n_supported": 1}
    extraction, verification = (prompt for prompt, _ in model.calls)
    assert CONTEXTS[0] in extraction and ANSWER in extraction
    # the case is repeated word for word before each step's task (a shared prefix)
    case = extraction.split("\n\nTask:")[0]
    assert verification.startswith(case)


def test_faithfulness_without_claims_is_nan_with_a_reason() -> None:
    model = Model(statements={"answer": []})
    result = run(model, "faithfulness", QUESTION, "I don't know.", CONTEXTS)
    assert math.isnan(result.score) and result.reason == "the answer makes no claim"
    assert result.details == {"n_claims": 0, "n_supported": 0} and len(model.calls) == 1


def test_faithfulness_without_contexts_is_undefined_and_makes_no_call() -> None:
    model = Model()
    result = run(model, "faithfulness", QUESTION, ANSWER, [])
    assert math.isnan(result.score) and "no contexts" in (result.reason or "") and model.calls == []


# ------------------------------------------------------------------------------------ criteria_score
@pytest.mark.parametrize(
    ("scale", "rating", "score"), [(5, 5, 1.0), (5, 1, 0.0), (10, 7, 6 / 9), (2, 2, 1.0)]
)
def test_criteria_score_is_rating_minus_one_over_scale_minus_one(
    scale: int, rating: int, score: float
) -> None:
    model = Model(rating=rating)
    result = run(model, "criteria_score", QUESTION, ANSWER, "cites a source for every number", scale=scale)
    assert result.score == pytest.approx(score)
    assert result.details == {"rating": rating, "scale": scale, "reason": "ok"}
    prompt = model.calls[0][0]
    assert (
        "Criteria: cites a source for every number" in prompt and f"from 1 (not at all) to {scale}" in prompt
    )


def test_criteria_score_shows_optional_reference_and_contexts_only_when_given() -> None:
    model = Model(rating=3)
    run(model, "criteria_score", QUESTION, ANSWER, "is short", reference=REFERENCE, contexts=CONTEXTS)
    assert REFERENCE in model.calls[0][0] and "[2] Lyon" in model.calls[0][0]
    bare = Model(rating=3)
    run(bare, "criteria_score", QUESTION, ANSWER, "is short")
    assert bare.calls[0][0].count("(none given)") == 2


@pytest.mark.parametrize("rating", [0, 6, "five"])
def test_a_rating_outside_the_scale_is_an_invalid_verdict(rating: Any) -> None:
    text = json.dumps({"reason": "x", "score": rating})
    with pytest.raises(JudgementError, match="score"):
        run(Model(rating=text), "criteria_score", QUESTION, ANSWER, "is short")
    recorded = run(Model(rating=text), "criteria_score", QUESTION, ANSWER, "is short", on_error="record")
    assert math.isnan(recorded.score) and recorded.status == "parse_error"


# -------------------------------------------------------------------------------------- preference
def _picks_good(prompt: str, system: str) -> str:
    first = prompt.split("[Response A]\n")[1].split("\n")[0]
    return json.dumps({"explanation": "compared", "judgment": "A" if first.startswith("GOOD") else "B"})


def test_preference_asks_both_orders_and_names_the_winner() -> None:
    result = LLMJudge(_picks_good).preference(QUESTION, "GOOD: Paris.", "BAD: Lyon.")
    assert (result.score, result.details) == (1.0, {"winner": "a", "position_consistent": True})
    other = LLMJudge(_picks_good).preference(QUESTION, "BAD: Lyon.", "GOOD: Paris.")
    assert (other.score, other.details["winner"]) == (0.0, "b")


def test_a_judge_that_always_picks_the_first_position_gives_an_inconsistent_tie() -> None:
    judge = LLMJudge(lambda prompt, system: json.dumps({"explanation": "first", "judgment": "A"}))
    result = judge.preference(QUESTION, "Paris.", "Lyon.")
    assert (result.score, result.details) == (0.5, {"winner": "tie", "position_consistent": False})


def test_preference_shows_the_reference_when_given() -> None:
    prompts: list[str] = []

    def fn(prompt: str, system: str) -> str:
        prompts.append(prompt)
        return json.dumps({"explanation": "x", "judgment": "A"})

    LLMJudge(fn).preference(QUESTION, "Paris.", "Lyon.", reference=REFERENCE)
    assert len(prompts) == 2 and all(REFERENCE in p for p in prompts)


# ------------------------------------------------------------------------------------------ identity
def test_identity_names_the_model_the_prompt_version_and_a_stable_hash() -> None:
    first = LLMJudge(Model()).identity()
    assert set(first) == {"model", "prompt_version", "prompt_hash"}
    assert first["prompt_version"] == "jurist-rag-1" and len(first["prompt_hash"]) == 16
    assert LLMJudge(Model(), on_error="record").identity()["prompt_hash"] == first["prompt_hash"]
    named = LLMJudge(ScriptedBackend(["x"], model_id="org/judge-7b")).identity()
    assert named["model"] == "org/judge-7b" and named["prompt_hash"] == first["prompt_hash"]


def test_a_model_name_or_inference_config_loads_nothing_until_a_call_needs_it() -> None:
    judge = LLMJudge("some-org/some-model")
    assert judge.identity()["model"] == "some-org/some-model" and judge.name == "some-model"
    config = InferenceConfig.model_validate(
        {"model": {"model_name": "m"}, "generation": {"temperature": 0.5}}
    )
    with LLMJudge(config) as from_config:
        compiled = from_config.judge_for("faithfulness")
        assert compiled.config.inference_config.generation.temperature == 0.5
        assert getattr(from_config.backend, "loaded", "absent") is None


# -------------------------------------------------------------------------------------- on_error
def _raises(prompt: str, system: str) -> str:
    raise ConnectionError("provider unreachable")


def test_a_provider_error_raises_or_is_recorded() -> None:
    with pytest.raises(JudgementError, match="provider unreachable") as caught:
        LLMJudge(_raises).faithfulness(QUESTION, ANSWER, CONTEXTS)
    assert caught.value.result.status == "backend_error"
    recorded = LLMJudge(_raises, on_error="record").faithfulness(QUESTION, ANSWER, CONTEXTS)
    assert math.isnan(recorded.score) and "ConnectionError: provider unreachable" in (recorded.error or "")
    assert recorded.status == "backend_error" and not recorded.ok


def test_a_cut_off_completion_raises_or_is_recorded() -> None:
    def cut(prompt: str, system: str) -> Completion:
        return Completion('{"statements": ["Paris is', "length")

    with pytest.raises(JudgementError, match="truncated"):
        LLMJudge(cut).faithfulness(QUESTION, ANSWER, CONTEXTS)
    recorded = LLMJudge(cut, on_error="record").faithfulness(QUESTION, ANSWER, CONTEXTS)
    assert recorded.status == "truncated" and "step claims" in (recorded.error or "")


def test_an_answer_that_is_not_json_is_a_failed_judgement() -> None:
    recorded = LLMJudge(lambda p, s: "Four out of five.", on_error="record").answer_relevance(
        QUESTION, ANSWER
    )
    assert recorded.status == "parse_error" and "no JSON object" in (recorded.error or "")


def test_a_failure_in_the_second_step_names_that_step() -> None:
    model = Model(statements={"answer": ["c1"]}, verdicts={"faithfulness": "not json"})
    recorded = run(model, "faithfulness", QUESTION, ANSWER, CONTEXTS, on_error="record")
    assert recorded.error == "parse_error: step verdicts: no JSON object in the answer"
    assert set(json.loads(recorded.raw or "{}")) == {"claims", "verdicts"}


# ------------------------------------------------------------------------------ invalid arguments
@pytest.mark.parametrize("on_error", ["raise", "record"])
@pytest.mark.parametrize(
    ("method", "args", "kwargs", "error"),
    [
        ("answer_relevance", (3, ANSWER), {}, TypeError),
        ("faithfulness", (QUESTION, ANSWER, None), {}, TypeError),
        ("faithfulness", (QUESTION, ANSWER, [1, 2]), {}, TypeError),
        ("context_recall", (QUESTION, {"a": "b"}, REFERENCE), {}, TypeError),
        ("answer_correctness", (QUESTION, ANSWER, None), {}, TypeError),
        ("criteria_score", (QUESTION, ANSWER, "is short"), {"scale": 1}, ValueError),
        ("criteria_score", (QUESTION, ANSWER, "is short"), {"scale": True}, ValueError),
        ("criteria_score", (QUESTION, ANSWER, "is short"), {"scale": 4.0}, ValueError),
        ("criteria_score", (QUESTION, ANSWER, "  "), {}, ValueError),
        ("context_precision", (QUESTION, ["c"] * 17), {}, ValueError),
        ("preference", (QUESTION, "a", None), {}, TypeError),
    ],
)
def test_invalid_arguments_always_raise(
    on_error: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception]
) -> None:
    model = Model()
    with pytest.raises(error):
        run(model, method, *args, on_error=on_error, **kwargs)
    assert model.calls == []


def test_invalid_constructor_arguments_raise() -> None:
    with pytest.raises(ValueError, match="on_error"):
        LLMJudge(Model(), on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="llm must be"):
        LLMJudge(42)


@dataclass
class Document:
    page_content: str


def test_contexts_may_be_documents_mappings_or_one_string() -> None:
    model = Model(statements={"answer": ["c"]}, verdicts={"faithfulness": ["Yes"]})
    judge = LLMJudge(model)
    assert judge.faithfulness(QUESTION, ANSWER, [Document("doc one"), {"text": "doc two"}]).score == 1.0
    assert "[1] doc one\n\n[2] doc two" in model.calls[0][0]
    assert judge.faithfulness(QUESTION, ANSWER, "a single context").score == 1.0
    assert "[1] a single context\n\n[Question]" in model.calls[2][0]


# ------------------------------------------------------------------------------ constrained backends
def test_a_guided_backend_gets_each_steps_bounded_regex() -> None:
    import re

    answers = iter([statements_json(["Paris is the capital."]), verdicts_json(["Yes"])])
    sent: list[GenerationRequest] = []

    def script(request: GenerationRequest) -> str:
        sent.append(request)
        return next(answers)

    result = LLMJudge(ScriptedBackend(script)).faithfulness(QUESTION, ANSWER, CONTEXTS)
    assert result.score == 1.0
    for request, text in zip(
        sent, [statements_json(["Paris is the capital."]), verdicts_json(["Yes"])], strict=True
    ):
        assert request.constraint is not None and request.constraint.regex is not None
        assert re.fullmatch(request.constraint.regex, text)
        assert len(text.encode()) < request.max_tokens
    # each step's token bound is its shape's (12 statements of 200 characters; one verdict, 160-char reason)
    assert [r.max_tokens for r in sent] == [Statements(12, 200).max_tokens(), Verdicts(1, 160).max_tokens()]
