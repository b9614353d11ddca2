"""A cascade in one file: ``jurist judge dataset --cascade cascade.yaml`` (and ``jurist bench``).

.. code-block:: yaml

    cascade:
      stages: [small.yaml, big.yaml]   # judge configs in order: paths (relative to this file), built-in
                                       # names, or configs written inline
      thresholds: [0.85]               # by hand: one per stage but the last (one per stage with abstain)
      # or calibrated on labelled rows of the input (paths relative to this file; or verdicts: a
      # results file whose verdicts are the labels, with verdict_judge):
      # calibration: {labels: labelled.jsonl, target_agreement: 0.9, delta: 0.1}
      abstain: false

A file whose only top-level key is ``cascade`` is a cascade file; any other YAML given to ``--cascade`` is
a stage's judge config.

Here too: how a run's cascade sets its thresholds (:class:`CascadeSettings`, part of the run spec) and the
stages and thresholds it runs with (:class:`CascadePlan`, part of the run's fingerprint).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from jurist.config.loading import format_validation_error, load_judge_config, read_yaml
from jurist.config.models import JudgeConfig
from jurist.config.types import StrictModel
from jurist.errors import ConfigError, InputError
from jurist.labels.source import LabelSource

CASCADE_KEY = "cascade"
CASCADE = "cascade"
"""A cascade's name: its columns' prefix."""


class CascadeCalibration(StrictModel):
    """Thresholds calibrated on labelled rows of the input (``--calibration-labels`` and its options): the
    labels as :class:`~jurist.labels.source.LabelSource` takes them."""

    labels: str | None = Field(
        default=None, description="The labelled rows: a file jurist reads, relative to the cascade file."
    )
    target_agreement: float = Field(default=0.9, gt=0.0, lt=1.0)
    """The agreement with the labels kept verdicts must reach."""
    delta: float = Field(default=0.1, gt=0.0, lt=1.0)
    """The chance the guarantee may fail."""
    label_column: str | None = None
    labels_id_column: str | None = None
    label_map: str | None = None
    verdicts: str | None = None
    verdict_judge: str | None = None
    """The label column, the labels file's id column, a label map (``1=a,2=b``), or a results file whose
    verdicts are the labels (relative to the cascade file) and its judge: as ``--calibration-label-column``,
    ``--calibration-labels-id-column``, ``--calibration-label-map``, ``--calibration-verdicts`` and
    ``--calibration-verdict-judge`` take them."""

    def settings(self) -> CalibrationSettings:
        """The settings a run calibrates with (an :class:`InputError` for labels options that clash)."""
        source = LabelSource(
            Path(self.labels) if self.labels else None,
            self.label_column,
            self.labels_id_column,
            self.label_map,
            Path(self.verdicts) if self.verdicts else None,
            self.verdict_judge,
        )
        return CalibrationSettings(source, self.target_agreement, self.delta)


class CascadeConfig(StrictModel):
    """A cascade: its stages in order, and thresholds by hand or calibrated."""

    stages: list[str | dict[str, Any]] = Field(min_length=2)
    """The stages' judge configs, in order: paths, built-in names or inline configs."""
    thresholds: list[float] = Field(default_factory=list)
    """Confidence thresholds by hand, in stage order."""
    calibration: CascadeCalibration | None = None
    """Calibrate the thresholds on labelled rows instead."""
    abstain: bool = False
    """The last stage abstains below its threshold too."""

    @model_validator(mode="after")
    def _one_way_to_thresholds(self) -> CascadeConfig:
        if self.thresholds and self.calibration is not None:
            raise ValueError("give thresholds or calibration, not both")
        if not self.thresholds and self.calibration is None:
            raise ValueError("give thresholds (one per stage but the last) or calibration")
        return self


class CascadeFile(StrictModel):
    """A cascade file's top level."""

    cascade: CascadeConfig


def read_cascade_file(ref: str | Path) -> CascadeConfig | None:
    """The cascade a file describes, its relative paths resolved against the file's folder; None when
    ``ref`` is not a YAML file whose only top-level key is ``cascade`` (then it is a stage's judge config)."""
    path = Path(ref)
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return None
    data = read_yaml(path, CASCADE_KEY)
    if set(data) != {CASCADE_KEY}:
        if CASCADE_KEY in data:
            others = ", ".join(sorted(k for k in data if k != CASCADE_KEY))
            raise ConfigError(
                f"a cascade file holds only the key cascade; also found {others}", source=str(path)
            )
        return None
    try:
        config = CascadeFile.model_validate(data).cascade
    except ValidationError as exc:
        raise format_validation_error(exc, str(path), CascadeFile) from None
    folder = path.parent

    def near(value: str) -> str:
        beside = folder / value
        return str(beside) if not Path(value).is_absolute() and beside.exists() else value

    stages = [near(s) if isinstance(s, str) else s for s in config.stages]
    calibration = config.calibration
    if calibration is not None:
        files = {k: near(v) for k in ("labels", "verdicts") if (v := getattr(calibration, k)) is not None}
        calibration = calibration.model_copy(update=files)
    return config.model_copy(update={"stages": stages, "calibration": calibration})


@dataclass(frozen=True)
class CalibrationSettings:
    """``labels``: where the labelled rows' labels come from; ``target``: the agreement kept verdicts must
    reach; ``delta``: the chance the guarantee may fail."""

    labels: LabelSource
    target: float = 0.9
    delta: float = 0.1


@dataclass(frozen=True)
class CascadePlan:
    """Stage ``k`` (0-based) is the judge ``stages[k]``; it keeps a row's verdict when the row's confidence
    is at least ``thresholds[k]`` (None: it keeps nothing) and sends the row on otherwise. The last stage
    decides every row that reaches it, unless ``abstain``: then its threshold applies too and the rows below
    it get status ``abstained``. ``calibration``: how the thresholds were chosen (for the metadata); ``name``:
    the cascade's columns' prefix."""

    stages: tuple[str, ...]
    thresholds: tuple[float | None, ...]
    abstain: bool = False
    calibration: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    name: str = CASCADE

    def __post_init__(self) -> None:
        if len(self.stages) < 2:
            raise InputError("a cascade needs at least two stages (--cascade A.yaml --cascade B.yaml)")
        if len(self.thresholds) != len(self.stages):
            raise InputError(f"{len(self.thresholds)} thresholds for {len(self.stages)} cascade stages")

    @classmethod
    def by_hand(cls, stages: Sequence[str], thresholds: Sequence[float], *, abstain: bool) -> CascadePlan:
        """Hand-given thresholds: one per stage but the last (and the last too with ``abstain``)."""
        wanted = len(stages) if abstain else len(stages) - 1
        if len(thresholds) != wanted:
            raise InputError(
                f"give {wanted} --threshold value(s) for {len(stages)} stages"
                + (" with --abstain (one per stage)" if abstain else " (one per stage but the last)")
            )
        for value in thresholds:
            if not 0.0 <= value <= 1.0:
                raise InputError(f"a threshold is a confidence between 0 and 1, not {value}")
        full = [*thresholds, *([] if abstain else [None])]
        return cls(tuple(stages), tuple(full), abstain, {"method": "by hand"})

    def thresholded(self, stage: int) -> bool:
        """Whether the stage's threshold applies (every stage but the last, and the last with abstain)."""
        return self.abstain or stage < len(self.stages) - 1

    def keeps(self, stage: int, confidence: float | None) -> bool:
        """Whether stage ``stage`` keeps a verdict of this confidence."""
        if not self.thresholded(stage):
            return True
        threshold = self.thresholds[stage]
        return threshold is not None and confidence is not None and confidence >= threshold

    def decisive(self) -> dict[str, Any]:
        """What of the plan decides results (added to the run's fingerprint)."""
        return {"stages": list(self.stages), "thresholds": list(self.thresholds), "abstain": self.abstain}


@dataclass(frozen=True)
class CascadeSettings:
    """How a cascade's thresholds are set: by hand (``thresholds``) or calibrated (``calibration``); and
    whether the last stage abstains below its threshold. ``calibrated``: the plan calibration chose (set by
    the run's front door, :func:`jurist.launch.launch`, before the run starts)."""

    thresholds: tuple[float, ...] = ()
    calibration: CalibrationSettings | None = None
    abstain: bool = False
    calibrated: CascadePlan | None = None

    def plan(self, stages: Sequence[str]) -> CascadePlan:
        """The plan of a cascade of these stages: the hand-given thresholds, the calibrated plan, or (before
        calibration) one that keeps nothing, for calibration to judge with."""
        if self.thresholds and self.calibration is not None:
            raise InputError(
                "give thresholds by hand (--threshold) or calibrate them (--calibration-labels), not both"
            )
        if self.thresholds:
            return CascadePlan.by_hand(tuple(stages), self.thresholds, abstain=self.abstain)
        if self.calibration is None:
            raise InputError(
                "a cascade needs thresholds: --threshold per stage, or --calibration-labels FILE"
            )
        if self.calibrated is not None:
            return self.calibrated
        return CascadePlan(tuple(stages), (None,) * len(stages), self.abstain)

    @property
    def pending(self) -> bool:
        """Whether the thresholds are still to be calibrated."""
        return self.calibration is not None and not self.thresholds and self.calibrated is None


def stage_configs(refs: Sequence[Any], overrides: Mapping[str, Any] | None = None) -> list[JudgeConfig]:
    """The stages' configs, in order; stages that share a judge name are named ``<name>_<stage>``."""
    configs = [load_judge_config(ref, overrides) for ref in refs]
    names = [c.name or "judge" for c in configs]
    return [
        load_judge_config(ref, overrides, name=f"{name}_{number}") if names.count(name) > 1 else config
        for number, (ref, config, name) in enumerate(zip(refs, configs, names, strict=True), start=1)
    ]
