"""A row's RAG inputs: the question, the answer, the contexts, the reference and the criteria, checked.

Each input is read from the first of its candidate columns (``rag_judge_params.*_field``) that the row has
a value for. Text inputs may be strings or numbers. Contexts (:func:`context_texts`) may be one string (one
context) or a list of strings, of mappings with a ``text``, ``page_content`` or ``content`` string, or of
objects with such an attribute (LangChain-style documents); in a row, a string that holds a JSON array
(contexts saved in a CSV file) is that array. A required input that is absent raises
:class:`~jurist.config.templates.MissingValue` (the row's status is then ``missing_input``); a value of the
wrong type raises :class:`CaseError` (``bad_input``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jurist.config.rag import RagJudgeParams, RagMetric
from jurist.config.templates import MissingValue
from jurist.judges.pairwise import first_present

TEXT_KEYS = ("text", "page_content", "content")


class CaseError(ValueError):
    """An input of a row has a value of the wrong type (the message names it)."""


@dataclass(frozen=True)
class Case:
    """One row's inputs; None for an optional input the row does not have."""

    question: str | None = None
    answer: str | None = None
    contexts: tuple[str, ...] | None = None
    reference: str | None = None
    criteria: str | None = None


def context_texts(contexts: Any) -> list[str]:
    """The texts of retrieved contexts, in order (:class:`TypeError` names the first that has none)."""
    if isinstance(contexts, str):
        return [contexts]
    if contexts is None or isinstance(contexts, bytes | Mapping) or not isinstance(contexts, Iterable):
        raise TypeError(f"contexts must be a list of texts (or one text), not {type(contexts).__name__}")
    texts = []
    for number, item in enumerate(contexts, 1):
        text = _text_of(item)
        if text is None:
            raise TypeError(
                f"context {number} is a {type(item).__name__}: give a string, or a mapping or object with a "
                f"{' / '.join(TEXT_KEYS)} string"
            )
        texts.append(text)
    return texts


def _text_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    for key in TEXT_KEYS:
        value = item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)
        if isinstance(value, str):
            return value
    return None


def _decoded(value: Any) -> Any:
    """A column of contexts stored as JSON text (a CSV file, or a column whose rows mix types) is decoded:
    a string that is a JSON array is the list it holds; any other string is one context."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return value
        return decoded if isinstance(decoded, list) else value
    return value


def _as_text(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise CaseError(f"the {name} is a {type(value).__name__}, not text")


def read_case(row: Mapping[str, Any], params: RagJudgeParams) -> Case:
    """The inputs of a row that the judge's metric reads (raises :class:`MissingValue` or
    :class:`CaseError`)."""
    inputs = params.inputs
    found: dict[str, Any] = {}
    for name in (*inputs.required, *inputs.optional):
        candidates = params.candidates(name)
        if name == "criteria" and params.criteria is not None:
            found[name] = params.criteria
            continue
        value = first_present(row, candidates)
        if value is None:
            if name in inputs.required:
                raise MissingValue(f"{name} ({' / '.join(candidates)})")
            continue
        if name == "contexts":
            try:
                found[name] = tuple(context_texts(_decoded(value)))
            except TypeError as exc:
                raise CaseError(str(exc)) from None
        else:
            found[name] = _as_text(name, value)
    case = Case(**found)
    if params.metric is RagMetric.CONTEXT_PRECISION and len(case.contexts or ()) > params.max_contexts:
        raise CaseError(
            f"{len(case.contexts or ())} contexts; rag_judge_params.max_contexts allows "
            f"{params.max_contexts} (context precision writes one verdict per context)"
        )
    if case.criteria is not None and not case.criteria.strip():
        raise CaseError("the criteria are empty")
    return case
