"""A conversation judge's verdict (pipecat's ``JudgeVerdict``), read from a judge's output.

``verdict`` is ``"yes"`` (the reply satisfies the criterion), ``"no"`` (a substantive reply that fails it)
or ``"continue"`` (interim, filler or incomplete: judge again when more text arrives). A judgment that
could not be had (an answer that does not parse, a truncated answer, an engine error, a conversation
with no reply) is never turned into ``"no"``: its verdict is ``"error"``, ``status`` says which jurist
status it was (``parse_error``, ``truncated``, ``too_long``, ``backend_error``, ``missing_input``,
``bad_input``), ``reason`` says why and ``raw_response`` holds whatever the model wrote. ``passed`` is
True only for a definite ``"yes"``, so code that tests ``passed`` treats such a verdict as not passed;
code that wants to tell the two apart reads ``ok`` or ``status``.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurist.judges.outputs import JudgeOutput

YES, NO, CONTINUE, ERROR = "yes", "no", "continue", "error"
VERDICTS = (YES, NO, CONTINUE)


@dataclass(frozen=True)
class JudgeVerdict:
    """Outcome of one judge call: ``verdict``, a one-sentence ``reason`` and the model's ``raw_response``
    (for diagnostics); ``status`` is jurist's status of the call (``ok`` for a verdict the model gave)."""

    verdict: str
    reason: str
    raw_response: str
    status: str = "ok"

    @property
    def passed(self) -> bool:
        """True only when the verdict is a definite ``"yes"``."""
        return self.status == "ok" and self.verdict == YES

    @property
    def ok(self) -> bool:
        """Whether the model gave a verdict (yes, no or continue) that was read."""
        return self.status == "ok"


def verdict_from_output(output: JudgeOutput) -> JudgeVerdict:
    """The verdict of one judge output: its judgment (an ENUM label, lowercased; a BOOL judgment is yes or
    no) and explanation, or an ``"error"`` verdict carrying the output's status and error."""
    raw = output.raw or ""
    if not output.ok:
        return JudgeVerdict(ERROR, output.error or output.status, raw, output.status)
    judgment = output.field_values.get("judgment")
    label = (YES if judgment else NO) if isinstance(judgment, bool) else str(judgment).strip().lower()
    reason = output.field_values.get("explanation")
    return JudgeVerdict(label, "" if reason is None else str(reason), raw)
