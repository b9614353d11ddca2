"""The RAG judge kind: a config with ``rag_judge_params`` -> a metric computed in steps, one row's output.

For each row the kind reads the metric's inputs (:mod:`.inputs`), renders the case once
(``judge_params.prompt_template``) and runs the metric's flow (:mod:`.flows`): each step becomes a
:class:`~jurist.judges.base.Step` whose ``finish`` reads the answers and returns the next step or the row's
output. The engine therefore sends one step for every row of a chunk in one call.

Columns: the metric's details (``tp``, ``fp``, ``fn``; ``rating``, ``reason``; ``relevant``,
``n_relevant``; ...), ``undefined`` (why the score is undefined, else null) and ``raw`` (every step's
answer, as a JSON object by step name); then the generic ones (``score``, ``status``, ``error``...). A row
whose score is undefined (no contexts, no claim, ...) has status ``ok``, a null score and its reason in
``undefined``. A step that fails gives the row that step's status (``parse_error`` for an unreadable answer
or an invalid verdict, ``truncated``, ``too_long``, ``backend_error``) and an error naming the step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import pyarrow as pa

from jurist.config.rag import RAG_INPUTS, RagJudgeParams, RagMetric
from jurist.config.templates import Template
from jurist.judges.base import JudgeKind, Step
from jurist.judges.columns import RAW_COLUMN, Column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.judges.rag.flows import DETAILS, FLOWS, SUMMARIES, Flow, Outcome
from jurist.judges.rag.inputs import Case, CaseError, read_case
from jurist.judges.rag.prompts import NONE_GIVEN, PROMPT_VERSION, numbered_contexts, tasks_fingerprint
from jurist.judges.rag.schemas import Rating, Statements, Verdicts
from jurist.judges.rag.steps import Ask, build_request, read_step
from jurist.records import Answer, ConstraintKind, GenerationRequest
from jurist.render.namespace import build_namespace


def _detail_column(name: str, kind: pa.DataType) -> Column:
    return Column(name, kind, lambda o, _p: o.field_values.get(name))


class RagJudge(JudgeKind):
    """A judge of ``rag_judge_params`` configs: one metric, one or two steps per row."""

    kind_name = "rag"
    section = "rag_judge_params"

    def __init__(self, parts: JudgeParts) -> None:
        super().__init__(parts)
        params = self.config.rag_judge_params
        assert params is not None
        self.rag: RagJudgeParams = params
        jp = self.config.judge_params
        self.system = Template(jp.system_instruction or "").substitute(jp.template_variables)
        self.case_template = parts.prompt.user_template
        self.details = DETAILS[params.metric]

    # the judge's prompt and answer shapes are this kind's, not the pointwise spec's: provenance says so
    @cached_property
    def prompt_hash(self) -> str:
        return self.prompt_fingerprint()

    @cached_property
    def schema_hash(self) -> str:
        return self.schema_fingerprint()

    # ------------------------------------------------------------------------------ description
    @property
    def required_fields(self) -> set[str]:
        """Columns the case and system templates read besides the metric's inputs."""
        return (self.case_template.names | self.system.names) - set(RAG_INPUTS)

    def missing_columns(self, columns: set[str]) -> list[str]:
        missing = super().missing_columns(columns)
        for name in self.rag.inputs.required:
            if name == "criteria" and self.rag.criteria is not None:
                continue
            candidates = self.rag.candidates(name)
            if not any(c.split(".")[0] in columns for c in candidates):
                missing.append(f"{' or '.join(repr(c) for c in candidates)} (the {name})")
        return missing

    def prompt_fingerprint(self) -> str:
        """A short hash of the prompt: system instruction, case template, the tasks' wording and version."""
        payload = {
            "version": PROMPT_VERSION,
            "metric": self.rag.metric.value,
            "system": self.system.text,
            "case": self.case_template.text,
            "tasks": tasks_fingerprint(),
            "criteria": self.rag.criteria,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def schema_fingerprint(self) -> str:
        """A short hash of the step answers' shapes and bounds."""
        p = self.rag
        shapes = [
            Statements(p.max_statements, p.max_statement_chars).fingerprint(),
            Verdicts(1, p.max_reason_chars).fingerprint(),
            Rating(p.rating_scale, p.max_reason_chars).fingerprint(),
        ]
        payload = {"metric": p.metric.value, "max_contexts": p.max_contexts, "shapes": shapes}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    label = "rag"
    judgment_fields: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        """The judge in a few lines: metric, formula, steps and their bounds, the inputs it reads."""
        p = self.rag
        formula, steps = SUMMARIES[p.metric]
        reads = [f"{name} ({' / '.join(p.candidates(name))})" for name in p.inputs.required]
        optional = [f"{name} ({' / '.join(p.candidates(name))})" for name in p.inputs.optional]
        lines = [
            f"RAG metric {p.metric.value}: {formula}",
            f"steps: {steps}",
            f"bounds: {p.max_statements} statements of {p.max_statement_chars} characters, reasons of "
            f"{p.max_reason_chars} characters, {p.max_contexts} contexts for context precision",
            f"reads: {', '.join(reads)}" + (f"; optionally {', '.join(optional)}" if optional else ""),
        ]
        if p.metric is RagMetric.CRITERIA_SCORE:
            criteria = p.criteria or f"from the row ({' / '.join(p.candidates('criteria'))})"
            lines.append(f"scale 1-{p.rating_scale}; criteria: {criteria}")
        return lines

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        columns = [_detail_column(name, kind) for name, kind in self.details]
        columns.append(_detail_column("undefined", pa.string()))
        columns.append(RAW_COLUMN)
        return tuple(columns)

    # ------------------------------------------------------------------------------------ rows
    def failure(self, status: Status, error: str) -> JudgeOutput:
        if status == "target_error":
            error = f"the target errored: {error}"
        return JudgeOutput(status, self._nothing(), {}, error=error)

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        try:
            case = read_case(row, self.rag)
        except CaseError as exc:
            bad = self.failure("bad_input", f"{self.rag.metric.value}: {exc}")
            return Step((), lambda _answers: bad)
        namespace = self._namespace(row, case)
        run = _Run(self, self.system.render(namespace), self.case_template.render(namespace), kinds)
        return run.begin(FLOWS[self.rag.metric](case, self.rag))

    def _namespace(self, row: Mapping[str, Any], case: Case) -> dict[str, Any]:
        """The row's namespace with the metric's inputs as the case shows them (absent optional ones as
        "(none given)", contexts numbered)."""
        namespace = build_namespace(row)
        for name in ("question", "answer", "reference", "criteria"):
            value = getattr(case, name)
            namespace[name] = NONE_GIVEN if value is None else value
        namespace["contexts"] = numbered_contexts(case.contexts or ())
        return namespace

    def _nothing(self) -> dict[str, Any]:
        return dict.fromkeys([*(name for name, _ in self.details), "undefined"])

    def output(
        self, outcome: Outcome, raw: str | None, prompt_tokens: int, completion_tokens: int
    ) -> JudgeOutput:
        values = {name: outcome.details.get(name) for name, _ in self.details}
        values["undefined"] = outcome.scored.undefined
        tokens: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        return JudgeOutput("ok", values, {}, None, outcome.scored.score, raw=raw, **tokens)

    def failed(
        self, status: Status, error: str, raw: str | None, prompt_tokens: int, completion_tokens: int
    ) -> JudgeOutput:
        tokens: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        return JudgeOutput(status, self._nothing(), {}, error=error, raw=raw, **tokens)


class _Run:
    """One row's flow, step by step: every step's answers are read, then the flow is resumed."""

    def __init__(self, kind: RagJudge, system: str, case: str, kinds: Sequence[ConstraintKind]) -> None:
        self.kind = kind
        self.system = system
        self.case = case
        self.kinds = kinds
        self.raw: dict[str, str | None] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.asks: list[Ask] = []
        self.requests: tuple[GenerationRequest, ...] = ()
        self.flow: Flow | None = None

    def begin(self, flow: Flow) -> Step:
        self.flow = flow
        try:
            asks = next(flow)
        except StopIteration as stop:
            output = self._output(stop.value)
            return Step((), lambda _answers: output)
        return self._step(asks)

    def _step(self, asks: list[Ask]) -> Step:
        self.asks = asks
        parts = self.kind.parts
        self.requests = tuple(build_request(parts, self.system, self.case, ask, self.kinds) for ask in asks)
        return Step(self.requests, self._finish)

    def _finish(self, answers: Sequence[Answer]) -> JudgeOutput | Step:
        values: list[Any] = []
        failure: tuple[Status, str] | None = None
        for ask, request, answer in zip(self.asks, self.requests, answers, strict=True):
            reading = read_step(answer, ask.schema, request.max_tokens)
            self.prompt_tokens += reading.prompt_tokens
            self.completion_tokens += reading.completion_tokens
            self.raw[ask.name] = reading.raw
            if failure is None and not reading.ok:
                failure = (reading.status, f"step {ask.name}: {reading.error}")
            values.append(reading.value)
        if failure is not None:
            assert self.flow is not None
            self.flow.close()
            return self.kind.failed(*failure, self._raw(), self.prompt_tokens, self.completion_tokens)
        assert self.flow is not None
        try:
            asks = self.flow.send(values)
        except StopIteration as stop:
            return self._output(stop.value)
        return self._step(asks)

    def _output(self, outcome: Outcome) -> JudgeOutput:
        return self.kind.output(outcome, self._raw(), self.prompt_tokens, self.completion_tokens)

    def _raw(self) -> str | None:
        """Every step's answer by step name (None when no call was made)."""
        return json.dumps(self.raw, ensure_ascii=False) if self.raw else None
