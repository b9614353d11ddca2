"""Oumi-style Python API: ``SimpleJudge(config).judge(rows) -> list[JudgeOutput]``, and Oumi's
``JudgeConfig.from_path``.

A thin layer over :class:`~jurist.engine.core.Engine` for code that judges a list of dicts and wants
:class:`~jurist.judges.outputs.JudgeOutput` objects (``field_values``, ``field_scores``, ``aggregate_score``)
instead of an Arrow table. As Oumi's page says, a row whose answer could not be parsed keeps ``None`` values,
and each call logs one warning per judge naming the likely cause (the answer cut off at ``max_new_tokens``,
a missing field, no JSON object...) with the number of rows.

:class:`JudgeConfig` is :class:`jurist.config.models.JudgeConfig` with Oumi's ``from_path`` (a YAML file, a
built-in name such as ``generic/truthfulness``, or an ``oumi://`` path), so Oumi's override example runs as
written: ``config = JudgeConfig.from_path("generic/truthfulness"); config.judge_params.response_format =
"XML"; SimpleJudge(config)`` (assignments are validated).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.backends.base import Backend
from jurist.config import models
from jurist.config.loading import load_judge_config
from jurist.engine.core import Engine
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput

logger = logging.getLogger("jurist")
UNREAD = ("parse_error", "truncated")


class JudgeConfig(models.JudgeConfig):
    """A judge config (:class:`jurist.config.models.JudgeConfig`) with Oumi's ``from_path``."""

    @classmethod
    def from_path(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> JudgeConfig:
        """The config a YAML/JSON file, a built-in name or an ``oumi://`` path holds (Oumi's keys and
        aliases read as :func:`~jurist.config.loading.load_judge_config` reads them)."""
        loaded = load_judge_config(path, overrides)
        config = cls.model_construct(loaded.model_fields_set, **dict(loaded))  # validated already
        config._source, config._warnings = loaded.source, list(loaded.warnings)
        return config


def _likely_cause(output: JudgeOutput) -> str:
    error = (output.error or "").lower()
    if output.status == "truncated":
        return "cut off at max_new_tokens (raise inference_config.generation.max_new_tokens)"
    if "lacks" in error or "is null" in error:
        return "a field missing from the answer"
    if "no json object" in error or "judgment found" in error or "empty response" in error:
        return "no JSON object (no judgment) in the answer"
    return "a value outside the judgment's type or labels"


def warn_unparsed(name: str, outputs: Sequence[JudgeOutput]) -> None:
    """One warning for a judge whose answers could not all be read: how many rows, and the likely causes."""
    failed = [o for o in outputs if o.status in UNREAD]
    if not failed:
        return
    causes = Counter(_likely_cause(o) for o in failed)
    listed = "; ".join(f"{count} row(s): {cause}" for cause, count in causes.most_common())
    logger.warning(
        "judge %s: %d of %d row(s) could not be parsed, their values are None. Likely cause: %s",
        name,
        len(failed),
        len(outputs),
        listed,
    )


class SimpleJudge:
    """One judge over rows. ``config``: a YAML path, a built-in name, a :class:`JudgeConfig` or a dict.

    ``backend``: the model to use; by default one is created from the config's ``inference_config`` (and
    closed by :meth:`close`).
    """

    def __init__(
        self,
        config: str | Path | models.JudgeConfig | Mapping[str, Any],
        backend: Backend | None = None,
        *,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.compiled = Judge.from_config(config, overrides)
        self._check_kind(self.compiled.config)
        self._engine = Engine([self.compiled], backend, carry_input=False)

    @staticmethod
    def _check_kind(config: models.JudgeConfig) -> None:
        if config.is_rubric:
            raise ConfigError("has rubric_judge_params: use RubricJudge", source=config.source)

    def judge(self, rows: Sequence[Mapping[str, Any]]) -> list[JudgeOutput]:
        """One :class:`~jurist.judges.outputs.JudgeOutput` per row, in order (one warning naming the likely
        cause when some answers could not be parsed)."""
        outputs = self._engine.outputs(rows)[self.compiled.name]
        warn_unparsed(self.compiled.name, outputs)
        return outputs

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
    def _check_kind(config: models.JudgeConfig) -> None:
        if not config.is_rubric:
            raise ConfigError("has no rubric_judge_params: use SimpleJudge", source=config.source)
