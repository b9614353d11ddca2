"""Compiling a constraint the way the engine's grammar backend will, before any model loads.

An engine checks a request's constraint only when the request reaches it, so a constraint its grammar
backend cannot take would fail every row of a run, one by one, after the model has loaded.

* :func:`vllm_problem` runs the compilers vLLM runs for its structured-output backends ``guidance``
  (llguidance, on the grammar :func:`guidance_grammar` builds as vLLM does), ``xgrammar`` and ``outlines``
  (outlines-core's regex rules), without a tokenizer, plus vLLM's own refusal of a NUL character in a
  regex; ``auto`` is xgrammar, falling back to guidance, as in vLLM. guidance, the default, needs only
  llguidance, so ``jurist validate`` takes about a second with it; xgrammar and outlines call vLLM's own
  helpers, whose modules load torch first (about ten seconds more).
* :func:`outlines_core_problem` compiles the regex engine NATIVE uses
  (:func:`jurist.backends.hf.backend.constraint_regex`) into an ``outlines_core.Index`` over a vocabulary
  of the 256 single bytes: the same automaton the backend builds over the model's tokens.
"""

from __future__ import annotations

import json

from jurist.backends.hf.backend import constraint_regex
from jurist.records import Constraint

CHECKED_BACKENDS = ("guidance", "xgrammar", "outlines", "auto")


def guidance_grammar(constraint: Constraint) -> str:
    """The llguidance grammar vLLM's guidance backend builds for ``constraint`` (vLLM's
    ``serialize_guidance_grammar`` on the request's structured-output key, with vLLM's default of flexible
    whitespace), made with llguidance alone: vLLM's module would load torch and transformers first, ten
    seconds of ``jurist validate``. A test holds the two equal."""
    import llguidance

    if constraint.regex is not None:
        return str(llguidance.grammar_from("regex", constraint.regex))
    if constraint.choices is not None:
        return str(llguidance.grammar_from("choice", json.dumps(list(constraint.choices))))
    schema = json.dumps(dict(constraint.json_schema or {}))
    return str(llguidance.LLMatcher.grammar_from_json_schema(schema, defaults={"whitespace_flexible": True}))


def _guidance(constraint: Constraint) -> None:
    import llguidance

    error = llguidance.LLMatcher.validate_grammar(guidance_grammar(constraint), None)
    if error:
        raise ValueError(error)


def _xgrammar(constraint: Constraint) -> None:
    import xgrammar
    from vllm.v1.structured_output.utils import choice_as_grammar, compile_regex_with_timeout

    if constraint.regex is not None:
        compile_regex_with_timeout(xgrammar.Grammar.from_regex, constraint.regex)
    elif constraint.choices is not None:
        xgrammar.Grammar.from_ebnf(choice_as_grammar(list(constraint.choices)))
    else:
        xgrammar.Grammar.from_json_schema(json.dumps(dict(constraint.json_schema or {})))


def _outlines(constraint: Constraint) -> None:
    import re

    from outlines_core.json_schema import build_regex_from_schema  # type: ignore[import-untyped]
    from vllm.v1.structured_output.backend_outlines import validate_regex_is_buildable

    if constraint.regex is not None:
        regex = constraint.regex
    elif constraint.choices is not None:
        regex = "(" + "|".join(re.escape(c) for c in constraint.choices) + ")"
    else:
        regex = build_regex_from_schema(json.dumps(dict(constraint.json_schema or {})))
    validate_regex_is_buildable(regex)


def vllm_problem(constraint: Constraint, backend: str) -> str | None:
    """Why vLLM's structured-output ``backend`` would refuse ``constraint`` (None when it takes it, or when
    the backend is one this module does not check)."""
    if constraint.regex is not None and "\x00" in constraint.regex:
        return "vLLM refuses a regex that holds a NUL character ('\\x00')"
    checks = {"guidance": [_guidance], "xgrammar": [_xgrammar], "outlines": [_outlines]}
    order = checks.get(backend, [_xgrammar, _guidance] if backend == "auto" else [])
    problems = []
    for check in order:
        try:
            check(constraint)
        except Exception as exc:  # each compiler raises its own types
            problems.append(" ".join(str(exc).split())[:500] or type(exc).__name__)
        else:
            return None
    return "; ".join(problems) or None


def outlines_core_problem(constraint: Constraint) -> str | None:
    """Why outlines-core (engine NATIVE) cannot compile ``constraint`` (None when it can)."""
    from outlines_core import Index, Vocabulary  # type: ignore[import-untyped]

    try:
        regex = constraint_regex(constraint)
        if regex is not None:
            Index(regex, Vocabulary(256, {bytes([b]): [b] for b in range(256)}))
    except Exception as exc:  # outlines-core raises its own types
        return " ".join(str(exc).split())[:500] or type(exc).__name__
    return None
