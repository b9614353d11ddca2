"""``LLMJudge``: scikit-plots' judge API on jurist's judges, one call per method.

Each method builds one row from its arguments and runs the metric's built-in judge (``rag/<metric>``, or
``pairwise/preference``) on it, step after step: one backend call per step (extraction, then verification),
which is the seed's way of calling a model. :func:`jurist.scikitplots.evaluate.evaluate_answers` runs the same
judges over a whole dataset, each step for every row in one call.

``llm`` is an :class:`LLM` from :func:`make_llm` (left open by :meth:`LLMJudge.close`), or anything
:func:`make_llm` wraps: a jurist backend, an :class:`~jurist.config.inference.InferenceConfig` or a model
name (the backend is then created when the first call needs it, and closed by :meth:`LLMJudge.close`), or
a function ``fn(prompt, system) -> str`` (:class:`~jurist.backends.callable.CallableBackend`). Invalid
arguments always raise (:class:`TypeError`, :class:`ValueError`). ``on_error`` decides what a failed
judgement does: a provider error, a cut-off completion or an invalid verdict raises
:class:`~jurist.scikitplots.results.JudgementError` (``"raise"``) or returns a result with a NaN score and
``error`` set (``"record"``). An undefined score (NaN with a ``reason``) is not a failure.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from jurist.backends import create_backend
from jurist.backends.base import Backend
from jurist.backends.callable import CallableBackend
from jurist.config.inference import InferenceConfig
from jurist.config.loading import load_judge_config
from jurist.config.rag import RagJudgeParams, RagMetric
from jurist.engine.dispatch import answer
from jurist.engine.lazy import lazy
from jurist.errors import BackendError
from jurist.judges.base import Step
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.judges.rag.flows import DETAILS
from jurist.judges.rag.inputs import context_texts
from jurist.judges.rag.prompts import PROMPT_VERSION
from jurist.records import GenerationRequest, Message
from jurist.scikitplots.results import ON_ERROR, JudgementError, JudgeResult, OnError

PREFERENCE = "preference"
PREFERENCE_CONFIG = "pairwise/preference"
PREFERENCE_DETAILS = ("winner", "position_consistent")
METRICS: tuple[str, ...] = (*(m.value for m in RagMetric), PREFERENCE)
MAX_SCALE = 100


def metric_config(metric: str) -> str:
    """The built-in config of a metric name (:data:`METRICS`); :class:`ValueError` for any other."""
    if metric == PREFERENCE:
        return PREFERENCE_CONFIG
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    return f"rag/{metric}"


def detail_names(metric: str) -> tuple[str, ...]:
    if metric == PREFERENCE:
        return PREFERENCE_DETAILS
    return tuple(name for name, _ in DETAILS[RagMetric(metric)])


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _optional_text(name: str, value: Any) -> str | None:
    return None if value is None else _text(name, value)


def _contexts(value: Any) -> list[str]:
    if value is None:
        raise TypeError("contexts must be a list of texts (or one text), not None")
    return context_texts(value)


def _slug(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_\-]+", "_", text.rsplit("/", 1)[-1]).strip("_") or "judge"
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"judge_{cleaned}"


class LLM:
    """The model behind a judge (scikit-plots' ``LLM``, made by :func:`make_llm`): a jurist backend, the
    inference config it came from (None for a backend or function given as it is) and whether it made the
    backend (and so closes it). ``llm(prompt, system)`` asks it once and returns its text."""

    def __init__(
        self, backend: Backend, *, owned: bool, config: InferenceConfig | None = None, max_tokens: int = 1024
    ) -> None:
        self.backend, self.owned, self.config, self.max_tokens = backend, owned, config, max_tokens

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def __call__(self, prompt: str, system: str = "") -> str:
        """One unconstrained request: ``system`` (when not empty) then ``prompt``; the model's text, or
        :class:`~jurist.errors.BackendError` for a failed or cut-off completion."""
        messages = ((Message("system", system),) if system else ()) + (Message("user", prompt),)
        done = self.backend.generate([GenerationRequest(messages=messages, max_tokens=self.max_tokens)])[0]
        if done.finish_reason != "stop":
            raise BackendError(
                f"{self.model_id}: {done.error or 'the completion ended with ' + done.finish_reason}"
            )
        return done.text

    def identity(self) -> dict[str, Any]:
        """The model, as results record it."""
        return {"model": self.model_id}

    def close(self) -> None:
        """Close the backend this LLM made (a backend given as it is stays open)."""
        if self.owned:
            self.backend.close()

    def __repr__(self) -> str:
        return f"LLM({self.model_id!r})"


def make_llm(model: Any, *, model_id: str | None = None, max_workers: int = 1, max_tokens: int = 1024) -> LLM:
    """Wrap a model for :class:`LLMJudge` (scikit-plots' ``make_llm``): a model name or folder, an
    :class:`~jurist.config.inference.InferenceConfig` (or its mapping) — the backend is created when the first
    call needs it, and closed by :meth:`LLM.close` —, a jurist backend (used as it is), a function
    ``fn(prompt, system) -> str`` (:class:`~jurist.backends.callable.CallableBackend`; ``model_id`` names it,
    ``max_workers`` > 1 calls it from that many threads), or an :class:`LLM` (returned as it is).
    ``max_tokens`` caps what :meth:`LLM.__call__` asks for; judges use their own bounds."""
    if isinstance(model, LLM):
        return model
    if isinstance(model, str | Mapping):
        model = InferenceConfig.model_validate(
            {"model": {"model_name": model}} if isinstance(model, str) else dict(model)
        )
    if isinstance(model, InferenceConfig):
        made = lazy(create_backend, model, lambda _seconds: None)
        return LLM(made, owned=True, config=model, max_tokens=max_tokens)
    if isinstance(model, Backend):
        return LLM(model, owned=False, max_tokens=max_tokens)
    if callable(model):
        backend = CallableBackend(model, model_id=model_id, max_workers=max_workers)
        return LLM(backend, owned=True, max_tokens=max_tokens)
    raise TypeError(
        "make_llm takes a model name, an InferenceConfig, a jurist backend or a function "
        f"fn(prompt, system) -> str, not {type(model).__name__}"
    )


def _resolve(llm: Any) -> tuple[Backend, bool, InferenceConfig | None]:
    """(backend, whether this judge owns it, the inference config when one was given): an LLM from
    :func:`make_llm` stays its maker's; anything else is wrapped by :func:`make_llm` and owned here."""
    if isinstance(llm, LLM):
        return llm.backend, False, llm.config
    try:
        made = make_llm(llm)
    except TypeError as exc:
        raise TypeError(f"llm must be an LLM from make_llm, or what make_llm wraps: {exc}") from None
    return made.backend, made.owned, made.config


class LLMJudge:
    """Judge answers and contexts with a language model (scikit-plots' ``LLMJudge`` semantics).

    ``name`` names the judge's columns in a panel (:func:`~jurist.scikitplots.evaluate.evaluate_answers`); by
    default it is derived from the model's id.
    """

    def __init__(self, llm: Any, *, on_error: OnError = "raise", name: str | None = None) -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be 'raise' or 'record', not {on_error!r}")
        self.on_error: OnError = on_error
        self.backend, self._owned, self._inference = _resolve(llm)
        self.name = name or _slug(self.backend.model_id)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", self.name):
            raise ValueError(
                f"name {self.name!r} must be letters, digits, '_' or '-', not starting with a digit"
            )
        self._judges: dict[str, Judge] = {}

    # ---------------------------------------------------------------------------------- judges
    def judge_for(
        self, metric: str, params: Mapping[str, Any] | None = None, *, reference: bool = False
    ) -> Judge:
        """The compiled judge of a metric (named after it), with ``rag_judge_params`` set from ``params``;
        for ``preference``, ``reference`` adds the reference answer to its prompt. Built once, then reused."""
        ref = metric_config(metric)
        overrides: dict[str, Any] = {}
        if params:
            if metric == PREFERENCE:
                raise ValueError("preference takes no parameters")
            allowed = set(RagJudgeParams.model_fields) - {"metric"}
            unknown = sorted(set(params) - allowed)
            if unknown:
                raise ValueError(f"unknown {metric} parameter {unknown[0]!r}")
            overrides.update({f"rag_judge_params.{key}": value for key, value in params.items()})
        if metric == PREFERENCE and reference:
            template = load_judge_config(ref).judge_params.prompt_template.rstrip()
            overrides["judge_params.prompt_template"] = f"{template}\n\n[Reference answer]\n{{reference}}\n"
        if self._inference is not None:
            overrides["inference_config"] = self._inference.model_dump(mode="python", exclude_unset=True)
        key = json.dumps([metric, overrides], sort_keys=True, default=str)
        if key not in self._judges:
            self._judges[key] = Judge.from_config(ref, overrides, name=metric)
        return self._judges[key]

    def run(self, judge: Judge, row: Mapping[str, Any]) -> JudgeOutput:
        """One row through a judge, one backend call per step."""
        step = judge.start(row, self.backend.constraint_kinds)
        while True:
            result = step.finish(answer(self.backend, step.requests))
            if not isinstance(result, Step):
                return result
            step = result

    def _judge(self, metric: str, row: Mapping[str, Any], judge: Judge | None = None) -> JudgeResult:
        output = self.run(judge or self.judge_for(metric), row)
        result = JudgeResult.from_output(metric, output, detail_names(metric))
        if result.error is not None and self.on_error == "raise":
            raise JudgementError(result)
        return result

    # --------------------------------------------------------------------------------- metrics
    def answer_correctness(self, question: str, answer: str, reference: str) -> JudgeResult:
        """Statement-level F1 of the answer against the reference: TP / (TP + (FP + FN) / 2). details: tp,
        fp, fn. Undefined when all three are 0."""
        row = {
            "question": _text("question", question),
            "answer": _text("answer", answer),
            "reference": _text("reference", reference),
        }
        return self._judge("answer_correctness", row)

    def answer_relevance(self, question: str, answer: str) -> JudgeResult:
        """How directly the answer addresses the question: (rating - 1) / 4. details: rating (1-5), reason."""
        row = {"question": _text("question", question), "answer": _text("answer", answer)}
        return self._judge("answer_relevance", row)

    def context_precision(self, question: str, contexts: Any, reference: str | None = None) -> JudgeResult:
        """Average precision of the relevant contexts, in retrieval order: the sum of precision@k over the
        relevant ranks k, over n_relevant; 0.0 when none is relevant. details: relevant (one boolean per
        context), n_relevant. Undefined without contexts (no call made)."""
        texts = _contexts(contexts)
        judge = self.judge_for("context_precision")
        limit = judge.config.rag_judge_params.max_contexts if judge.config.rag_judge_params else 0
        if len(texts) > limit:
            raise ValueError(f"{len(texts)} contexts; context_precision judges at most {limit}")
        row = {
            "question": _text("question", question),
            "contexts": texts,
            "reference": _optional_text("reference", reference),
        }
        return self._judge("context_precision", row, judge)

    def context_recall(self, question: str, contexts: Any, reference: str) -> JudgeResult:
        """Fraction of the reference's statements attributable to the contexts. details: n_statements,
        n_attributed. Undefined when the reference yields no statement, or without contexts (no call made)."""
        row = {
            "question": _text("question", question),
            "contexts": _contexts(contexts),
            "reference": _text("reference", reference),
        }
        return self._judge("context_recall", row)

    def faithfulness(self, question: str, answer: str, contexts: Any) -> JudgeResult:
        """Fraction of the answer's claims that the contexts support. details: n_claims, n_supported.
        Undefined when the answer makes no claim, or without contexts (no call made)."""
        row = {
            "question": _text("question", question),
            "answer": _text("answer", answer),
            "contexts": _contexts(contexts),
        }
        return self._judge("faithfulness", row)

    def criteria_score(
        self,
        question: str,
        answer: str,
        criteria: str,
        *,
        scale: int = 5,
        reference: str | None = None,
        contexts: Any = None,
    ) -> JudgeResult:
        """Rate the answer against a rubric in plain language: (rating - 1) / (scale - 1). details: rating,
        scale, reason. ``scale``: the highest rating, at least 2."""
        if isinstance(scale, bool) or not isinstance(scale, int) or not 2 <= scale <= MAX_SCALE:
            raise ValueError(f"scale must be an integer from 2 to {MAX_SCALE}, not {scale!r}")
        if not _text("criteria", criteria).strip():
            raise ValueError("criteria is empty")
        row = {
            "question": _text("question", question),
            "answer": _text("answer", answer),
            "criteria": criteria,
            "reference": _optional_text("reference", reference),
            "contexts": None if contexts is None else _contexts(contexts),
        }
        return self._judge("criteria_score", row, self.judge_for("criteria_score", {"scale": scale}))

    def preference(
        self, question: str, answer_a: str, answer_b: str, *, reference: str | None = None
    ) -> JudgeResult:
        """Which of two answers is better, asked in both orders. score for answer A: 1.0 (A wins), 0.0 (B
        wins), 0.5 (tie: also when the orders disagree). details: winner, position_consistent."""
        row = {
            "question": _text("question", question),
            "response_a": _text("answer_a", answer_a),
            "response_b": _text("answer_b", answer_b),
            "reference": _optional_text("reference", reference),
        }
        judge = self.judge_for(PREFERENCE, reference=reference is not None)
        return self._judge(PREFERENCE, row, judge)

    # -------------------------------------------------------------------------------- identity
    def identity(self) -> dict[str, Any]:
        """The model, the prompt version and a hash of every metric's prompt and answer shapes: scores
        with different identities should not be mixed."""
        judges = [self.judge_for(metric) for metric in METRICS]
        payload = [[j.name, j.prompt_hash, j.schema_hash] for j in judges]
        digest = hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]
        return {"model": self.backend.model_id, "prompt_version": PROMPT_VERSION, "prompt_hash": digest}

    # ------------------------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the backend this judge created (not one passed in)."""
        if self._owned:
            self.backend.close()

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
