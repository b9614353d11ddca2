"""What the page shows of a row: its input fields as text, the two responses of a pair side by side, and
(once the row is labelled, or in review) the judge's verdict and confidence.

The input fields are the table's columns that belong to no judge (``row_id`` aside); a pairwise judge's
two responses are the first of its config's ``response_a_field`` / ``response_b_field`` names the table
holds (``response_a`` and ``response_b`` by default). Values that are not text are shown as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.io.results import ResultTable
from jurist.labelling.choices import LabelSet, LabelValue
from jurist.labels.sampling import confidences

RESPONSE_FIELDS = (("response_a", "output_1", "answer_a"), ("response_b", "output_2", "answer_b"))


class Rows:
    """The rows of one judge's results as the labelling page shows them, by row id."""

    def __init__(self, results: ResultTable, judge: str, labels: LabelSet) -> None:
        self.results = results
        self.judge = results.judge(judge)
        self.labels = labels
        id_column = results.id_column
        self.row_ids: list[str] = (
            [str(v) for v in results.values(id_column)]
            if id_column
            else [str(i) for i in range(results.num_rows)]
        )
        self.index = {row_id: i for i, row_id in enumerate(self.row_ids)}
        owned = {c for j in results.judges for c in j.columns}
        inputs = [c for c in results.table.column_names if c not in owned and c != id_column]
        self.pair = _pair_columns(results, inputs) if labels.kind == "pairwise" else None
        self.inputs = [c for c in inputs if self.pair is None or c not in self.pair]
        self.verdicts: list[LabelValue | None] = [labels.parse(v) for v in results.values(self.judge.verdict)]
        self.confidence = confidences(results, self.judge) or [None] * results.num_rows
        consistent = self.judge.get("position_consistent")
        self.consistent: list[bool | None] = (
            results.values(consistent) if consistent else [None] * results.num_rows
        )

    def __contains__(self, row_id: object) -> bool:
        return row_id in self.index

    def view(self, row_id: str) -> dict[str, Any]:
        """The row's fields as text: ``fields`` (name, text) and, for a pair, ``pair`` (two of them)."""
        record = self.results.table.slice(self.index[row_id], 1).to_pylist()[0]
        out: dict[str, Any] = {"row_id": row_id, "fields": [_field(c, record[c]) for c in self.inputs]}
        out["pair"] = None if self.pair is None else [_field(c, record[c]) for c in self.pair]
        return out

    def verdict(self, row_id: str) -> dict[str, Any]:
        """The judge's verdict on the row (its button's text where it is a label) and its confidence."""
        i = self.index[row_id]
        value = self.verdicts[i]
        text = next((c.text for c in self.labels.choices if c.value == value), None)
        if text is None:
            raw = self.results.values(self.judge.verdict)[i]
            text = "no verdict" if raw is None else str(raw)
        confidence = self.confidence[i]
        return {"value": value, "text": text, "confidence": confidence}


def _pair_columns(results: ResultTable, inputs: Sequence[str]) -> tuple[str, str] | None:
    """The columns of the two responses: the first of each side's configured names that the table holds."""
    names = [list(RESPONSE_FIELDS[0]), list(RESPONSE_FIELDS[1])]
    for entry in results.metadata.get("judges") or ():
        pair = (
            (entry.get("config") or {}).get("pairwise_judge_params") if isinstance(entry, Mapping) else None
        )
        if pair:
            names = [
                _names(pair.get("response_a_field")) + names[0],
                _names(pair.get("response_b_field")) + names[1],
            ]
            break
    found = [next((n for n in side if n in inputs), None) for side in names]
    return (found[0], found[1]) if found[0] and found[1] else None


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _field(name: str, value: Any) -> dict[str, str]:
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return {"name": name, "text": text}
