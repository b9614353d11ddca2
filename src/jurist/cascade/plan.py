"""A cascade's stages and thresholds: :class:`CascadePlan`, frozen and part of a run's fingerprint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jurist.errors import InputError

CASCADE = "cascade"


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
