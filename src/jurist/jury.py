"""evaluatorq's jury API on a local model: ``llm_jury(...)`` and ``llm_jury_pairwise(...)``.

Both take evaluatorq 1.82's keyword arguments and judge with jurist's ``jury/*`` built-ins, whose prompts are
evaluatorq's byte for byte (:mod:`jurist.render.evaluatorq`):

* :func:`llm_jury` returns an evaluator, ``{"name": ..., "scorer": ...}``: evaluatorq's runner (or any code)
  awaits ``scorer({"data": data_point, "output": output})`` and gets an evaluatorq-style result dict
  (``value``: True / False, or ``"inconclusive"`` for an errored target or a failed judgment;
  ``explanation``; ``pass``).
* :func:`llm_jury_pairwise` returns a :class:`PairwiseJury`; ``await jury.compare(question=...,
  response_a=..., response_b=...)`` judges both orders and returns a :class:`PairwiseComparison` whose
  ``winner`` is ``"A"``, ``"B"``, ``"tie"`` or ``"inconclusive"`` (the orders disagree, one failed, or a
  side errored), as evaluatorq's.

What runs the judge: ``client`` (a jurist :class:`~jurist.backends.base.Backend`, used as it is), else
``model`` (a model name or folder, an :class:`~jurist.config.inference.InferenceConfig` or its mapping),
else the built-in's inference config (the embedded default model). A panel of several ``judges``, presets,
repetitions, numeric or labelled verdicts and the other panel settings of evaluatorq are not implemented: a
value other than evaluatorq's default raises NotImplementedError naming the argument.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurist.backends.base import Backend
from jurist.config.inference import InferenceConfig
from jurist.config.loading import load_judge_config
from jurist.engine.core import Engine
from jurist.judges.outputs import JudgeOutput

WINNERS = {"a": "A", "b": "B", "tie": "tie", "inconclusive": "inconclusive"}


def _refuse(function: str, given: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    for key, default in defaults.items():
        if given.get(key, default) != default:
            raise NotImplementedError(
                f"jurist.{function}: {key}={given[key]!r} is not implemented (jurist judges with one local "
                f"model, a boolean or A/B/tie verdict); leave it at evaluatorq's default {default!r}"
            )


def _model(judges: list[str] | None, model: str | None) -> str | None:
    if judges is not None and model is not None:
        raise ValueError("give judges or model, not both (as evaluatorq)")
    if judges is not None and len(judges) != 1:
        raise NotImplementedError(
            f"jurist's llm_jury judges with one model; a panel of {len(judges)} judges is not implemented"
        )
    return judges[0] if judges else model


def _overrides(
    criteria: str | None,
    prompt: str | None,
    system_prompt: str | None,
    model: str | InferenceConfig | Mapping[str, Any] | None,
    temperature: float | None,
    max_tokens: int,
) -> dict[str, Any]:
    if criteria is None and prompt is None:
        raise ValueError(
            "pass criteria, prompt, or both (as evaluatorq): a judge with neither has nothing to go on"
        )
    out: dict[str, Any] = {"inference_config.generation.max_new_tokens": max_tokens}
    if criteria is not None:
        out["judge_params.template_variables.criteria"] = criteria
    if prompt is not None:
        out["judge_params.prompt_template"] = prompt
    if system_prompt is not None:
        out["judge_params.system_instruction"] = system_prompt
    if temperature is not None:
        out["inference_config.generation.temperature"] = temperature
    if isinstance(model, InferenceConfig):
        out["inference_config"] = model.model_dump(mode="json", exclude_unset=True)
    elif isinstance(model, Mapping):
        out["inference_config"] = dict(model)
    elif model is not None:
        out["inference_config.model.model_name"] = model
    return out


class _Runner:
    """One engine for one built-in judge, run off the event loop, one call at a time."""

    def __init__(self, builtin: str, overrides: Mapping[str, Any], client: Backend | None) -> None:
        self.config = load_judge_config(builtin, overrides)
        self.engine = Engine([self.config], client, carry_input=False)
        self._lock = threading.Lock()

    def _judge(self, row: Mapping[str, Any]) -> JudgeOutput:
        with self._lock:
            return self.engine.outputs([row])[self.engine.judges[0].name][0]

    async def judge(self, row: Mapping[str, Any]) -> JudgeOutput:
        return await asyncio.to_thread(self._judge, row)


def _field(data: Any, name: str) -> Any:
    return data.get(name) if isinstance(data, Mapping) else getattr(data, name, None)


def _plain(value: Any) -> Any:
    """evaluatorq's pydantic values (messages, responses) as plain data."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def llm_jury(
    *,
    name: str,
    criteria: str | None = None,
    prompt: str | None = None,
    system_prompt: str | None = None,
    preset: str | None = None,
    judges: list[str] | None = None,
    model: str | InferenceConfig | Mapping[str, Any] | None = None,
    repetitions: int = 1,
    verdict_kind: str = "categorical",
    labels: Any = None,
    temperature: float | None = None,
    max_tokens: int = 8000,
    client: Backend | None = None,
    **panel: Any,
) -> dict[str, Any]:
    """An evaluator judging each data point's output against ``criteria`` (evaluatorq's ``llm_jury``)."""
    _refuse(
        "llm_jury",
        {
            "preset": preset,
            "repetitions": repetitions,
            "verdict_kind": verdict_kind,
            "labels": labels,
            **panel,
        },
        {"preset": None, "repetitions": 1, "verdict_kind": "categorical", "labels": None, **_PANEL_DEFAULTS},
    )
    chosen = _model(judges, model) if isinstance(model, str | None) else model
    runner = _Runner(
        "jury/pointwise", _overrides(criteria, prompt, system_prompt, chosen, temperature, max_tokens), client
    )

    async def scorer(params: Mapping[str, Any]) -> dict[str, Any]:
        data = params["data"]
        row = {
            "inputs": _plain(_field(data, "inputs") or {}),
            "expected_output": _plain(_field(data, "expected_output")),
            "output": _plain(params.get("output")),
        }
        output = await runner.judge(row)
        if not output.ok:
            return {"value": "inconclusive", "explanation": output.error or output.status}
        verdict = bool(output.field_values.get("judgment"))
        return {
            "value": verdict,
            "explanation": output.field_values.get("explanation") or "",
            "pass": verdict,
        }

    return {"name": name, "scorer": scorer}


_PANEL_DEFAULTS: dict[str, Any] = {
    "assignment": "all",
    "replacement_judges": None,
    "min_successful_judges": None,
    "levels": None,
    "passing_labels": None,
    "state_fields": None,
    "aggregator": None,
    "threshold": 0.5,
    "score_range": (0.0, 1.0),
    "tie_break": None,
    "structured_output": True,
    "timeout_ms": 90000,
    "extra_kwargs": None,
    "extra_body": None,
    "reasoning_effort": None,
}


@dataclass(frozen=True)
class PairwiseComparison:
    """One A-vs-B comparison: ``winner`` (``"A"``, ``"B"``, ``"tie"``, ``"inconclusive"``), whether the two
    orders agreed, each order's explanation and, for an inconclusive pair, why."""

    winner: str
    position_consistent: bool | None = None
    explanations: tuple[str, ...] = ()
    error: str | None = None


class PairwiseJury:
    """A pairwise jury on a local model (evaluatorq's ``PairwiseComparator``): call :meth:`compare`."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def compare(self, *, question: str, response_a: Any, response_b: Any) -> PairwiseComparison:
        """Judge both orders of one pair; a side carrying an error is not judged (``inconclusive``)."""
        row = {"question": question, "response_a": _plain(response_a), "response_b": _plain(response_b)}
        output = await self._runner.judge(row)
        values = output.field_values
        winner = WINNERS.get(str(values.get("winner")), "inconclusive")
        explanations = tuple(str(values[k]) for k in ("ab_explanation", "ba_explanation") if values.get(k))
        return PairwiseComparison(winner, values.get("position_consistent"), explanations, output.error)


def llm_jury_pairwise(
    *,
    judges: list[str] | None = None,
    model: str | InferenceConfig | Mapping[str, Any] | None = None,
    criteria: str | None = None,
    prompt: str | None = None,
    system_prompt: str | None = None,
    swap: bool = True,
    repetitions: int = 1,
    max_tokens: int = 8000,
    temperature: float | None = None,
    client: Backend | None = None,
    **panel: Any,
) -> PairwiseJury:
    """A pairwise jury comparing two responses to a question in both orders (evaluatorq's
    ``llm_jury_pairwise``; ``swap=False`` is not implemented: jurist always judges both orders)."""
    defaults = {k: v for k, v in _PANEL_DEFAULTS.items() if k in _PAIRWISE_KEYS} | {
        "min_successful_judges": 1
    }
    _refuse(
        "llm_jury_pairwise",
        {"swap": swap, "repetitions": repetitions, **panel},
        {"swap": True, "repetitions": 1, **defaults},
    )
    chosen = _model(judges, model) if isinstance(model, str | None) else model
    overrides = _overrides(
        criteria or _DEFAULT_PAIRWISE, prompt, system_prompt, chosen, temperature, max_tokens
    )
    return PairwiseJury(_Runner("jury/pairwise", overrides, client))


_PAIRWISE_KEYS = frozenset(
    {"assignment", "replacement_judges", "structured_output", "timeout_ms", "extra_kwargs", "extra_body"}
    | {"reasoning_effort", "state_fields"}
)
_DEFAULT_PAIRWISE = (  # evaluatorq's default pairwise criteria (the jury/pairwise built-in's too)
    "Compare the two responses on accuracy and correctness, helpfulness and completeness, clarity and "
    "organization, and relevance to the question."
)
