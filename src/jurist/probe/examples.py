"""What a probe head is fitted on: each labelled row's prompts, the label each prompt should get, and how a
row's prompts make one verdict (as the judge that will read the head combines them).

* A pairwise judge (both orders): two prompts, A shown first and B shown first; the head is fitted on each
  prompt's first/second label, and the row's ``p_a`` is the judge's order average
  ``(P(first | ab) + P(second | ba)) / 2``, so ``p_a`` of a row is ``1 - p_a`` of its mirror by construction.
* The pairwise judge's pointwise mode: each answer alone; the winner's prompt is fitted on Yes, the
  loser's on No; ``p_a = (1 + P(Yes | A) - P(Yes | B)) / 2``, antisymmetric likewise.
* A pointwise judge (BOOL, ENUM, INT scale): one prompt, fitted on the label itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from jurist.labels.vocabulary import BOOL_LABELS, PAIRWISE_LABELS
from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.pairwise import PairwiseJudge, first_present, order_average
from jurist.judges.pairwise_pointwise import PointwisePairJudge, p_a_alone
from jurist.records import LabelRequest

Kind = Literal["pairwise", "pointwise_pair", "pointwise"]


@dataclass(frozen=True)
class Shape:
    """A judge's prompts per row and how they combine: ``labels`` are the texts the head scores (in the
    judge's order), ``classes`` the row-level verdicts (a/b for pairs, else the labels)."""

    kind: Kind
    labels: tuple[str, ...]
    classes: tuple[str, ...]
    yes: int = 0  # pointwise mode: the index of the label that means "good"

    @property
    def pairwise(self) -> bool:
        return self.kind != "pointwise"

    def prompt_targets(self, truth: int) -> list[int]:
        """The label index each of a row's prompts is fitted on, for the row-level class ``truth``."""
        if self.kind == "pairwise":  # class 0 = a: first in order ab, second in order ba
            return [0, 1] if truth == 0 else [1, 0]
        if self.kind == "pointwise_pair":
            no = 1 - self.yes
            return [self.yes, no] if truth == 0 else [no, self.yes]
        return [truth]

    def row_probabilities(self, probs: np.ndarray) -> np.ndarray:
        """Row-level class probabilities (rows x classes) from prompt-level label probabilities
        (rows x prompts x labels)."""
        if self.kind == "pairwise":  # as the judge combines its two orders
            p_a = order_average(probs[:, 0, 0], probs[:, 1, 1])
        elif self.kind == "pointwise_pair":
            p_a = p_a_alone(probs[:, 0, self.yes], probs[:, 1, self.yes])
        else:
            return np.asarray(probs[:, 0, :])
        return np.stack([p_a, 1 - p_a], axis=1)

    @property
    def prompts_per_row(self) -> int:
        return 1 if self.kind == "pointwise" else 2


def shape_of(judge: Judge) -> Shape:
    """The shape of a judge that reads a label distribution (scoring LOGPROBS or PROBE)."""
    labels = judge.parts.label_texts
    if not labels:
        raise ConfigError(
            f"judge {judge.name!r} reads no label distribution: a probe head needs a BOOL, ENUM or INT "
            "judgment, or a pairwise judge",
            field="judge_params.judgment_type",
        )
    if isinstance(judge.kind, PointwisePairJudge):
        field = judge.parts.label_fields[0]
        scores = field.scores or {}
        yes = next((i for i, label in enumerate(field.labels or ()) if scores.get(label) == 1.0), 0)
        return Shape("pointwise_pair", labels, ("a", "b"), yes)
    if isinstance(judge.kind, PairwiseJudge):
        if len(labels) != 2:
            raise ConfigError(
                "a probe head on a pairwise judge decides a or b: set pairwise_judge_params.allow_tie false",
                field="pairwise_judge_params.allow_tie",
            )
        return Shape("pairwise", labels, ("a", "b"))
    if judge.kind.kind_name != "pointwise":
        raise ConfigError(f"judge {judge.name!r} is a {judge.kind.kind_name} judge; a probe head fits none")
    return Shape("pointwise", labels, labels)


def row_class(shape: Shape, judge: Judge, label: Any) -> int | None:
    """The row-level class index of a label (None: no label, a tie, or a value the judge has no class for)."""
    if label is None:
        return None
    if shape.pairwise:
        side = PAIRWISE_LABELS.get(str(label).strip().lower())
        return {"a": 0, "b": 1}.get(side or "")
    field = judge.parts.label_fields[0]
    names = [str(n) for n in field.labels or ()]
    text = str(label).strip()
    for index, name in enumerate(names):
        if text.lower() == name.lower():
            return index
    scores = field.scores or {}
    wanted: float | None = None
    if isinstance(label, bool) or text.lower() in BOOL_LABELS:
        truth = label if isinstance(label, bool) else BOOL_LABELS[text.lower()]
        wanted = 1.0 if truth else 0.0
    elif isinstance(label, int | float):
        wanted = float(label)
    if wanted is not None:
        for index, name in enumerate(names):
            if scores.get(name) == wanted:
                return index
    return None


@dataclass(frozen=True)
class Examples:
    """The labelled rows a head is fitted on: their positions in the input, their prompts (rows x prompts
    per row label requests), their row-level classes, and the answers' lengths for pairs."""

    shape: Shape
    positions: list[int]
    requests: list[list[LabelRequest]]
    truth: np.ndarray
    lengths: list[tuple[float, float] | None]
    skipped: dict[str, int]

    def subset(self, index: Sequence[int] | np.ndarray) -> Examples:
        """The examples at ``index`` (positions in these examples), e.g. one source's rows."""
        return Examples(
            self.shape,
            [self.positions[i] for i in index],
            [self.requests[i] for i in index],
            self.truth[np.asarray(index, dtype=int)],
            [self.lengths[i] for i in index],
            {},
        )


def examples(judge: Judge, rows: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Examples:
    """The judge's prompts for every labelled row (rows without a usable label, or whose prompt cannot be
    rendered, are counted in ``skipped`` by reason)."""
    shape = shape_of(judge)
    positions: list[int] = []
    requests: list[list[LabelRequest]] = []
    truth: list[int] = []
    lengths: list[tuple[float, float] | None] = []
    skipped = {"unlabelled": 0, "unknown label": 0, "not rendered": 0}
    pair = getattr(judge.kind, "pair", None)
    for position, (row, label) in enumerate(zip(rows, labels, strict=True)):
        if label is None:
            skipped["unlabelled"] += 1
            continue
        cls = row_class(shape, judge, label)
        if cls is None:
            skipped["unknown label"] += 1
            continue
        try:
            step = judge.start(row)
        except Exception:  # a missing field or a bad row: the row is not an example
            skipped["not rendered"] += 1
            continue
        sent = [r for r in step.requests if isinstance(r, LabelRequest)]
        if len(sent) != shape.prompts_per_row:
            skipped["not rendered"] += 1
            continue
        positions.append(position)
        requests.append(sent)
        truth.append(cls)
        if pair is not None:
            a = first_present(row, pair.response_a_field)
            b = first_present(row, pair.response_b_field)
            lengths.append(None if a is None or b is None else (float(len(str(a))), float(len(str(b)))))
        else:
            lengths.append(None)
    return Examples(shape, positions, requests, np.asarray(truth, dtype=int), lengths, skipped)
