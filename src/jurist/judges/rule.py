"""Rule-based judges (Oumi's ``rule_judge_params``): a deterministic rule, no model, no request.

The ``regex`` rule reads the text of ``rule_config.input_field`` and passes when ``pattern`` is found
(``match_mode`` ``search``), matches at the start (``match``) or matches the whole text (``fullmatch``),
or, with ``inverse``, when it is not. As in Oumi, the judgment is True or False, its score 1.0 or 0.0,
and the raw output reads ``judgment: True``. Columns: ``j.judgment`` (bool), ``j.judgment_score``,
``j.raw``, then the generic ones (``j.score`` is the judgment's score).

Every field in ``input_fields`` (and the rule's ``input_field``) must have a value: a row that lacks one,
or holds null there, gets ``missing_input`` naming the field (Oumi stops the whole batch instead). A value
that is not text is matched against its text form (numbers as written, lists and objects as JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import pyarrow as pa

from jurist.config.rules import RuleJudgeParams
from jurist.config.templates import MissingValue
from jurist.judges.base import JudgeKind, Step
from jurist.judges.columns import RAW_COLUMN, Column, field_column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.records import ConstraintKind

RULE_MODEL = "rule"
"""What a rule judge's ``j.model`` column says: no model judged the row."""
JUDGMENT = "judgment"


class RuleJudge(JudgeKind):
    """A judge that applies a rule to each row (Oumi's ``RuleBasedJudge``)."""

    kind_name = "rule"
    parts_used = ()  # it sends no prompt and reads no answer
    section = "rule_judge_params"

    def __init__(self, parts: JudgeParts) -> None:
        super().__init__(parts)
        assert self.config.rule_judge_params is not None
        self.params: RuleJudgeParams = self.config.rule_judge_params
        rule = self.params.regex
        self.field = rule.input_field
        self.pattern = re.compile(rule.pattern, rule.flags)
        self.match_mode = rule.match_mode
        self.inverse = rule.inverse
        fields = [*self.params.input_fields, self.field]
        self._reads = tuple(dict.fromkeys(fields))  # in order, once each

    label = "rule"
    needs_model = False

    def describe(self) -> list[str]:
        """The rule and what comes out: no model, no prompt."""
        return [
            f"rule {self.params.rule_type}: {json.dumps(self.params.rule_config)}; no model, no prompt",
            "output fields:",
            f"  {JUDGMENT}: BOOL (True when the rule passes; score 1.0 / 0.0)",
        ]

    @property
    def generates(self) -> bool:
        """Vacuously true: a rule judge sends no request, so the judges it runs with keep streaming."""
        return True

    @property
    def required_fields(self) -> set[str]:
        return set(self._reads)

    @property
    def prompt_hash(self) -> str:
        payload = {"rule": self.params.rule_type, "config": self.params.rule_config, "reads": self._reads}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def schema_hash(self) -> str:
        return hashlib.sha256(json.dumps({JUDGMENT: "BOOL"}).encode()).hexdigest()[:16]

    def passes(self, text: str) -> bool:
        """Whether the rule passes on ``text``."""
        matched = getattr(self.pattern, self.match_mode)(text) is not None
        return matched != self.inverse

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        for name in self._reads:
            if row.get(name) is None:
                raise MissingValue(name)
        output = self.verdict(self.passes(_text(row[self.field])))
        return Step((), lambda _answers: output)

    def verdict(self, passed: bool) -> JudgeOutput:
        score = 1.0 if passed else 0.0
        return JudgeOutput(
            "ok",
            {JUDGMENT: passed},
            {JUDGMENT: score},
            None,
            score,
            raw=f"{JUDGMENT}: {passed}",
            prompt_tokens=0,
            completion_tokens=0,
        )

    def failure(self, status: Status, error: str) -> JudgeOutput:
        if status == "target_error":
            error = f"the target errored: {error}"
        return JudgeOutput(status, {JUDGMENT: None}, {JUDGMENT: None}, error=error)

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        score = Column(f"{JUDGMENT}_score", pa.float64(), lambda o, _p: o.field_scores.get(JUDGMENT))
        return (field_column(JUDGMENT, "bool"), score, RAW_COLUMN)


def _text(value: Any) -> str:
    """A value as the text a rule reads: strings as they are, lists and objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return json.dumps(value) if isinstance(value, bool) else str(value)
