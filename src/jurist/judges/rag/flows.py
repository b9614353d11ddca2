"""Each RAG metric as a sequence of steps.

A flow is a generator: it yields the asks of a step (:class:`.steps.Ask`, several when they are
independent, e.g. the statements of the answer and of the reference), receives their values in the same
order, and returns the row's :class:`Outcome`. The judge kind (:mod:`.kind`) turns every yield
into one engine step, so the engine sends the step for every row of a chunk together: first every row's
extraction, then every row's verification. A flow that returns before its first yield makes no call.

=====================  =======================================================================================
metric                 steps
=====================  =======================================================================================
answer_correctness     statements of the answer and of the reference; then, when both have some, whether the
                       reference supports each answer statement (TP, else FP) and whether the answer states
                       each reference statement (else FN). An empty side makes every statement of the other
                       side an FP (or FN) without a call.
answer_relevance       a 1-5 rating
context_precision      one verdict per context: useful for the question (and the reference, when given)?
context_recall         statements of the reference; then whether each is attributable to the contexts
faithfulness           claims of the answer; then whether the contexts support each
criteria_score         a 1-``scale`` rating against the criteria
=====================  =======================================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from jurist.config.rag import RagJudgeParams, RagMetric
from jurist.judges.rag.formulas import Scored, average_precision, fraction, rating_score, statement_f1
from jurist.judges.rag.inputs import Case
from jurist.judges.rag.prompts import (
    Check,
    Source,
    criteria_task,
    extract_task,
    precision_task,
    relevance_task,
    verify_task,
)
from jurist.judges.rag.schemas import Rating, Statements, Verdicts
from jurist.judges.rag.steps import Ask

NO_CONTEXTS = "no contexts were given (no call made)"


@dataclass(frozen=True)
class Outcome:
    """A row's score (or why it is undefined) and its details, by detail name."""

    scored: Scored
    details: dict[str, Any] = field(default_factory=dict)


Flow = Generator[list[Ask], list[Any], Outcome]

DETAILS: dict[RagMetric, tuple[tuple[str, pa.DataType], ...]] = {
    RagMetric.ANSWER_CORRECTNESS: (("tp", pa.int64()), ("fp", pa.int64()), ("fn", pa.int64())),
    RagMetric.ANSWER_RELEVANCE: (("rating", pa.int64()), ("reason", pa.string())),
    RagMetric.CONTEXT_PRECISION: (("relevant", pa.list_(pa.bool_())), ("n_relevant", pa.int64())),
    RagMetric.CONTEXT_RECALL: (("n_statements", pa.int64()), ("n_attributed", pa.int64())),
    RagMetric.FAITHFULNESS: (("n_claims", pa.int64()), ("n_supported", pa.int64())),
    RagMetric.CRITERIA_SCORE: (("rating", pa.int64()), ("scale", pa.int64()), ("reason", pa.string())),
}
"""The details each metric reports (its own output columns, before ``undefined`` and ``raw``)."""


def _extract(name: str, source: Source, p: RagJudgeParams) -> Ask:
    return Ask(
        name, extract_task(source, p.max_statements), Statements(p.max_statements, p.max_statement_chars)
    )


def _verify(name: str, check: Check, statements: tuple[str, ...], p: RagJudgeParams) -> Ask:
    return Ask(name, verify_task(check, statements), Verdicts(len(statements), p.max_reason_chars))


def answer_correctness(case: Case, p: RagJudgeParams) -> Flow:
    answer_statements, reference_statements = yield [
        _extract("answer_statements", "answer", p),
        _extract("reference_statements", "reference", p),
    ]
    if answer_statements and reference_statements:
        supported, covered = yield [
            _verify("answer_verdicts", "answer_vs_reference", answer_statements, p),
            _verify("reference_verdicts", "reference_vs_answer", reference_statements, p),
        ]
        tp = sum(supported)
        fp = len(answer_statements) - tp
        fn = len(reference_statements) - sum(covered)
    else:  # nothing on one side can support (or state) a statement of the other
        tp, fp, fn = 0, len(answer_statements), len(reference_statements)
    return Outcome(statement_f1(tp, fp, fn), {"tp": tp, "fp": fp, "fn": fn})


def answer_relevance(case: Case, p: RagJudgeParams) -> Flow:
    ((rating, reason),) = yield [Ask("rating", relevance_task(), Rating(5, p.max_reason_chars))]
    return Outcome(rating_score(rating, 5), {"rating": rating, "reason": reason})


def context_precision(case: Case, p: RagJudgeParams) -> Flow:
    contexts = case.contexts or ()
    if not contexts:
        return Outcome(average_precision(()))
    task = precision_task(len(contexts), case.reference is not None)
    (relevant,) = yield [Ask("verdicts", task, Verdicts(len(contexts), p.max_reason_chars))]
    return Outcome(average_precision(relevant), {"relevant": list(relevant), "n_relevant": sum(relevant)})


def context_recall(case: Case, p: RagJudgeParams) -> Flow:
    if not case.contexts:
        return Outcome(Scored(None, NO_CONTEXTS))
    (statements,) = yield [_extract("statements", "reference", p)]
    if not statements:
        return Outcome(
            Scored(None, "the reference yields no statement"), {"n_statements": 0, "n_attributed": 0}
        )
    (attributed,) = yield [_verify("verdicts", "recall", statements, p)]
    n = sum(attributed)
    details = {"n_statements": len(statements), "n_attributed": n}
    return Outcome(fraction(n, len(statements), "the reference yields no statement"), details)


def faithfulness(case: Case, p: RagJudgeParams) -> Flow:
    if not case.contexts:
        return Outcome(Scored(None, NO_CONTEXTS))
    (claims,) = yield [_extract("claims", "answer", p)]
    if not claims:
        return Outcome(Scored(None, "the answer makes no claim"), {"n_claims": 0, "n_supported": 0})
    (supported,) = yield [_verify("verdicts", "faithfulness", claims, p)]
    n = sum(supported)
    return Outcome(
        fraction(n, len(claims), "the answer makes no claim"), {"n_claims": len(claims), "n_supported": n}
    )


def criteria_score(case: Case, p: RagJudgeParams) -> Flow:
    scale = p.rating_scale
    assert case.criteria is not None  # a required input
    task = criteria_task(case.criteria, scale)
    ((rating, reason),) = yield [Ask("rating", task, Rating(scale, p.max_reason_chars))]
    return Outcome(rating_score(rating, scale), {"rating": rating, "scale": scale, "reason": reason})


SUMMARIES: dict[RagMetric, tuple[str, str]] = {
    RagMetric.ANSWER_CORRECTNESS: (
        "TP / (TP + (FP + FN) / 2), undefined when all are 0",
        "statements of the answer and of the reference; then a verdict per statement, both ways",
    ),
    RagMetric.ANSWER_RELEVANCE: ("(rating - 1) / 4", "a 1-5 rating"),
    RagMetric.CONTEXT_PRECISION: (
        "average precision of the useful contexts; 0.0 when none is, undefined without contexts",
        "a verdict per context",
    ),
    RagMetric.CONTEXT_RECALL: (
        "n_attributed / n_statements, undefined without statements or contexts",
        "statements of the reference; then a verdict per statement",
    ),
    RagMetric.FAITHFULNESS: (
        "n_supported / n_claims, undefined without claims or contexts",
        "claims of the answer; then a verdict per claim",
    ),
    RagMetric.CRITERIA_SCORE: ("(rating - 1) / (scale - 1)", "a 1-scale rating against the criteria"),
}
"""Each metric's formula and steps, in words (for ``jurist validate``)."""

FLOWS: dict[RagMetric, Callable[[Case, RagJudgeParams], Flow]] = {
    RagMetric.ANSWER_CORRECTNESS: answer_correctness,
    RagMetric.ANSWER_RELEVANCE: answer_relevance,
    RagMetric.CONTEXT_PRECISION: context_precision,
    RagMetric.CONTEXT_RECALL: context_recall,
    RagMetric.FAITHFULNESS: faithfulness,
    RagMetric.CRITERIA_SCORE: criteria_score,
}
