"""What a probe head is fitted on: each labelled row's prompts, the label each prompt should get, and how a
row's prompts make one verdict (as the judge that will read the head combines them).

* A pairwise judge (both orders): two prompts, A shown first and B shown first; the head is fitted on each
  prompt's first/second label, and the row's ``p_a`` is the judge's order average
  ``(P(first | ab) + P(second | ba)) / 2``, so ``p_a`` of a row is ``1 - p_a`` of its mirror by construction.
* The pairwise judge's pointwise mode: each answer alone; the winner's prompt is fitted on Yes, the
  loser's on No; ``p_a = (1 + P(Yes | A) - P(Yes | B)) / 2``, antisymmetric likewise.
* A pointwise judge (BOOL, ENUM, INT scale): one prompt, fitted on the label itself, or on a label
  distribution (soft targets: a bigger judge's label probabilities, distilled).
* A pointwise judge fitted on preference pairs (``preference``, a reward head): the two responses of a pair
  are two rows of the input, each rendered alone; the head gives each response a reward ``r`` (the log-odds
  of the judge's good label) and is fitted as Bradley-Terry, ``P(a preferred) = sigmoid(r(a) - r(b))``, which
  is the row's ``p_a``: one minus its mirror's by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from jurist.errors import ConfigError
from jurist.judges.judge import Judge
from jurist.judges.pairwise import PairwiseJudge, first_present, order_average
from jurist.judges.pairwise_pointwise import PointwisePairJudge, p_a_alone
from jurist.labels.vocabulary import BOOL_LABELS, PAIRWISE_LABELS
from jurist.records import LabelRequest

Kind = Literal["pairwise", "pointwise_pair", "pointwise", "preference"]


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

    def preference(self) -> Shape:
        """The shape of the same judge fitted on preference pairs (a reward head on its good label)."""
        if self.kind != "pointwise" or len(self.labels) != 2:
            raise ConfigError(
                "a reward head (preference pairs) reads a judge with two labels (a BOOL judgment), "
                f"not {', '.join(self.labels)}",
                field="judge_params.judgment_type",
            )
        return Shape("preference", self.labels, ("a", "b"), self.yes)

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
        elif self.kind == "preference":  # Bradley-Terry on the rewards, the log-odds of the good label
            no = 1 - self.yes
            reward = np.log(probs[:, :, self.yes]) - np.log(probs[:, :, no])
            p_a = 1 / (1 + np.exp(reward[:, 1] - reward[:, 0]))
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
    field = judge.parts.label_fields[0]
    scores = field.scores or {}
    names = list(field.labels or ())
    best = max(range(len(names)), key=lambda i: scores.get(names[i]) or 0.0) if scores else 0
    return Shape("pointwise", labels, labels, best)  # yes: the label that scores highest


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
        if not scores:  # a BOOL judgment's labels say yes or no themselves
            return next((i for i, name in enumerate(names) if BOOL_LABELS.get(name.lower()) is truth), None)
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
    per row label requests), their row-level classes, the answers' lengths for pairs, and, for soft targets,
    each row's class distribution (rows x classes; None: the classes alone). ``members``: where an example's
    prompts come from different input rows (a preference pair's two responses), each prompt's input row
    position; None: every prompt of an example comes from the row at its position."""

    shape: Shape
    positions: list[int]
    requests: list[list[LabelRequest]]
    truth: np.ndarray
    lengths: list[tuple[float, float] | None]
    skipped: dict[str, int]
    soft: np.ndarray | None = None
    members: list[tuple[int, ...]] | None = None

    def prompt_rows(self) -> list[tuple[int, ...]]:
        """Each example's prompts' input row positions."""
        if self.members is not None:
            return self.members
        return [(p,) * len(r) for p, r in zip(self.positions, self.requests, strict=True)]

    def subset(self, index: Sequence[int] | np.ndarray) -> Examples:
        """The examples at ``index`` (positions in these examples), e.g. one source's rows."""
        chosen = np.asarray(index, dtype=int)
        return Examples(
            self.shape,
            [self.positions[i] for i in index],
            [self.requests[i] for i in index],
            self.truth[chosen],
            [self.lengths[i] for i in index],
            {},
            None if self.soft is None else self.soft[chosen],
            None if self.members is None else [self.members[i] for i in index],
        )


def _prompts(judge: Judge, row: Mapping[str, Any], count: int) -> list[LabelRequest] | None:
    """A row's label requests (None when it cannot be rendered or gives another count)."""
    try:
        step = judge.start(row)
    except Exception:  # a missing field or a bad row: the row is not an example
        return None
    sent = [r for r in step.requests if isinstance(r, LabelRequest)]
    return sent if len(sent) == count else None


def examples(judge: Judge, rows: Sequence[Mapping[str, Any]], labels: Sequence[Any]) -> Examples:
    """The judge's prompts for every labelled row (rows without a usable label, or whose prompt cannot be
    rendered, are counted in ``skipped`` by reason). A label may be a distribution over the judge's labels
    (a mapping label -> probability: soft targets), as a bigger judge's label probabilities are."""
    shape = shape_of(judge)
    positions: list[int] = []
    requests: list[list[LabelRequest]] = []
    truth: list[int] = []
    soft: list[np.ndarray] = []
    lengths: list[tuple[float, float] | None] = []
    skipped = {"unlabelled": 0, "unknown label": 0, "not rendered": 0}
    pair = getattr(judge.kind, "pair", None)
    for position, (row, label) in enumerate(zip(rows, labels, strict=True)):
        if label is None:
            skipped["unlabelled"] += 1
            continue
        distribution = _distribution(shape, judge, label) if isinstance(label, Mapping) else None
        cls = int(distribution.argmax()) if distribution is not None else row_class(shape, judge, label)
        if cls is None:
            skipped["unknown label"] += 1
            continue
        sent = _prompts(judge, row, shape.prompts_per_row)
        if sent is None:
            skipped["not rendered"] += 1
            continue
        positions.append(position)
        requests.append(sent)
        truth.append(cls)
        soft.append(distribution if distribution is not None else np.eye(len(shape.classes))[cls])
        if pair is not None:
            a = first_present(row, pair.response_a_field)
            b = first_present(row, pair.response_b_field)
            lengths.append(None if a is None or b is None else (float(len(str(a))), float(len(str(b)))))
        else:
            lengths.append(None)
    given = any(isinstance(label, Mapping) for label in labels)
    distributions = np.asarray(soft) if given and soft else None
    return Examples(shape, positions, requests, np.asarray(truth, dtype=int), lengths, skipped, distributions)


def _distribution(shape: Shape, judge: Judge, label: Mapping[str, Any]) -> np.ndarray | None:
    """A label distribution as the judge's class probabilities (None when it names no class of the judge's
    or sums to nothing)."""
    if shape.pairwise:
        raise ConfigError("soft targets (label distributions) fit a pointwise judge's head, not a pair's")
    out = np.zeros(len(shape.classes))
    for name, value in label.items():
        cls = row_class(shape, judge, name)
        if cls is None or value is None:
            return None
        out[cls] += float(value)
    return out / out.sum() if out.sum() > 0 else None


def preference_examples(
    judge: Judge, rows: Sequence[Mapping[str, Any]], pairs: Sequence[Any], preferred: Sequence[Any]
) -> Examples:
    """Preference pairs for a reward head (:meth:`Shape.preference`): the input's rows are single responses,
    ``pairs`` names each row's pair and ``preferred`` says whether people preferred it (a truthy label:
    true, yes, 1; a falsy one: false, no, 0). A pair is two rows with one preferred; its ``a`` is the one that
    comes first in the input. Pairs of another size, with no label, with both or neither preferred, or whose
    prompts cannot be rendered are counted in ``skipped``."""
    shape = shape_of(judge).preference()
    grouped: dict[Any, list[int]] = {}
    for position, pair in enumerate(pairs):
        if pair is not None:
            grouped.setdefault(pair, []).append(position)
    found = Examples(shape, [], [], np.zeros(0, dtype=int), [], {"not a pair": 0, "no preference": 0})
    found.skipped["not rendered"] = 0
    truth: list[int] = []
    members_of: list[tuple[int, ...]] = []
    for members in grouped.values():
        flags = [_flag(preferred[i]) for i in members]
        if len(members) != 2:
            found.skipped["not a pair"] += 1
            continue
        if None in flags or flags[0] == flags[1]:
            found.skipped["no preference"] += 1
            continue
        sent = [_prompts(judge, rows[i], 1) for i in members]
        if sent[0] is None or sent[1] is None:
            found.skipped["not rendered"] += 1
            continue
        found.positions.append(members[0])
        members_of.append(tuple(members))
        found.requests.append([sent[0][0], sent[1][0]])
        truth.append(0 if flags[0] else 1)
        sizes = [sum(len(m.content) for m in request.messages) for request in found.requests[-1]]
        found.lengths.append((float(sizes[0]), float(sizes[1])))  # the prompts differ by the response alone
    return Examples(shape, found.positions, found.requests, np.asarray(truth, dtype=int), found.lengths,
                    found.skipped, members=members_of)  # fmt: skip


def _flag(label: Any) -> bool | None:
    """A preference label as a flag (None: none, or not a yes/no value)."""
    if label is None or isinstance(label, bool):
        return label
    return BOOL_LABELS.get(str(label).strip().lower())
