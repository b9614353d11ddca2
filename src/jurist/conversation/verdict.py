"""A conversation judge's verdict (pipecat's ``JudgeVerdict``), read from a judge's output.

``verdict`` is ``"yes"`` (the reply satisfies the criterion), ``"no"`` (a substantive reply that fails it)
or ``"continue"`` (interim, filler or incomplete: judge again when more text arrives), the three verdicts
pipecat's harness acts on. A judgment that could not be had (an answer that does not parse, a truncated
answer, an engine error) is a ``"no"``, as pipecat makes it, so a harness that reads only ``verdict`` fails
the assertion; it stays told apart from a real "no": ``failure`` holds what went wrong, ``status`` jurist's
status of the call (``parse_error``, ``truncated``, ``too_long``, ``backend_error``...), ``reason`` says
``judge call failed: ...`` and ``raw_response`` holds whatever the model wrote. ``passed`` is True only for
a definite ``"yes"``; ``ok`` is True only for a verdict the model gave.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurist.judges.outputs import JudgeOutput

YES, NO, CONTINUE = "yes", "no", "continue"
VERDICTS = (YES, NO, CONTINUE)
FAILED = "judge call failed"


@dataclass(frozen=True)
class JudgeVerdict:
    """Outcome of one judge call: ``verdict``, a one-sentence ``reason`` and the model's ``raw_response``
    (for diagnostics); ``status`` is jurist's status of the call (``ok`` for a verdict the model gave) and
    ``failure`` what made a failed judgment fail (None when the model gave a verdict)."""

    verdict: str
    reason: str
    raw_response: str
    status: str = "ok"
    failure: str | None = None

    @property
    def passed(self) -> bool:
        """True only when the verdict is a definite ``"yes"``."""
        return self.status == "ok" and self.verdict == YES

    @property
    def ok(self) -> bool:
        """Whether the model gave a verdict (yes, no or continue) that was read."""
        return self.status == "ok"


def failed_verdict(status: str, failure: str, raw: str = "") -> JudgeVerdict:
    """The verdict of a judgment that could not be had: a ``"no"`` carrying the failure."""
    return JudgeVerdict(NO, f"{FAILED}: {failure}", raw, status, failure)


def verdict_from_output(output: JudgeOutput) -> JudgeVerdict:
    """The verdict of one judge output: its judgment (an ENUM label, lowercased; a BOOL judgment is yes or
    no) and explanation, or a failed judgment (:func:`failed_verdict`) carrying the output's status and
    error."""
    raw = output.raw or ""
    if not output.ok:
        return failed_verdict(output.status, output.error or output.status, raw)
    judgment = output.field_values.get("judgment")
    label = (YES if judgment else NO) if isinstance(judgment, bool) else str(judgment).strip().lower()
    reason = output.field_values.get("explanation")
    return JudgeVerdict(label, "" if reason is None else str(reason), raw)
