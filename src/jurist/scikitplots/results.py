"""What one ``LLMJudge`` call returns, and what it raises when a judgement fails.

A :class:`JudgeResult` always has a float ``score``: NaN when the metric is undefined for the inputs
(``reason`` says why; this is not a failure) or when the judgement failed (``error`` says why, under
``on_error="record"``). ``details`` holds the metric's counts and verdicts (None when it failed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jurist.errors import JuristError
from jurist.judges.outputs import JudgeOutput

OnError = Literal["raise", "record"]
ON_ERROR: tuple[OnError, ...] = ("raise", "record")


@dataclass(frozen=True)
class JudgeResult:
    """One judgement: ``score`` in [0, 1] or NaN, ``details`` by name, ``error`` (a failed judgement) or
    ``reason`` (an undefined score), the ``status`` a results table would show, raw answers, tokens."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    reason: str | None = None
    metric: str = ""
    status: str = "ok"
    raw: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def ok(self) -> bool:
        """The judgement ran (its score may still be undefined: see ``reason``)."""
        return self.error is None

    @property
    def defined(self) -> bool:
        return not math.isnan(self.score)

    @classmethod
    def from_output(cls, metric: str, output: JudgeOutput, details: Sequence[str]) -> JudgeResult:
        """A result from a judge's output for one row (``details``: the names of its detail values)."""
        values = {name: output.field_values.get(name) for name in details}
        failed = not output.ok
        error = f"{output.status}: {output.error}" if failed else None
        return cls(
            score=math.nan if output.score is None else float(output.score),
            details=values,
            error=error,
            reason=None if failed else output.field_values.get("undefined"),
            metric=metric,
            status=output.status,
            raw=output.raw,
            prompt_tokens=output.prompt_tokens or 0,
            completion_tokens=output.completion_tokens or 0,
        )


class JudgementError(JuristError, RuntimeError):
    """A judgement failed (a provider error, a cut-off completion, an invalid verdict) under
    ``on_error="raise"``; ``result`` is what ``on_error="record"`` would have returned."""

    def __init__(self, result: JudgeResult) -> None:
        self.result = result
        super().__init__(f"{result.metric} failed: {result.error}")
