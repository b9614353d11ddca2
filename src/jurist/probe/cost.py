"""What an early-exit head costs per row against its teacher, measured on this machine.

An early-exit student is a head on the judge model's own state after layer k, judged in PROBE on the model
cut there (:mod:`jurist.models.truncate`): it pays for k of the model's layers and decodes nothing, where the
teacher (the same judge in LOGPROBS) pays for every layer and reads its labels. ``jurist probe fit
--max-cost F`` keeps the layers whose PROBE pass costs at most ``F`` times the teacher's LOGPROBS pass per
row. Both are timed through the judge's engine on the same rows, each engine loaded as a run loads it and
warmed on a few rows first (not counted), layer by layer from the shallowest: the first layer over the budget
ends the measurement, as every deeper one costs more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.probe.examples import Examples
from jurist.probe.features import Feature
from jurist.records import EngineUse

COST_ROWS = 32
"""Rows each pass is timed on (after :data:`WARM_ROWS`): enough for the engine to batch as a run does."""
WARM_ROWS = 4


@dataclass(frozen=True)
class Costs:
    """Seconds per row of the teacher (LOGPROBS on the whole model) and of PROBE at each measured layer,
    on the same ``rows`` rows; ``budget`` the largest share of the teacher's cost allowed (None: any)."""

    rows: int
    teacher: float
    layers: dict[int, float]
    budget: float | None

    def ratio(self, layer: int) -> float:
        """A layer's seconds per row over the teacher's."""
        return self.layers[layer] / self.teacher

    @property
    def affordable(self) -> tuple[int, ...]:
        """The measured layers within the budget, shallowest first."""
        return tuple(k for k in sorted(self.layers) if self.budget is None or self.ratio(k) <= self.budget)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "teacher_seconds_per_row": round(self.teacher, 4),
            "by_layer": {
                str(k): {"seconds_per_row": round(s, 4), "of_teacher": round(self.ratio(k), 3)}
                for k, s in sorted(self.layers.items())
            },
            "max_cost": self.budget,
            "within": list(self.affordable),
        }


def measure_costs(
    judge: Judge,
    found: Examples,
    layers: Sequence[int],
    budget: float | None,
    rows: int = COST_ROWS,
    factory: Callable[[Any], Any] | None = None,
    feature: Feature | None = None,
) -> Costs:
    """Time the teacher and PROBE at ``layers`` (shallowest first, stopping past ``budget``) on the first
    ``rows`` example rows (see the module docstring), PROBE reading ``feature`` (default: the last token's
    state). ``factory``: what makes a backend from an inference config (default
    :func:`jurist.backends.create_backend`)."""
    from jurist.backends import create_backend

    if len(found.truth) <= WARM_ROWS:
        raise InputError(f"measuring the cost per row needs more than {WARM_ROWS} labelled rows")
    warm_rows = found.subset(range(WARM_ROWS))
    timed_rows = found.subset(range(WARM_ROWS, min(len(found.truth), WARM_ROWS + rows)))
    warm = [request for row in warm_rows.requests for request in row]
    timed = [request for row in timed_rows.requests for request in row]
    per_row = found.shape.prompts_per_row
    feature = feature or Feature()
    make = factory or create_backend
    config = judge.config.inference_config
    counted = len(timed) // per_row
    teacher = _seconds(make(config.model_copy(update={"use": EngineUse(label_scores=True)})), warm, timed)
    measured: dict[int, float] = {}
    for layer in sorted(set(layers)):
        use = EngineUse.states(layer, feature.pooling)
        backend = make(config.model_copy(update={"use": use}))
        states = feature.requests(warm_rows, layer), feature.requests(timed_rows, layer)
        measured[layer] = _seconds(backend, *states) / counted
        if budget is not None and measured[layer] / (teacher / counted) > budget:
            break
    return Costs(counted, teacher / counted, measured, budget)


def _seconds(backend: Any, warm: Sequence[Any], timed: Sequence[Any]) -> float:
    """Seconds ``backend`` takes to answer ``timed`` after answering ``warm`` (then closed)."""
    from jurist.backends.base import call

    kind = type(timed[0])
    try:
        if warm:
            call(backend, kind, warm)
        began = time.perf_counter()
        call(backend, kind, timed)
        return time.perf_counter() - began
    finally:
        backend.close()
