"""Checks a run makes before its first row is queued: every judge's constraint compiles with the grammar
backend the run will use (and the run's options that the command line passes as text are valid).

For each judge that needs a model and decodes guided, the constraint its engine will receive is compiled
by that engine's grammar backend, as the engine table says (:class:`jurist.backends.registry.GrammarCheck`,
with :mod:`jurist.backends.grammar_check`): vLLM's structured-output backend for VLLM
(``engine_params.structured_outputs_backend``, default guidance), outlines-core for NATIVE.
Remote servers compile their own, with settings jurist cannot see: they are not checked. A constraint the
backend refuses is a :class:`~jurist.errors.ConfigError` naming the judge and the field at fault, raised
before any model loads. When the engine's libraries are not installed there is nothing to check here (the
backend itself then says what to install).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from jurist.backends.parallel.pool import split_config
from jurist.backends.registry import ENGINES, Compile, GrammarCheck
from jurist.errors import ConfigError, JuristError
from jurist.judges.judge import Judge
from jurist.records import ConstraintKind


def _compiler(judge: Judge) -> GrammarCheck | None:
    """How the judge's engine compiles its constraint (the engine table's entry says; None: not checked)."""
    config = split_config(judge.config.inference_config)[0]  # jurist's data_parallel is no engine's key
    entry = ENGINES.get(config.engine)
    return entry.grammar(config) if entry is not None and entry.grammar is not None else None


def check_constraints(judges: Sequence[Judge]) -> None:
    """Compile every judge's constraint with its run's grammar backend; raise :class:`ConfigError` naming the
    judge and field of the first one refused."""
    for judge in judges:
        if not judge.needs_model or not judge.spec.guided:
            continue
        compiler = _compiler(judge)
        if compiler is None:
            continue
        label, kinds, compile_ = compiler.label, compiler.kinds, compiler.compile
        try:
            constraint = judge.spec.constraint(kinds)
            problem = compile_(constraint) if constraint is not None else None
        except (ValueError, UnicodeError) as exc:
            problem = f"the constraint cannot be built: {exc}"
        if problem is None:
            continue
        raise ConfigError(
            f"{label} cannot compile the answer constraint of {_culprit(judge, kinds, compile_)}: {problem}. "
            "Change that field (its labels or length), choose another backend "
            "(inference_config.engine_params.structured_outputs_backend on VLLM), or set "
            "judge_params.use_guided_decoding: false",
            source=str(judge.config.source) if judge.config.source else None,
            field=f"judge {judge.name!r}",
        )


def _culprit(judge: Judge, kinds: tuple[ConstraintKind, ...], compile_: Compile) -> str:
    """The field whose own constraint is refused, else the answer as a whole."""
    spec = judge.spec
    for field in spec.fields:
        try:
            alone = replace(spec, fields=(field,)).constraint(kinds)
            if alone is not None and compile_(alone) is not None:
                return f"field {field.name!r}"
        except (ValueError, UnicodeError, JuristError):
            return f"field {field.name!r}"
    return "the answer (no field alone is refused: their combination is)"
