"""Why a judge has no verdict (or no score) on a row, counted: what ``agree``, ``audit``, ``estimate`` and
``pairs`` say about the rows they leave out.

A row without a verdict is never counted as one. Its reason is its status when that is not ``ok`` (a
failure such as ``parse_error``, or a cascade's ``abstained``), ``not reached`` on a cascade stage's row
that the cascade decided before that stage, ``no status`` on a row with no status at all, and otherwise
what the caller names (``inconclusive`` for a pairwise judge whose orders disagree, ``no score`` ...).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from jurist.io.results import JudgeColumns, ResultTable

NOT_REACHED = "not reached"


def row_reasons(results: ResultTable, judge: JudgeColumns, ok_reason: str) -> list[str]:
    """Per row, why the judge would have no verdict there (see the module); ``ok_reason`` for ``ok`` rows."""
    if not judge.has("status"):
        return [ok_reason] * results.num_rows
    absent = NOT_REACHED if judge.name in results.cascade_stages else "no status"
    return [absent if s is None else ok_reason if s == "ok" else str(s) for s in results.values(judge.status)]


def count_reasons(
    results: ResultTable,
    judge: JudgeColumns,
    missing: Sequence[bool],
    ok_reason: str,
    rows: Sequence[int] | None = None,
) -> dict[str, int]:
    """How many of ``rows`` (default: all) are ``missing`` their verdict or score, by reason, most first."""
    reasons = row_reasons(results, judge, ok_reason)
    counted = Counter(reasons[i] for i in (range(results.num_rows) if rows is None else rows) if missing[i])
    return dict(counted.most_common())


def reasons_text(counts: dict[str, int]) -> str:
    """``abstained 34, parse_error 2``."""
    return ", ".join(f"{reason} {count}" for reason, count in counts.items())


def reasoning_counts(results: ResultTable, judge: JudgeColumns) -> dict[str, Any] | None:
    """A thinking judge's reasoning (``judge_params.reasoning``): the rows with one, those whose reasoning
    the budget cut, and reasoning tokens per row (None when no row has a count); None for a judge that
    does not reason."""
    cut, tokens = judge.get("reasoning_cut"), judge.get("reasoning_tokens")
    if cut is None or tokens is None:
        return None
    counts = [c for c in results.values(cut) if c is not None]
    spent = [t for t in results.values(tokens) if t is not None]
    return {
        "rows": len(counts),
        "cut_rows": sum(c > 0 for c in counts),
        "tokens_per_row": sum(spent) / len(spent) if spent else None,
    }
