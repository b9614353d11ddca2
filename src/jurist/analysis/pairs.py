"""Preference pairs for DPO from judge results, in TRL's format (``prompt``, ``chosen``, ``rejected``).

Three sources, chosen by what the results hold (or by ``judge``):

* **pointwise scores** of several responses per prompt (``group_by`` the prompt column): the best against
  the worst of each group (UltraFeedback's binarized set), or every pair whose score margin is at least
  ``min_margin`` (``all_pairs``). Ties are dropped; rows whose judge status is not ``ok`` or that have no
  score take no part.
* **pairwise verdicts**: a position-consistent winner against the loser; in LOGPROBS scoring, ``p_a`` (the
  order-averaged probability that A wins) at least ``min_p`` makes A the chosen one, at most
  ``1 - min_p`` makes B the chosen one.
* **a panel**: the panel's score (pointwise) or its winner (pairwise), only on rows where every judge of the
  panel gave a verdict and, for pairwise panels, all named the same winner.

Rows that take no part are counted by why in :attr:`PairReport.left_out` (a status that is not ``ok``,
such as a failure or a cascade's ``abstained``; orders that disagree; no winner; no score ...). Each pair
also carries ``score_chosen``, ``score_rejected``, ``margin`` and the judge's provenance
(``judge``, ``model``, ``prompt_hash``, ``schema_hash``). With ``chat``, ``prompt`` is a list of messages
(one user turn) and ``chosen`` / ``rejected`` are lists holding one assistant turn (TRL's conversational
format).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.analysis.outcomes import reasons_text, row_reasons
from jurist.errors import InputError
from jurist.io.results import PANEL, JudgeColumns, ResultTable
from jurist.io.writers import OutputWriter

PROMPT_COLUMNS = ("prompt", "question", "request", "input", "instruction")
RESPONSE_COLUMNS = ("response", "answer", "output")
SIDE_COLUMNS = {"a": ("response_a", "output_1", "answer_a"), "b": ("response_b", "output_2", "answer_b")}
PROVENANCE = ("model", "prompt_hash", "schema_hash")


@dataclass(frozen=True)
class PairRules:
    """How to build pairs; None fields are found from the results' columns."""

    judge: str | None = None
    group_by: str | None = None
    prompt_column: str | None = None
    response_column: str | None = None
    by: str | None = None
    all_pairs: bool = False
    min_margin: float = 0.0
    min_p: float | None = None
    chat: bool = False


@dataclass
class PairReport:
    """How many rows there were, how many pairs they gave, from what, and the rows that took no part by
    why (most first)."""

    rows: int = 0
    pairs: int = 0
    source: str = ""
    left_out: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        left = sum(self.left_out.values())
        return f"{self.pairs} pairs from {self.rows} rows ({self.source})" + (
            f"; left out {left} rows: {reasons_text(self.left_out)}" if left else ""
        )


def _first(table: pa.Table, names: Sequence[str], what: str, given: str | None = None) -> str:
    if given is not None:
        if given not in table.column_names:
            raise InputError(
                f"{what} {given!r} is not a column of the results (columns: {', '.join(table.column_names)})"
            )
        return given
    for name in names:
        if name in table.column_names:
            return name
    raise InputError(f"no {what} column in the results (looked for {', '.join(names)}); name one")


def _judge(results: ResultTable, rules: PairRules) -> JudgeColumns:
    if rules.judge is not None:
        return results.judge(rules.judge)
    if results.panel is not None:
        return results.panel
    if len(results.judges) != 1:
        raise InputError(f"the results hold judges {', '.join(results.names)}; choose one with --judge")
    return results.judges[0]


def build_pairs(results: ResultTable | pa.Table, rules: PairRules) -> tuple[list[dict[str, Any]], PairReport]:
    """The preference pairs a result table gives under ``rules``."""
    if not isinstance(results, ResultTable):
        results = ResultTable(results)
    table = results.table
    judge = _judge(results, rules)
    panel = judge.kind == PANEL
    prompts = _first(table, PROMPT_COLUMNS, "prompt", rules.prompt_column)
    provenance = _provenance(results, judge)
    left_out: Counter[str] = Counter()
    if judge.pairwise:
        pairs = list(_from_verdicts(results, judge, prompts, rules, left_out))
        source = "pairwise panel" if panel else "pairwise verdicts"
    else:
        pairs = list(_from_scores(results, judge, prompts, rules, left_out))
        source = "panel scores" if panel else "pointwise scores"
    rows = [{**pair, "judge": judge.name, **provenance} for pair in pairs]
    if rules.chat:
        rows = [_as_chat(row) for row in rows]
    return rows, PairReport(table.num_rows, len(rows), source, dict(left_out.most_common()))


def _provenance(results: ResultTable, judge: JudgeColumns) -> dict[str, Any]:
    values = {}
    for key in PROVENANCE:
        column = judge.get(key)
        values[key] = (
            next((v for v in results.values(column) if v is not None), None) if column is not None else None
        )
    return values


def _members(results: ResultTable) -> int:
    return len([j for j in results.judges if j.kind != PANEL])


def _unusable(results: ResultTable, judge: JudgeColumns) -> list[str | None]:
    """Per row, why its verdict cannot be used (None when it can): a status that is not ok, or for a panel,
    a judge of the panel that gave no verdict."""
    reasons: list[str | None] = [None if r == "ok" else r for r in row_reasons(results, judge, "ok")]
    if judge.kind == PANEL:
        valid = results.values(judge.column("valid"))
        members = _members(results)
        reasons = [
            r if r is not None or v == members else "a judge of the panel gave no verdict"
            for r, v in zip(reasons, valid, strict=True)
        ]
    return reasons


def _from_scores(
    results: ResultTable, judge: JudgeColumns, prompts: str, rules: PairRules, left_out: Counter[str]
) -> Iterator[dict[str, Any]]:
    table = results.table
    responses = _first(table, RESPONSE_COLUMNS, "response", rules.response_column)
    by = rules.by or judge.score
    if by not in table.column_names:
        raise InputError(f"--by {by!r} is not a column of the results")
    group_by = rules.group_by or prompts
    if group_by not in table.column_names:
        raise InputError(f"--group-by {group_by!r} is not a column of the results")
    scores = table.column(by).to_pylist()
    unusable = _unusable(results, judge)
    texts, keys, asked = (table.column(c).to_pylist() for c in (responses, group_by, prompts))
    groups: dict[Any, list[int]] = {}
    for index, (key, score, why) in enumerate(zip(keys, scores, unusable, strict=True)):
        why = why or ("no score" if score is None else f"no {group_by}" if key is None else None)
        if why is not None:
            left_out[why] += 1
            continue
        groups.setdefault(key, []).append(index)
    for members in groups.values():
        if rules.all_pairs:
            candidates = [
                (i, j) if scores[i] > scores[j] else (j, i) for i, j in itertools.combinations(members, 2)
            ]
            chosen_pairs = [
                (c, r) for c, r in candidates if scores[c] - scores[r] >= max(rules.min_margin, 1e-12)
            ]
        else:
            best = max(members, key=lambda i: (scores[i], -i))
            worst = min(members, key=lambda i: (scores[i], i))
            margin = scores[best] - scores[worst]
            chosen_pairs = [(best, worst)] if margin > 0 and margin >= rules.min_margin else []
        for chosen, rejected in chosen_pairs:
            yield {
                "prompt": asked[chosen],
                "chosen": texts[chosen],
                "rejected": texts[rejected],
                "score_chosen": float(scores[chosen]),
                "score_rejected": float(scores[rejected]),
                "margin": float(scores[chosen] - scores[rejected]),
            }


def _from_verdicts(
    results: ResultTable, judge: JudgeColumns, prompts: str, rules: PairRules, left_out: Counter[str]
) -> Iterator[dict[str, Any]]:
    table = results.table
    sides = {side: _first(table, names, f"response {side.upper()}") for side, names in SIDE_COLUMNS.items()}
    a_texts, b_texts = table.column(sides["a"]).to_pylist(), table.column(sides["b"]).to_pylist()
    asked = table.column(prompts).to_pylist()
    unusable = _unusable(results, judge)
    winners = results.values(judge.column("winner"))
    p_a_column = judge.get("p_a")
    p_a = results.values(p_a_column) if p_a_column is not None else None
    if rules.min_p is not None and p_a is None:
        raise InputError(
            f"--min-p needs {judge.name}.p_a, which LOGPROBS scoring writes; these results have none"
        )
    consistent_column = judge.get("position_consistent")
    consistent = (
        results.values(consistent_column) if consistent_column is not None else [True] * table.num_rows
    )
    panel = judge.kind == PANEL
    votes = results.values(judge.column("winner_votes")) if panel else None
    members = _members(results)
    for index in range(table.num_rows):
        why = unusable[index]
        if why is not None:
            left_out[why] += 1
            continue
        if rules.min_p is not None and p_a is not None:
            p = p_a[index]
            winner = None if p is None else "a" if p >= rules.min_p else "b" if p <= 1 - rules.min_p else None
            score_a = p
            why = f"P(A wins) within {1 - rules.min_p:g} to {rules.min_p:g}" if p is not None else "no p_a"
        else:
            winner = winners[index]
            why = "no winner"
            if panel and votes is not None and votes[index] != members:
                winner, why = None, "the panel's judges disagree"
            if not panel and not consistent[index]:
                winner, why = None, "the two orders disagree"
            score_a = {"a": 1.0, "b": 0.0}.get(winner or "")
        if winner not in ("a", "b") or score_a is None:
            left_out[why] += 1
            continue
        chosen, rejected = (a_texts, b_texts) if winner == "a" else (b_texts, a_texts)
        score_chosen = score_a if winner == "a" else 1.0 - score_a
        yield {
            "prompt": asked[index],
            "chosen": chosen[index],
            "rejected": rejected[index],
            "score_chosen": float(score_chosen),
            "score_rejected": float(1.0 - score_chosen),
            "margin": float(2 * score_chosen - 1.0),
        }


def _as_chat(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **row,
        "prompt": [{"role": "user", "content": row["prompt"]}],
        "chosen": [{"role": "assistant", "content": row["chosen"]}],
        "rejected": [{"role": "assistant", "content": row["rejected"]}],
    }


def pairs_file(results: str | Path, output: Path, rules: PairRules) -> PairReport:
    """Build pairs from a results file (or results dataset) and write them (Parquet, Arrow or JSONL by
    extension)."""
    rows, report = build_pairs(ResultTable.open(results), rules)
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    text = pa.list_(message) if rules.chat else pa.string()
    schema = pa.schema(
        [
            ("prompt", text),
            ("chosen", text),
            ("rejected", text),
            ("score_chosen", pa.float64()),
            ("score_rejected", pa.float64()),
            ("margin", pa.float64()),
            ("judge", pa.string()),
            *[(key, pa.string()) for key in PROVENANCE],
        ]
    )
    metadata = {
        "jurist_pairs": json.dumps({"source": str(results), "rules": asdict(rules), "report": asdict(report)})
    }
    with OutputWriter(output, schema, metadata=metadata) as writer:
        writer.write(pa.Table.from_pylist(rows, schema=schema))
    return report
