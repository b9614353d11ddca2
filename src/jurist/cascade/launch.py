"""Building a cascade run from the command line's pieces: the stages' configs (named apart), the plan with
hand-given or calibrated thresholds, the engine and its batch source."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.cascade.batches import CascadeBatches
from jurist.cascade.calibrate import CalibrationSettings, cache_path, calibrate
from jurist.cascade.engine import CascadeEngine
from jurist.cascade.plan import CascadePlan
from jurist.config.loading import load_judge_config
from jurist.config.models import JudgeConfig
from jurist.engine.core import BackendFactory
from jurist.engine.spec import RunSpec
from jurist.errors import InputError


@dataclass(frozen=True)
class CascadeSettings:
    """How a cascade's thresholds are set: by hand (``thresholds``) or calibrated (``calibration``); and
    whether the last stage abstains below its threshold."""

    thresholds: tuple[float, ...] = ()
    calibration: CalibrationSettings | None = None
    abstain: bool = False


def stage_configs(refs: Sequence[Any], overrides: Mapping[str, Any] | None = None) -> list[JudgeConfig]:
    """The stages' configs, in order; stages that share a judge name are named ``<name>_<stage>``."""
    configs = [load_judge_config(ref, overrides) for ref in refs]
    names = [c.name or "judge" for c in configs]
    return [
        load_judge_config(ref, overrides, name=f"{name}_{number}") if names.count(name) > 1 else config
        for number, (ref, config, name) in enumerate(zip(refs, configs, names, strict=True), start=1)
    ]


def prepare(
    spec: RunSpec,
    settings: CascadeSettings,
    output: Path | None,
    *,
    backend: Any = None,
    backend_factory: BackendFactory | None = None,
) -> tuple[CascadeEngine, CascadeBatches, list[str]]:
    """The engine and batch source of a cascade run of ``spec`` (its judges are the stages), thresholds
    set; calibration judges the labelled rows now. Also returns notes for people."""
    names = tuple(c.name or "judge" for c in spec.judges)
    if settings.thresholds and settings.calibration is not None:
        raise InputError(
            "give thresholds by hand (--threshold) or calibrate them (--calibration-labels), not both"
        )
    if settings.thresholds:
        plan = CascadePlan.by_hand(names, settings.thresholds, abstain=settings.abstain)
    elif settings.calibration is None:
        raise InputError("a cascade needs thresholds: --threshold per stage, or --calibration-labels FILE")
    else:
        plan = CascadePlan(names, (None,) * len(names), settings.abstain)
    engine = CascadeEngine.for_spec(spec, plan, backend, backend_factory=backend_factory)
    notes: list[str] = []
    if settings.calibration is not None:
        cache = cache_path(output) if output is not None else None
        engine.plan, notes = calibrate(engine, spec.rows, settings.calibration, cache)
    return engine, CascadeBatches(engine), notes
