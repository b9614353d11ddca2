"""Which rows a person should label, and the labels file that records each label with its design.

A :class:`SamplingPlan` is built from one judge's results and a budget of labels. It orders the rows it
draws (:meth:`SamplingPlan.draws`) and gives each its inclusion probability ``pi``: the chance the plan
had of drawing that row. The probability is written beside the label (:class:`LabelLine`), and
``jurist estimate`` weights each label by ``1 / pi`` when the probabilities differ
(:mod:`jurist.analysis.estimate`), so the interval stays valid whichever strategy chose the rows.

Strategies (:class:`Strategy`):

* ``uniform``: a simple random sample of ``budget`` rows in a random order, ``pi = budget / N`` for every
  row; the estimate is today's PPI++ exactly.
* ``stratified``: rows grouped by a column (``strata``, default the judge's verdict). Each group's rows are
  put in a random order and given the keys ``(rank + u_h) / N_h`` (``u_h`` uniform on [0, 1), one per
  group); the plan draws the rows whose key is below ``budget / N``, in the order of their keys. Each group
  then gets ``budget * N_h / N`` draws rounded up or down at random, every row's ``pi`` is exactly
  ``budget / N``, and any prefix of the order holds each group in proportion to its size (a labeller who
  stops early still has every group). Equal probabilities: the estimate is today's PPI++, whose interval is
  at most a little wider than the stratified design needs.
* ``active`` (Zrnic and Candes, 2024, "Active Statistical Inference"): ``pi_i`` grows with the judge's
  uncertainty on row ``i``: ``pi_i = budget * (floor / N + (1 - floor) * s_i / sum(s))`` with
  ``s_i = sqrt(1 - c_i)``, ``c_i`` the judge's confidence in its verdict
  (:func:`confidences`: ``judgment_confidence``, a cascade's ``confidence``,
  ``sample_agreement``, or ``max(p_a, 1 - p_a)``, so that ``1 - c`` is half of ``1 - |2 p_a - 1|``), capped
  at 1 with the excess given to the other rows in proportion. The square root is the variance-optimal
  shape when ``1 - c`` is the chance of an error (the optimal ``pi`` grows with the standard deviation of
  the label's residual, not its variance); ``floor`` (default :data:`DEFAULT_FLOOR`) spreads that share of
  the budget evenly, so every row has ``pi >= floor * budget / N`` and no weight exceeds
  ``1 / (floor * budget / N)``. A row without a confidence (a failed row) counts as fully uncertain. The
  plan walks a random order of all rows and draws each with its own ``pi``, independently (Poisson
  sampling): about ``budget`` draws, and the draws of any prefix of the walk are such a sample of a random
  subset of the rows. A judge without a confidence or probabilities cannot be sampled actively: the plan
  refuses, naming why; uniform and stratified need nothing of the judge.

A labeller may stop early: the draws are offered in order, and every prefix is again a sample of the kind
above (a random subset of the rows, each in it with a probability proportional to its ``pi``), which is
all the estimator needs, since it normalises the weights by their sum (a Hajek estimate) rather than by
the number of rows walked. A skipped row is missing: the estimate stays valid only if skipping has
nothing to do with the row's label; :func:`~jurist.labels.file.latest_labels` takes the latest
line of a row, so a review's correction is appended, never edited in place.

The labels file (:mod:`jurist.labels.file`) holds one :class:`~jurist.labels.file.LabelLine` per label;
:meth:`SamplingPlan.label_line` fills the plan's fields of it, and ``jurist agree/estimate/audit/report
--labels FILE`` join it on ``row_id`` (:class:`jurist.labels.source.LabelSource`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from jurist.errors import InputError
from jurist.io.results import JudgeColumns, ResultTable
from jurist.labels.file import LabelLine, Strategy

DEFAULT_FLOOR = 0.2
NO_STRATUM = "(none)"


def confidence_column(judge: JudgeColumns) -> str | None:
    """The column holding the judge's confidence in its verdict, if one does (not ``p_a``: see
    :func:`confidences`)."""
    found = (judge.get(suffix) for suffix in ("judgment_confidence", "confidence", "sample_agreement"))
    return next((column for column in found if column is not None), None)


def confidences(results: ResultTable, judge: JudgeColumns) -> list[float | None] | None:
    """The judge's confidence in its verdict per row: ``judgment_confidence``, a cascade's ``confidence``
    (the deciding stage's, as its thresholds read it), a sampled judge's ``sample_agreement``, or
    ``max(p_a, 1 - p_a)`` for a pairwise judge; None when the results hold none of them."""
    column = confidence_column(judge)
    if column is not None:
        return [None if v is None else float(v) for v in results.values(column)]
    p_a = judge.get("p_a")
    if p_a is not None:
        return [None if p is None else max(float(p), 1 - float(p)) for p in results.values(p_a)]
    return None


@dataclass(frozen=True)
class Draw:
    """A row to offer a labeller: its id, its inclusion probability (written with its label) and its place
    in the plan's order (0 first)."""

    row_id: str
    probability: float
    position: int


@dataclass(frozen=True)
class SamplingPlan:
    """The rows a labeller is offered, in order, with every row's inclusion probability.

    ``row_ids`` and ``probabilities`` cover every row of the results (in their order); ``drawn`` holds the
    indices of the drawn rows in the plan's order. Build one with :meth:`build`.
    """

    judge: str
    strategy: Strategy
    budget: int
    seed: int
    floor: float
    strata: str | None
    row_ids: tuple[str, ...]
    probabilities: tuple[float, ...]
    drawn: tuple[int, ...]

    @classmethod
    def build(
        cls,
        results: ResultTable,
        judge: str,
        strategy: Strategy,
        budget: int,
        *,
        seed: int = 0,
        strata: str | None = None,
        floor: float = DEFAULT_FLOOR,
    ) -> SamplingPlan:
        """A plan of about ``budget`` rows of ``results`` for labelling ``judge``'s verdicts (a budget over
        the number of rows offers every row). ``strata``: the column a stratified plan groups by (default
        the judge's verdict); ``floor``: the share of an active plan's budget spread evenly over all rows
        (in (0, 1]; 1 is uniform). The same arguments give the same plan."""
        strategy = Strategy(strategy)
        columns = results.judge(judge)
        if budget < 1:
            raise InputError(f"the label budget must be at least 1, not {budget}")
        if not 0 < floor <= 1:
            raise InputError(f"the floor must lie in (0, 1], not {floor}")
        if strata is not None and strategy is not Strategy.STRATIFIED:
            raise InputError(f"strata name the groups of a stratified plan, not of a {strategy.value} one")
        if results.id_column is None:
            raise InputError("the results have no row_id column: a plan names the rows it draws by it")
        row_ids = tuple(str(v) for v in results.values(results.id_column))
        total = len(row_ids)
        if total == 0:
            raise InputError("the results hold no rows to label")
        budget = min(budget, total)
        groups: list[str] | None = None
        conf: list[float | None] | None = None
        if strategy is Strategy.STRATIFIED:
            column = strata or columns.verdict
            groups = [NO_STRATUM if v is None else str(v) for v in results.values(column)]
        elif strategy is Strategy.ACTIVE:
            conf = confidences(results, columns)
            if conf is None or all(c is None for c in conf):
                raise InputError(
                    f"judge {judge!r} has no confidence or label probabilities in the results (LOGPROBS "
                    "scoring writes them; so does a cascade or a sampled judge), so an active plan has "
                    "nothing to rank the rows by: use --strategy uniform or stratified"
                )
        probabilities, drawn = design(
            strategy, total, budget, np.random.default_rng(seed), groups=groups, confidences=conf, floor=floor
        )
        return cls(
            judge=judge,
            strategy=strategy,
            budget=budget,
            seed=seed,
            floor=floor,
            strata=(strata or columns.verdict) if strategy is Strategy.STRATIFIED else None,
            row_ids=row_ids,
            probabilities=tuple(float(p) for p in probabilities),
            drawn=tuple(int(i) for i in drawn),
        )

    def draws(self) -> list[Draw]:
        """The rows to offer a labeller, in order: about ``budget`` of them."""
        return [
            Draw(self.row_ids[i], self.probabilities[i], position) for position, i in enumerate(self.drawn)
        ]

    def probability(self, row_id: str) -> float:
        """The inclusion probability of any row of the results, drawn or not."""
        try:
            return self.probabilities[self.row_ids.index(row_id)]
        except ValueError:
            raise InputError(f"row {row_id!r} is not in the results the plan was built from") from None

    def label_line(self, draw: Draw, label: Any, labeller: str, time: str | None = None) -> LabelLine:
        """The labels-file line of a label given to ``draw`` (``time``: now, in UTC ISO 8601, by default)."""
        return LabelLine(
            row_id=draw.row_id,
            label=label,
            labeller=labeller,
            time=time or datetime.now(UTC).isoformat(timespec="seconds"),
            probability=draw.probability,
            position=draw.position,
            strategy=self.strategy,
            seed=self.seed,
            budget=self.budget,
        )


def design(
    strategy: Strategy,
    total: int,
    budget: int,
    rng: np.random.Generator,
    *,
    groups: list[str] | None = None,
    confidences: list[float | None] | None = None,
    floor: float = DEFAULT_FLOOR,
) -> tuple[np.ndarray, np.ndarray]:
    """(every row's inclusion probability, the drawn row indices in the plan's order) of a plan over
    ``total`` rows as the module's docstring describes it; ``groups`` (one per row) for a stratified plan,
    ``confidences`` (one per row) for an active one. :meth:`SamplingPlan.build` and the benchmark that
    checks the intervals' coverage both draw with it."""
    budget = min(budget, total)
    if strategy is Strategy.UNIFORM:
        return np.full(total, budget / total), rng.permutation(total)[:budget]
    if strategy is Strategy.STRATIFIED:
        if groups is None or len(groups) != total:
            raise ValueError("a stratified plan needs one group per row")
        return np.full(total, budget / total), _stratified(groups, budget / total, rng)
    if confidences is None or len(confidences) != total:
        raise ValueError("an active plan needs one confidence per row")
    probabilities = active_probabilities(confidences, budget, floor)
    order = rng.permutation(total)
    chance = rng.random(total)
    return probabilities, order[chance[order] < probabilities[order]]


def active_probabilities(conf: list[float | None], budget: int, floor: float) -> np.ndarray:
    """Inclusion probabilities summing to ``budget`` (at most the number of rows) that grow with
    ``sqrt(1 - confidence)``, ``floor`` of the budget spread evenly, each capped at 1 (the excess goes to
    the other rows in proportion to their share); a missing confidence counts as 0."""
    total = len(conf)
    budget = min(budget, total)
    uncertainty = np.clip([1.0 if c is None else 1.0 - c for c in conf], 0.0, 1.0)
    spread = np.sqrt(uncertainty)
    shape = spread / spread.sum() if spread.sum() > 0 else np.full(total, 1.0 / total)
    share = floor / total + (1 - floor) * shape
    capped = np.zeros(total, dtype=bool)
    while True:
        free = budget - capped.sum()
        pi = np.where(capped, 1.0, free * share / share[~capped].sum() if free > 0 else 0.0)
        over = ~capped & (pi >= 1.0)
        if not over.any():
            return np.asarray(pi, dtype=float)
        capped |= over


def _stratified(groups: list[str], rate: float, rng: np.random.Generator) -> np.ndarray:
    """The drawn row indices of a stratified plan at ``rate``, in the order of their keys."""
    index = np.arange(len(groups))
    names = np.asarray(groups, dtype=object)
    keys = np.empty(len(groups))
    for name in sorted(set(groups)):
        members = rng.permutation(index[names == name])
        keys[members] = (np.arange(len(members)) + rng.random()) / len(members)
    drawn = index[keys < rate]
    return np.asarray(drawn[np.argsort(keys[drawn], kind="stable")])
