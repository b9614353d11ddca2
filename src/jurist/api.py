"""Oumi-style Python API: ``SimpleJudge(config).judge(rows) -> list[JudgeOutput]``.

A thin layer over :class:`~jurist.engine.core.Engine` for code that judges a list of dicts and wants
:class:`~jurist.judges.outputs.JudgeOutput` objects (``field_values``, ``field_scores``, ``aggregate_score``)
instead of an Arrow table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.backends.base import Backend
from jurist.config.models import JudgeConfig
from jurist.engine.core import Engine
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput


class SimpleJudge:
    """One judge over rows. ``config``: a YAML path, a built-in name, a :class:`JudgeConfig` or a dict.

    ``backend``: the model to use; by default one is created from the config's ``inference_config`` (and
    closed by :meth:`close`).
    """

    def __init__(
        self,
        config: str | Path | JudgeConfig | Mapping[str, Any],
        backend: Backend | None = None,
        *,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.compiled = Judge.from_config(config, overrides)
        self._check_kind(self.compiled.config)
        self._engine = Engine([self.compiled], backend, carry_input=False)

    @staticmethod
    def _check_kind(config: JudgeConfig) -> None:
        if config.is_rubric:
            raise ConfigError("has rubric_judge_params: use RubricJudge", source=config.source)

    def judge(self, rows: Sequence[Mapping[str, Any]]) -> list[JudgeOutput]:
        """One :class:`~jurist.judges.outputs.JudgeOutput` per row, in order."""
        return self._engine.outputs(rows)[self.compiled.name]

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> SimpleJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RubricJudge(SimpleJudge):
    """A rubric judge (a config with ``rubric_judge_params``): one judgment per criterion, plus
    ``aggregate_score``."""

    @staticmethod
    def _check_kind(config: JudgeConfig) -> None:
        if not config.is_rubric:
            raise ConfigError("has no rubric_judge_params: use SimpleJudge", source=config.source)
