"""A cascade in one file: ``jurist judge dataset --cascade cascade.yaml`` (and ``jurist bench``).

.. code-block:: yaml

    cascade:
      stages: [small.yaml, big.yaml]   # judge configs in order: paths (relative to this file), built-in
                                       # names, or configs written inline
      thresholds: [0.85]               # by hand: one per stage but the last (one per stage with abstain)
      # or calibrated on labelled rows of the input (paths relative to this file):
      # calibration: {labels: labelled.jsonl, target_agreement: 0.9, delta: 0.1}
      abstain: false

A file whose only top-level key is ``cascade`` is a cascade file; any other YAML given to ``--cascade`` is
a stage's judge config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from jurist.config.loading import format_validation_error, read_yaml
from jurist.config.types import StrictModel
from jurist.errors import ConfigError

CASCADE_KEY = "cascade"


class CascadeCalibration(StrictModel):
    """Thresholds calibrated on labelled rows of the input (``--calibration-labels`` and its options)."""

    labels: str = Field(description="The labelled rows: a file jurist reads, relative to the cascade file.")
    target_agreement: float = Field(default=0.9, gt=0.0, lt=1.0)
    """The agreement with the labels kept verdicts must reach."""
    delta: float = Field(default=0.1, gt=0.0, lt=1.0)
    """The chance the guarantee may fail."""
    label_column: str = "label"
    """The labels file's label column."""


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
        calibration = calibration.model_copy(update={"labels": near(calibration.labels)})
    return config.model_copy(update={"stages": stages, "calibration": calibration})
