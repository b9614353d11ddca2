"""Judge panels: several judges (models or configs) over the same rows, combined per row and compared.

A :class:`Panel` reads the judges' columns of a result table (or of one record batch) and adds, per row:

* for each judgment field the judges share: the plurality label (categorical fields; a tie gives null)
  and its vote count, or the mean and the median (INT and FLOAT fields); judges that only score (reward
  models, RAG metrics) share no field, and their panel combines scores alone;
* ``panel.score`` / ``panel.score_median``: mean and median of the judges' ``score``;
* ``panel.winner`` for pairwise panels (plurality of the judges' winners);
* ``panel.valid``: how many judges gave a usable verdict (status ``ok``); below the quorum the row's
  ``panel.status`` is ``inconclusive`` and its panel values are null.

:meth:`Panel.agreement` computes the dataset-level figures: Krippendorff's alpha over the panel (nominal
for labels, interval for numbers), Cohen's kappa for every pair of judges, and for pairwise panels each
judge's position bias (the share of its verdicts that picked the first-shown response).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from jurist.config.types import JudgmentType
from jurist.errors import JuristError
from jurist.judges.judge import Judge
from jurist.judges.pairwise import ORDERS, PairwiseJudge
from jurist.stats.agreement import (
    AlphaLevel,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    plurality,
    position_bias,
)

NUMERIC = (JudgmentType.INT, JudgmentType.FLOAT)


def default_quorum(judges: int) -> int:
    """The fewest usable verdicts a panel row needs when no quorum is given: a majority of the judges."""
    return judges // 2 + 1


@dataclass(frozen=True)
class PanelField:
    """A judgment field every judge of the panel writes."""

    name: str
    judgment_type: JudgmentType

    @property
    def numeric(self) -> bool:
        return self.judgment_type in NUMERIC


class Panel:
    """Combines judges that answer the same question. ``quorum``: the fewest usable verdicts a row needs
    (default: a majority of the judges)."""

    def __init__(self, judges: Sequence[Judge], *, quorum: int | None = None, name: str = "panel") -> None:
        if len(judges) < 2:
            raise JuristError("a panel needs at least two judges")
        kinds = {j.config.is_pairwise for j in judges}
        if len(kinds) != 1:
            raise JuristError("a panel's judges must all be pairwise or all pointwise")
        self.judges = list(judges)
        self.name = name
        self.pairwise = kinds.pop()
        self.quorum = quorum if quorum is not None else default_quorum(len(judges))
        if not 1 <= self.quorum <= len(judges):
            raise JuristError(
                f"quorum {self.quorum} must be between 1 and the number of judges ({len(judges)})"
            )
        self.fields = [] if self.pairwise else self._shared_fields()

    def _shared_fields(self) -> list[PanelField]:
        if any(not j.kind.judgment_fields for j in self.judges):
            return []  # a judge that only scores (a reward model, a RAG metric): the panel combines scores
        per_judge = [
            {f.name: f.judgment_type for f in j.spec.judgment_fields if f.name in j.kind.judgment_fields}
            for j in self.judges
        ]
        shared = [
            PanelField(name, jt)
            for name, jt in per_judge[0].items()
            if all(fields.get(name) is jt for fields in per_judge[1:])
        ]
        if not shared:
            names = ", ".join(j.name for j in self.judges)
            raise JuristError(
                f"judges {names} share no judgment field (same name and type); nothing to combine"
            )
        return shared

    # ------------------------------------------------------------------------------------ columns
    def arrow_fields(self) -> list[pa.Field]:
        """The panel's columns, in order."""
        out: list[pa.Field] = []
        prefix = self.name
        if self.pairwise:
            out += [pa.field(f"{prefix}.winner", pa.string()), pa.field(f"{prefix}.winner_votes", pa.int64())]
        for f in self.fields:
            if f.numeric:
                out += [
                    pa.field(f"{prefix}.{f.name}", pa.float64()),
                    pa.field(f"{prefix}.{f.name}_median", pa.float64()),
                ]
            else:
                value_type = pa.bool_() if f.judgment_type is JudgmentType.BOOL else pa.string()
                out += [
                    pa.field(f"{prefix}.{f.name}", value_type),
                    pa.field(f"{prefix}.{f.name}_votes", pa.int64()),
                ]
        out += [
            pa.field(f"{prefix}.score", pa.float64()),
            pa.field(f"{prefix}.score_median", pa.float64()),
            pa.field(f"{prefix}.valid", pa.int64()),
            pa.field(f"{prefix}.status", pa.string()),
        ]
        return out

    def columns(self, table: pa.Table | pa.RecordBatch) -> list[pa.Array]:
        """The panel's arrays for the rows of a table that holds every judge's columns."""
        n = table.num_rows
        valid = [[s == "ok" for s in _column(table, f"{j.name}.status")] for j in self.judges]
        valid_count = [sum(v[i] for v in valid) for i in range(n)]
        quorate = [count >= self.quorum for count in valid_count]

        def votes(suffix: str) -> list[list[Any]]:
            cols = [_column(table, f"{j.name}.{suffix}") for j in self.judges]
            return [
                [c[i] for c, v in zip(cols, valid, strict=True) if v[i] and c[i] is not None]
                for i in range(n)
            ]

        arrays: list[pa.Array] = []
        if self.pairwise:
            winners = [
                plurality(v) if q else (None, 0) for v, q in zip(votes("winner"), quorate, strict=True)
            ]
            arrays += [
                pa.array([w for w, _ in winners], pa.string()),
                pa.array([c for _, c in winners], pa.int64()),
            ]
        for f in self.fields:
            per_row = votes(f.name)
            if f.numeric:
                arrays.append(
                    pa.array(
                        [_mean(v) if q else None for v, q in zip(per_row, quorate, strict=True)], pa.float64()
                    )
                )
                arrays.append(
                    pa.array(
                        [_median(v) if q else None for v, q in zip(per_row, quorate, strict=True)],
                        pa.float64(),
                    )
                )
            else:
                tops = [plurality(v) if q else (None, 0) for v, q in zip(per_row, quorate, strict=True)]
                value_type = pa.bool_() if f.judgment_type is JudgmentType.BOOL else pa.string()
                arrays += [
                    pa.array([t for t, _ in tops], value_type),
                    pa.array([c for _, c in tops], pa.int64()),
                ]
        scores = votes("score")
        arrays.append(
            pa.array([_mean(v) if q else None for v, q in zip(scores, quorate, strict=True)], pa.float64())
        )
        arrays.append(
            pa.array([_median(v) if q else None for v, q in zip(scores, quorate, strict=True)], pa.float64())
        )
        arrays.append(pa.array(valid_count, pa.int64()))
        arrays.append(pa.array(["ok" if q else "inconclusive" for q in quorate], pa.string()))
        return arrays

    # ---------------------------------------------------------------------------------- agreement
    def agreement_columns(self) -> list[str]:
        """The columns :meth:`agreement` reads (a run keeps only these of each batch)."""
        columns: list[str] = []
        for judge in self.judges:
            columns.append(f"{judge.name}.status")
            if self.pairwise:
                columns += [f"{judge.name}.winner"] + [f"{judge.name}.{key}_judgment" for key in ORDERS]
            else:
                columns += [f"{judge.name}.{f.name}" for f in self.fields]
        columns.append(f"{self.name}.status")
        return columns

    def agreement(self, table: pa.Table) -> dict[str, Any]:
        """Dataset-level agreement of the panel's judges (verdicts of rows a judge did not judge are
        missing, not disagreements)."""
        report: dict[str, Any] = {
            "judges": [j.name for j in self.judges],
            "quorum": self.quorum,
            "fields": {},
        }
        targets = [("winner", False)] if self.pairwise else [(f.name, f.numeric) for f in self.fields]
        for field, numeric in targets:
            ratings = {j.name: _valid_values(table, j.name, field) for j in self.judges}
            level: AlphaLevel = "interval" if numeric else "nominal"
            kappas = pairwise_cohen_kappa(ratings) if not numeric else {}
            report["fields"][field] = {
                "krippendorff_alpha": krippendorff_alpha(list(ratings.values()), level),
                "alpha_level": level,
                "cohen_kappa": {f"{a}|{b}": k for (a, b), k in kappas.items()},
            }
        if self.pairwise:
            report["position_bias"] = {j.name: judge_position_bias(table, j) for j in self.judges}
        status = _column(table, f"{self.name}.status") if f"{self.name}.status" in table.column_names else []
        if status:
            report["inconclusive_rows"] = sum(s == "inconclusive" for s in status)
        return report


def judge_position_bias(table: pa.Table, judge: Judge) -> float | None:
    """The share of a pairwise judge's verdicts (both orders) that named the first-shown response."""
    kind = judge.kind
    if not isinstance(kind, PairwiseJudge):
        raise JuristError(f"judge {judge.name!r} is not pairwise: it has no position bias")
    if not kind.shows_order:  # pointwise mode: each response alone, no first position
        return None
    picks = [kind.picked_first(v) for key in ORDERS for v in _column(table, f"{judge.name}.{key}_judgment")]
    return position_bias(picks)


def _valid_values(table: pa.Table, judge: str, field: str) -> list[Any]:
    statuses = _column(table, f"{judge}.status")
    values = _column(table, f"{judge}.{field}")
    return [v if s == "ok" and v != "inconclusive" else None for v, s in zip(values, statuses, strict=True)]


def _column(table: pa.Table | pa.RecordBatch, name: str) -> list[Any]:
    return list(table.column(name).to_pylist())


def _mean(values: list[Any]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def _median(values: list[Any]) -> float | None:
    return float(statistics.median(values)) if values else None
