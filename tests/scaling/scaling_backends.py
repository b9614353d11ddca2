"""Backend factories for worker processes (data-parallel workers and Ray actors import them by name): the
scripted backend answering from the request alone, so any placement of a request gives the same answer."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jurist import ScriptedBackend
from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.errors import BackendError
from jurist.models.default_model import DEFAULT_MODEL_LABEL
from jurist.records import GenerationRequest, LabelRequest
from mortal import dying

JUDGE = {"name": "j", "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True}}
PAIR = {
    "name": "p",
    "judge_params": {"prompt_template": "{question}\nA: {response_a}\nB: {response_b}"},
    "pairwise_judge_params": {},
}
LABELS = {
    "name": "l",
    "judge_params": {"prompt_template": "Q: {question}", "judgment_type": "BOOL", "scoring": "LOGPROBS"},
}


def answer(request: GenerationRequest) -> str:
    text = request.messages[-1].content
    if "\nA: " in text:
        return json.dumps({"judgment": "A" if "first" in text.split("A: ")[1][:8] else "B"})
    if "poison" in text:
        raise ValueError("this request breaks the engine")
    return json.dumps({"explanation": text[-12:], "judgment": "Yes" if len(text) % 2 else "No"})


def failing_after(requests: int) -> Callable[[GenerationRequest], str]:
    """Answers as :func:`answer` does, then raises for every request after the first ``requests`` (a machine
    that went away mid-run)."""
    served = 0

    def respond(request: GenerationRequest) -> str:
        nonlocal served
        served += 1
        if served > requests:
            raise BackendError("the machine went away")
        return answer(request)

    return respond


def labels(request: LabelRequest) -> Mapping[str, float]:
    share = (len(request.messages[-1].content) % 10 + 1) / 12
    return {label: (-share if i == 0 else -1 - share) for i, label in enumerate(request.labels)}


def scripted() -> Backend:
    """A batch that holds a "poison" row raises as a whole (the engine must narrow it down)."""
    return ScriptedBackend(answer, labels=labels)


def scripted_for(config: InferenceConfig) -> Backend:
    """A factory of the shape ``Engine(backend_factory=...)`` takes; the model named as a real backend names
    it (the configured model, or the default model's label)."""
    return ScriptedBackend(answer, labels=labels, model_id=config.model.model_name or DEFAULT_MODEL_LABEL)


class Counting(ScriptedBackend):
    """Counts the requests it served (``served()``), to see how work was spread."""

    def served(self) -> int:
        return len(self.requests)


def scripted_for_worker() -> Backend:
    return Counting(answer, labels=labels)


def cannot_load() -> Backend:
    raise RuntimeError("no model here")


def cannot_load_for(config: InferenceConfig) -> Backend:
    """:func:`cannot_load` as an ``Engine(backend_factory=...)``."""
    return cannot_load()


def one_engine_for(config: InferenceConfig) -> Backend:
    """:func:`scripted_for`, refusing a config that still asks for a pool of engines of its own."""
    if "data_parallel" in config.engine_params:
        raise RuntimeError(f"asked for a nested pool: {dict(config.engine_params)}")
    return scripted_for(config)


@dataclass(frozen=True)
class FailingFor:
    """:func:`scripted_for` whose model goes away after ``requests`` requests (a picklable factory)."""

    requests: int

    def __call__(self, config: InferenceConfig) -> Backend:
        model = config.model.model_name or DEFAULT_MODEL_LABEL
        return ScriptedBackend(failing_after(self.requests), labels=labels, model_id=model)


class Slow(ScriptedBackend):
    """:func:`scripted_for`'s answers, each call after ``delay`` seconds (so that a kill lands mid-run)."""

    def __init__(self, delay: float, model_id: str) -> None:
        super().__init__(answer, labels=labels, model_id=model_id)
        self.delay = delay

    def generate(self, requests: Any) -> Any:
        time.sleep(self.delay)
        return super().generate(requests)


@dataclass(frozen=True)
class SlowFor:
    """A picklable factory of :class:`Slow` backends."""

    delay: float

    def __call__(self, config: InferenceConfig) -> Backend:
        return Slow(self.delay, config.model.model_name or DEFAULT_MODEL_LABEL)


def dying_for(config: InferenceConfig) -> Backend:
    """:func:`scripted_for` in a process that dies after ``JURIST_TEST_DIE_AFTER`` requests (tests/mortal)."""
    model = config.model.model_name or DEFAULT_MODEL_LABEL
    return ScriptedBackend(dying(answer), labels=labels, model_id=model)
