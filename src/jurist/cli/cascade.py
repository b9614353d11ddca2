"""``jurist judge dataset --cascade A.yaml --cascade B.yaml`` (and ``jurist bench --cascade``): the cascade's
options, and the stages and settings they give (:func:`cascade_from_cli`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jurist.cascade.confidence import confidence_source
from jurist.config.cascade import CalibrationSettings, CascadeSettings, read_cascade_file
from jurist.errors import ConfigError, InputError, JuristError
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource

DEFAULT_TARGET = CalibrationSettings.target
DEFAULT_DELTA = CalibrationSettings.delta

CascadeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cascade",
        help="A cascade stage's judge config, in order (repeat): stage 1 judges every row, a row below its "
        "stage's confidence threshold goes on to the next stage. Or one cascade file (a YAML file whose "
        "only key is cascade: stages, thresholds or calibration, abstain).",
    ),
]
ThresholdOpt = Annotated[
    list[float] | None,
    typer.Option(
        "--threshold", help="A cascade stage's confidence threshold by hand, in stage order (repeat)."
    ),
]
OptionalConfigOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        help="Judge config: a YAML path or a built-in name. Repeat for a panel (or --cascade).",
    ),
]
AbstainOpt = Annotated[
    bool, typer.Option("--abstain", help="Cascade: the last stage abstains below its threshold too.")
]
TargetOpt = Annotated[
    float | None,
    typer.Option(
        "--target-agreement",
        help=f"Cascade: agreement with the labels kept verdicts reach (default {DEFAULT_TARGET}).",
    ),
]
DeltaOpt = Annotated[
    float | None,
    typer.Option(
        "--delta", help=f"Cascade: chance the agreement guarantee may fail (default {DEFAULT_DELTA})."
    ),
]
CALIBRATION = "calibration"
"""The prefix of the cascade's label options (``--calibration-labels``, ``--calibration-verdicts``, ...:
the labelled rows of the input its thresholds are calibrated on; :func:`jurist.cli.options.label_options`)."""


def cascade_from_cli(
    refs: list[str] | None,
    thresholds: list[float] | None,
    abstain: bool,
    target: float | None,
    delta: float | None,
    labels: LabelSource | None,
) -> tuple[list[Any], CascadeSettings] | None:
    """The stages and settings of a cascade: ``--cascade`` per stage with the options, or one cascade file
    (:mod:`jurist.config.cascade`), which then sets thresholds, calibration and abstaining itself. None
    without ``--cascade``."""
    if not refs:
        return None
    if len(refs) == 1:
        described = read_cascade_file(refs[0])
        if described is not None:
            given = [
                name
                for name, value in (
                    ("--threshold", thresholds),
                    ("--abstain", abstain),
                    ("--target-agreement", target is not None),
                    ("--delta", delta is not None),
                    ("the --calibration-* label options", labels),
                )
                if value
            ]
            if given:
                raise InputError(
                    f"the cascade file {refs[0]} sets thresholds, calibration and abstain: "
                    f"drop {', '.join(given)}"
                )
            cal = described.calibration
            calibration = cal.settings() if cal is not None else None
            return list(described.stages), CascadeSettings(
                tuple(described.thresholds), calibration, described.abstain
            )
    target = DEFAULT_TARGET if target is None else target
    delta = DEFAULT_DELTA if delta is None else delta
    calibration = CalibrationSettings(labels, target, delta) if labels is not None else None
    return list(refs), CascadeSettings(tuple(thresholds or ()), calibration, abstain)


def confidence_line(judge: Judge) -> str:
    """What `jurist validate` says of a judge as a cascade stage."""
    try:
        source = confidence_source(judge)
    except (ConfigError, JuristError) as exc:
        return (
            "as a cascade stage: no confidence; it can be the last stage of a cascade without --abstain "
            f"(deciding every row that reaches it), no other ({exc})"
        )
    return f"as a cascade stage: confidence = {source.description} ({source.name})"
