"""Checks of a config that need to know the answer formats or the renderer, run when a judge is compiled
(:class:`~jurist.judges.judge.Judge`): the config layer below knows neither.

:func:`check_config` raises :class:`~jurist.errors.ConfigError` for what cannot work (a rubric in a format
that cannot delimit one judgment per criterion, a scoring mode's own refusals); :func:`compile_warnings`
lists what is legal but suspicious, one sentence each, beside the config's own warnings.
"""

from __future__ import annotations

from jurist.answer.formats import answer_format
from jurist.config.models import JudgeConfig
from jurist.config.templates import Template, lookup
from jurist.config.types import ResponseFormat
from jurist.errors import ConfigError
from jurist.render.namespace import build_namespace
from jurist.scoring import problem_with as scoring_problem


def check_config(config: JudgeConfig) -> None:
    """Raise a :class:`ConfigError` naming the file and key for a config no judge can run (its scoring mode's
    check included: :func:`jurist.scoring.problem_with`)."""
    jp = config.judge_params
    problem = scoring_problem(config)
    if problem is not None:
        raise ConfigError(problem, source=config.source, field="judge_params.scoring")
    if config.rubric_judge_params is not None and not answer_format(jp.response_format).delimits_fields:
        able = [kind.value for kind in ResponseFormat if answer_format(kind).delimits_fields]
        raise ConfigError(
            f"{jp.response_format.value} cannot delimit one judgment per criterion; a rubric judge needs "
            f"{', '.join(able[:-1])} or {able[-1]}",
            source=config.source,
            field="judge_params.response_format",
        )


def compile_warnings(config: JudgeConfig) -> list[str]:
    """What is legal but suspicious in how a config's answers are held and its examples rendered."""
    jp = config.judge_params
    warnings: list[str] = []
    if answer_format(jp.response_format).constrained and not jp.use_guided_decoding:
        warnings.append(
            "use_guided_decoding is off: rows the model answers in the wrong shape get parse_error"
        )
    template = Template(jp.prompt_template)
    for index, example in enumerate(jp.examples):
        namespace = build_namespace(example)
        missing = sorted(
            {
                p.text
                for p in template.placeholders
                if not (not p.dotted and p.root in jp.template_variables)
                and lookup(namespace, p.path) is None
            }
        )
        if missing:
            warnings.append(
                f"judge_params.examples[{index}] gives no value for {', '.join(missing)}; "
                "it renders as an empty string in that example"
            )
    return warnings
