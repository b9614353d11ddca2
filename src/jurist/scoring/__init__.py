"""Scoring modes: one object per ``judge_params.scoring`` (:mod:`jurist.scoring.base` says what a mode owns).

:data:`MODES` is the one table of them: a new mode is a :class:`~jurist.config.types.ScoringMode` member, a
:class:`~jurist.scoring.base.Scoring` subclass and its entry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from jurist.config.models import JudgeConfig
from jurist.config.types import ScoringMode
from jurist.scoring.base import Scoring
from jurist.scoring.modes import Generate, Logprobs
from jurist.scoring.probe import Probe

__all__ = ["MODES", "Scoring", "problem_with", "scoring_for"]

MODES: Mapping[ScoringMode, type[Scoring]] = MappingProxyType(
    {ScoringMode.GENERATE: Generate, ScoringMode.LOGPROBS: Logprobs, ScoringMode.PROBE: Probe}
)


def problem_with(config: JudgeConfig) -> str | None:
    """What is wrong with a config's scoring (None: nothing): a key another mode reads, or its own mode's
    check (:meth:`~jurist.scoring.base.Scoring.problem_with`)."""
    chosen = config.judge_params.scoring
    for mode, kind in MODES.items():
        given = [key for key in kind.keys if mode is not chosen and getattr(config.judge_params, key)]
        if given:
            name = mode.value
            return f"judge_params.{given[0]} is read in scoring {name} only: set judge_params.scoring {name}"
    return MODES[chosen].problem_with(config)


def scoring_for(config: JudgeConfig) -> Scoring:
    """The scoring mode object of a config (checked by :func:`problem_with` first)."""
    return MODES[config.judge_params.scoring](config)
