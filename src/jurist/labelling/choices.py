"""The labels a person may give for one judge: a button each, with its keys, read from the judge's config.

A pairwise judge (or a panel of them) is labelled a, b or tie, the values ``jurist estimate`` reads as
the chance that answer a wins. A pointwise judge is labelled in its own judgment's vocabulary, from its
config in the results' metadata (:func:`jurist.answer.fields.labels_for`): Yes/No for BOOL, the scale of
an INT judgment with ``judgment_scores``, the labels of an ENUM. A judgment with open values (FLOAT,
TEXT, an INT without a scale), a rubric, a reward model and a RAG metric have no buttons to offer: they
are refused, naming why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jurist.answer.fields import labels_for
from jurist.config.types import JudgmentType
from jurist.errors import InputError
from jurist.io.results import PANEL, ResultTable
from jurist.labels.vocabulary import BOOL_LABELS, PAIRWISE_LABELS, is_pairwise, order_labels

LabelValue = str | int
Kind = Literal["pairwise", "bool", "scale", "enum"]


@dataclass(frozen=True)
class Choice:
    """One button: the value written to the labels file, its text and the keys that press it."""

    value: LabelValue
    text: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class LabelSet:
    """The labels of one judge's verdicts, in the order of their buttons.

    ``scores``: an ENUM label's score (from ``judgment_scores``), the number an estimate averages.
    """

    judge: str
    kind: Kind
    choices: tuple[Choice, ...]
    scores: Mapping[str, float | None] = field(default_factory=dict)

    @classmethod
    def of(cls, results: ResultTable, name: str) -> LabelSet:
        """The labels of judge ``name`` of ``results``; an :class:`InputError` when it has no closed set."""
        judge = results.judge(name)
        if is_pairwise(results, judge):
            first, second, _ = order_labels(results, name)
            return cls(
                name,
                "pairwise",
                (
                    Choice("a", f"{first} is better", ("a", "1")),
                    Choice("b", f"{second} is better", ("b", "2")),
                    Choice("tie", "Tie", ("t", "3")),
                ),
            )
        configs = _configs(results, name)
        if not configs:
            if results.from_metadata or judge.get("judgment") is None:
                raise InputError(
                    f"judge {name!r} ({judge.kind}) has no judge config in the results' metadata"
                )
            column = results.table.schema.field(judge.column("judgment"))
            if str(column.type) != "bool":
                raise InputError(f"judge {name!r} has no config in the results to read its labels from")
            return _bool_set(name)
        found = [_from_config(name, config) for config in configs]
        if any(other.choices != found[0].choices for other in found[1:]):
            raise InputError(f"the judges of panel {name!r} answer with different labels: label one of them")
        return found[0]

    def parse(self, raw: Any) -> LabelValue | None:
        """A label as this set writes it (``yes`` -> ``Yes``, LLMBar's ``1`` -> ``a``), or None when
        ``raw`` is none of its labels."""
        if raw is None:
            return None
        key = str(raw).strip()
        if self.kind == "pairwise":
            return PAIRWISE_LABELS.get(key.lower())
        if self.kind == "bool":
            truth = raw if isinstance(raw, bool) else BOOL_LABELS.get(key.lower())
            return None if truth is None else "Yes" if truth else "No"
        for choice in self.choices:
            if key.lower() == str(choice.value).lower():
                return choice.value
        return None

    def target(self, value: LabelValue) -> Any:
        """A label as :func:`jurist.analysis.estimate.estimate_judge` reads it: an ENUM label as its score
        (None when it has none), any other as it is."""
        return self.scores.get(str(value)) if self.kind == "enum" else value

    @property
    def values(self) -> list[LabelValue]:
        return [c.value for c in self.choices]

    def describe(self) -> str:
        return ", ".join(str(v) for v in self.values)


def _bool_set(name: str) -> LabelSet:
    return LabelSet(name, "bool", (Choice("Yes", "Yes", ("y", "1")), Choice("No", "No", ("n", "2"))))


def _configs(results: ResultTable, name: str) -> list[Mapping[str, Any]]:
    """The config of judge ``name``, or of each judge of the panel ``name``, from the run metadata."""
    entries = [e for e in results.metadata.get("judges") or () if isinstance(e, Mapping)]
    if results.judge(name).kind == PANEL:
        return [e["config"] for e in entries if isinstance(e.get("config"), Mapping)]
    return [e["config"] for e in entries if e.get("name") == name and isinstance(e.get("config"), Mapping)]


def _from_config(name: str, config: Mapping[str, Any]) -> LabelSet:
    for section in ("rubric_judge_params", "reward_judge_params", "rag_judge_params"):
        if config.get(section):
            kind = section.split("_")[0]
            raise InputError(f"judge {name!r} is a {kind} judge: its verdicts are not one label to give")
    params = config.get("judge_params") or {}
    try:
        judgment = JudgmentType(str(params.get("judgment_type", "BOOL")).upper())
    except ValueError:
        raise InputError(
            f"judge {name!r} has an unknown judgment_type {params.get('judgment_type')!r}"
        ) from None
    scores: Mapping[str, float | None] | None = params.get("judgment_scores")
    labels = labels_for(judgment, scores)
    if judgment is JudgmentType.BOOL:
        return _bool_set(name)
    if labels is None:
        raise InputError(
            f"judge {name!r} answers with open {judgment.value} values, not a closed set of labels "
            "(an INT judgment needs judgment_scores, its scale)"
        )
    if judgment is JudgmentType.INT:
        numbers = [int(label) for label in labels]
        return LabelSet(name, "scale", _numbered([str(n) for n in numbers], numbers))
    return LabelSet(name, "enum", _numbered(list(labels), list(labels)), dict(scores or {}))


def _numbered(texts: Sequence[str], values: Sequence[LabelValue]) -> tuple[Choice, ...]:
    """Buttons pressed by 1..9 in order (a scale of one-digit numbers by its own digits)."""
    own = all(isinstance(v, int) and 0 <= v <= 9 for v in values) and len(set(values)) == len(values)
    return tuple(
        Choice(value, text, (str(value),) if own else (str(i + 1),) if i < 9 else ())
        for i, (text, value) in enumerate(zip(texts, values, strict=True))
    )
