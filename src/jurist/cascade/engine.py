"""The engine of a cascade run: the stage judges, their backends (one per model, made on first use and
kept, so each stage's model loads once) and the cascade's plan (the run's spec holds it, and so its
fingerprint)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from jurist.cascade.columns import CascadeAssembler, pairwise
from jurist.cascade.confidence import check_same_judgment, confidence_source_or_none
from jurist.config.cascade import CascadePlan
from jurist.config.types import InferenceEngine
from jurist.engine.core import BackendFactory, Engine, JudgeLike
from jurist.engine.plan import backend_key
from jurist.engine.spec import RunSpec
from jurist.errors import ConfigError
from jurist.io.results import judge_entry_columns
from jurist.io.sources import RowSource
from jurist.judges.judge import Judge

NO_CONFIDENCE = "none: the last stage decides every row that reaches it, so nothing reads a confidence"
MEMORY_SHARES_AT_MOST = 0.95
"""What the memory shares of a cascade's local vLLM engines may add up to: they stay loaded together."""


class CascadeEngine(Engine):
    """An :class:`~jurist.engine.core.Engine` over the stages' judges, in stage order, with the cascade's
    ``plan`` (set again once thresholds are calibrated)."""

    def __init__(
        self,
        judges: Sequence[JudgeLike],
        plan: CascadePlan,
        backend: Any = None,
        *,
        backend_factory: BackendFactory | None = None,
        **options: Any,
    ) -> None:
        super().__init__(list(judges), backend, backend_factory=backend_factory, **options)
        if self.panel is not None or self.calibrations:
            raise ConfigError("a cascade runs without --panel and --calibration")
        names = [j.name for j in self.judges]
        if plan.name in names:
            raise ConfigError(f"a cascade stage may not be named {plan.name!r}: the cascade's columns are")
        check_same_judgment(self.judges, abstain=plan.abstain)
        if backend is None and backend_factory is None:
            check_memory_shares(self.judges)
        self.plan = plan
        self._stage_models: dict[int, str] = {}

    @classmethod
    def for_spec(
        cls, spec: RunSpec, backend: Any = None, *, backend_factory: BackendFactory | None = None
    ) -> CascadeEngine:
        """The cascade engine of a run spec (its judges are the stages, in order; ``spec.cascade`` sets the
        thresholds: before calibration, a plan that keeps nothing)."""
        if spec.cascade is None:
            raise ValueError("the spec has no cascade")
        plan = spec.cascade.plan(spec.names)
        return cls(list(spec.judges), plan, backend, backend_factory=backend_factory, options=spec.options)

    def cascade_assembler(self, source: RowSource) -> CascadeAssembler:
        """The output schema of a cascade run over ``source`` (the stages' columns, then the cascade's),
        ready to assemble its batches with the cascade's decisions."""
        return CascadeAssembler(
            source.schema, self.judges, self.plan, carry_input=self.carry_input, source=source.source
        )

    def schema_for(self, source: RowSource) -> pa.Schema:
        return self.cascade_assembler(source).schema

    # --------------------------------------------------------------------------------- stages
    def note_model(self, stage: int, model_id: str) -> None:
        self._stage_models[stage] = model_id

    def stage_model(self, stage: int) -> str | None:
        """The model id a stage ran on (None before it judged a row in this process)."""
        return self._stage_models.get(stage)

    def models_by_name(self) -> dict[str, str]:
        return {self.judges[k].name: m for k, m in self._stage_models.items()}

    def judge_entry(self, source: RowSource) -> dict[str, Any]:
        """The cascade's entry in the run metadata's judges (its kind and columns, for ResultTable)."""
        kind = "pairwise" if pairwise(self.judges) else "pointwise"
        entry = judge_entry_columns(self.plan.name, kind, self.cascade_assembler(source).column_names)
        return {**entry, "cascade": True, "stages": [j.name for j in self.judges]}

    def describe_plan(self) -> dict[str, Any]:
        """The stages (judge, confidence, threshold), ``abstain`` and the calibration, for the metadata."""
        plan = self.plan
        stages = []
        for number, judge in enumerate(self.judges):
            source = confidence_source_or_none(judge)
            stages.append(
                {
                    "stage": number + 1,
                    "judge": judge.name,
                    "confidence": source.name if source else None,
                    "confidence_description": source.description if source else NO_CONFIDENCE,
                    "threshold": plan.thresholds[number] if plan.thresholded(number) else None,
                    "decides_all_it_sees": not plan.thresholded(number),
                }
            )
        return {"name": plan.name, "stages": stages, "abstain": plan.abstain, "calibration": plan.calibration}


def check_memory_shares(judges: Sequence[Judge]) -> None:
    """Refuse (:class:`ConfigError`, before any model loads) stages on distinct local vLLM engines whose
    memory shares add up to more than :data:`MEMORY_SHARES_AT_MOST`: every stage's engine stays loaded for
    the whole run (rows go from stage to stage a window at a time), so on one device they share its memory.
    """
    from jurist.backends.vllm.params import memory_share

    engines: dict[str, tuple[int, float | None]] = {}
    for number, judge in enumerate(judges, start=1):
        config = judge.engine_config
        if judge.needs_model and config.engine is InferenceEngine.VLLM:
            engines.setdefault(backend_key(config), (number, memory_share(config)))
    shares = list(engines.values())
    if len(shares) < 2 or any(share is None for _, share in shares):
        return
    total = sum(share or 0.0 for _, share in shares)
    if total > MEMORY_SHARES_AT_MOST:
        each = ", ".join(f"stage {number} {share:g}" for number, share in shares)
        raise ConfigError(
            f"the cascade's vLLM engines stay loaded together and would take {total:g} of the device's "
            f"memory ({each}): give each stage its share, adding up to at most {MEMORY_SHARES_AT_MOST:g}, "
            "with inference_config.engine_params.gpu_memory_utilization in its config (e.g. 0.3 for a "
            "small first stage and 0.6 for the last)",
            field="inference_config.engine_params.gpu_memory_utilization",
        )
