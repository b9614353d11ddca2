"""A judge config -> the chat messages sent for one row.

Layout, shared prefix first (what a prefix cache can reuse across rows):

1. ``system``: the system instruction (template variables filled in), the rubric's criteria, and the
   exact output-format instructions of the judge's :class:`~jurist.answer.spec.OutputSpec` (left out with
   ``judge_params.format_instructions: false``, as evaluatorq's jury prompts are);
2. one ``user`` / ``assistant`` pair per few-shot example: the prompt template filled with the example's
   values, and a well-formed answer holding the example's judgment(s) and explanation(s);
3. ``user``: the prompt template filled with the row.

Parts 1 and 2 do not depend on the row (unless the system instruction itself has row placeholders), so
they are byte-identical for every row of a judge.

``template_variables`` fill ``{name}`` and ``{{name}}`` once, when the judge is built. evaluatorq's
``{{criteria}}`` is the judge's criteria, never a column: ``template_variables.criteria``, or for a rubric
judge its criteria list. Bare object names (``{{input}}``...) stay literal, with one warning per judge.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any

from jurist.answer.spec import OutputSpec
from jurist.config.models import JudgeConfig
from jurist.config.templates import Template
from jurist.config.types import JudgmentType
from jurist.errors import ConfigError
from jurist.records import Message
from jurist.render.namespace import NAMESPACE_ROOTS, build_namespace

logger = logging.getLogger("jurist")

CRITERIA = "criteria"


def _criteria_text(config: JudgeConfig) -> str:
    rubric = config.rubric_judge_params
    assert rubric is not None
    lines = ["Judge the response on each of these criteria, separately:"]
    for number, c in enumerate(rubric.criteria, 1):
        if c.judgment_type is JudgmentType.BOOL:
            kind = "Yes or No"
        elif c.judgment_type is JudgmentType.ENUM:
            kind = "one of " + ", ".join(c.judgment_scores or ())
        elif c.judgment_type is JudgmentType.INT:
            kind = "one of " + ", ".join(c.judgment_scores) if c.judgment_scores else "an integer"
        elif c.judgment_type is JudgmentType.FLOAT:
            kind = "a number"
        else:
            kind = "text"
        lines.append(f"{number}. {c.id} ({kind}): {c.description.strip()}")
    return "\n".join(lines)


class PromptBuilder:
    """Renders a judge's messages for rows. Built once per judge; immutable afterwards."""

    def __init__(self, config: JudgeConfig, spec: OutputSpec) -> None:
        jp = config.judge_params
        variables = dict(jp.template_variables)
        if CRITERIA not in variables and config.rubric_judge_params is not None:
            variables[CRITERIA] = _criteria_text(config)
        self.user_template = Template(jp.prompt_template).substitute(variables)
        system_parts = []
        if jp.system_instruction and jp.system_instruction.strip():
            # as written when nothing follows it (evaluatorq's prompts, byte for byte), else trimmed
            alone = not jp.format_instructions and config.rubric_judge_params is None
            system_parts.append(jp.system_instruction if alone else jp.system_instruction.strip())
        if config.rubric_judge_params is not None:
            system_parts.append(_criteria_text(config))
        if jp.format_instructions:
            system_parts.append(spec.instructions())
        system = "\n\n".join(system_parts)
        self.system_template = Template(system).substitute(variables)
        self._check_namespace(config)
        # only {{dotted.path}} placeholders and the input/output/log roots read the derived namespace
        self._reads_namespace = any(
            p.dotted or p.root in NAMESPACE_ROOTS
            for t in (self.system_template, self.user_template)
            for p in t.placeholders
        )
        self.reads_roots = any(
            p.root in NAMESPACE_ROOTS
            for t in (self.system_template, self.user_template)
            for p in t.placeholders
        )
        """Whether a placeholder reads the ``input``, ``output`` or ``log`` root (derived families)."""
        shots: list[Message] = []
        for example in jp.examples:
            shots.append(Message("user", self.user_template.render_lenient(build_namespace(example))))
            shots.append(Message("assistant", spec.render_answer(example)))
        self.examples: tuple[Message, ...] = tuple(shots)

    def _check_namespace(self, config: JudgeConfig) -> None:
        templates = (self.system_template, self.user_template)
        if any(p.dotted and p.path == (CRITERIA,) for t in templates for p in t.placeholders):
            raise ConfigError(
                "{{criteria}} is the judge's criteria, and this judge has none: set "
                "judge_params.template_variables.criteria (or use a rubric)",
                source=config.name or "<python>",
                field="judge_params.prompt_template",
            )
        unread = list(dict.fromkeys(text for t in templates for text in t.unread))
        if unread:
            logger.warning(
                "judge %s: %s stay literal text in the prompt: a path's list index is written [0] or [-1] "
                "(no spaces), e.g. {{input.all_messages[-1].content}}",
                config.name or "<python>",
                ", ".join(unread),
            )
        literals = list(dict.fromkeys(text for t in templates for text in t.literals))
        if literals:
            logger.warning(
                "judge %s: %s name an object, not a value, and stay literal text in the prompt "
                "(use a dotted path such as {{input.all_messages}} or {{response_a.output.response}})",
                config.name or "<python>",
                ", ".join(literals),
            )

    @property
    def required_fields(self) -> set[str]:
        """Root names the rendered prompt reads from a row."""
        return self.user_template.names | self.system_template.names

    def render(self, row: Mapping[str, Any], notes: list[str] | None = None) -> tuple[Message, ...]:
        """The messages for one row (:class:`~jurist.config.templates.MissingValue` for a missing field)."""
        namespace = build_namespace(row) if self._reads_namespace else row
        system = self.system_template.render(namespace, notes)
        user = self.user_template.render(namespace, notes)
        return (Message("system", system), *self.examples, Message("user", user))

    def fingerprint(self) -> str:
        """A short hash of the prompt as the judge defines it (templates and few-shot turns)."""
        payload = {
            "system": self.system_template.text,
            "user": self.user_template.text,
            "examples": [m.as_dict() for m in self.examples],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
