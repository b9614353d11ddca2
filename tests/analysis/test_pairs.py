"""`jurist pairs` against hand-computed expectations: best vs worst, every pair above a margin, ties
dropped, pairwise winners only when both orders agree, LOGPROBS P(A wins), a panel only where it agrees,
and a DPO file that `datasets.load_dataset` reads with TRL's columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from installed import have
from jurist import InputError
from jurist.analysis.pairs import PairRules, build_pairs

PROV = {"q.model": "m", "q.prompt_hash": "ph", "q.schema_hash": "sh"}
POINTWISE = [
    {"request": "p1", "response": "great", "q.score": 0.9, "q.status": "ok", **PROV},
    {"request": "p1", "response": "fine", "q.score": 0.6, "q.status": "ok", **PROV},
    {"request": "p1", "response": "bad", "q.score": 0.1, "q.status": "ok", **PROV},
    {"request": "p1", "response": "broken", "q.score": None, "q.status": "parse_error", **PROV},
    {"request": "p2", "response": "same1", "q.score": 0.5, "q.status": "ok", **PROV},
    {"request": "p2", "response": "same2", "q.score": 0.5, "q.status": "ok", **PROV},
    {"request": "p3", "response": "alone", "q.score": 0.8, "q.status": "ok", **PROV},
]


def triples(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["prompt"], r["chosen"], r["rejected"], round(r["margin"], 6)) for r in rows]


def test_best_against_worst_and_ties_dropped() -> None:
    pairs, report = build_pairs(pa.Table.from_pylist(POINTWISE), PairRules())
    assert triples(pairs) == [("p1", "great", "bad", 0.8)]  # p2 is a tie, p3 has one response
    assert pairs[0]["score_chosen"] == 0.9 and pairs[0]["score_rejected"] == 0.1
    assert pairs[0]["judge"] == "q" and pairs[0]["model"] == "m" and pairs[0]["prompt_hash"] == "ph"
    assert report.source == "pointwise scores" and report.pairs == 1


def test_every_pair_above_a_margin() -> None:
    pairs, _ = build_pairs(pa.Table.from_pylist(POINTWISE), PairRules(all_pairs=True, min_margin=0.4))
    assert triples(pairs) == [("p1", "great", "bad", 0.8), ("p1", "fine", "bad", 0.5)]  # 0.9-0.6 < 0.4


PAIRWISE = [
    {
        "input": "i1",
        "output_1": "A1",
        "output_2": "B1",
        "j.winner": "a",
        "j.position_consistent": True,
        "j.status": "ok",
    },
    {
        "input": "i2",
        "output_1": "A2",
        "output_2": "B2",
        "j.winner": "b",
        "j.position_consistent": True,
        "j.status": "ok",
    },
    {
        "input": "i3",
        "output_1": "A3",
        "output_2": "B3",
        "j.winner": "tie",
        "j.position_consistent": False,
        "j.status": "ok",
    },
    {
        "input": "i4",
        "output_1": "A4",
        "output_2": "B4",
        "j.winner": "inconclusive",
        "j.position_consistent": None,
        "j.status": "parse_error",
    },
]


def test_pairwise_winners_only_when_both_orders_agree() -> None:
    pairs, report = build_pairs(pa.Table.from_pylist(PAIRWISE), PairRules())
    assert triples(pairs) == [("i1", "A1", "B1", 1.0), ("i2", "B2", "A2", 1.0)]
    assert report.source == "pairwise verdicts"


def test_logprobs_p_a_threshold() -> None:
    rows = [{**r, "j.p_a": p} for r, p in zip(PAIRWISE, [0.9, 0.25, 0.55, None], strict=True)]
    pairs, _ = build_pairs(pa.Table.from_pylist(rows), PairRules(min_p=0.7))
    # 0.9 >= 0.7: A chosen; 0.25 <= 0.3: B chosen; 0.55 is too close to call; row 4 failed
    assert [(p["prompt"], p["chosen"]) for p in pairs] == [("i1", "A1"), ("i2", "B2")]
    assert [round(p["score_chosen"], 6) for p in pairs] == [0.9, 0.75]
    with pytest.raises(InputError, match="p_a"):
        build_pairs(pa.Table.from_pylist(PAIRWISE), PairRules(min_p=0.7))


def test_a_panel_only_where_it_agrees() -> None:
    base = {"input": "i", "output_1": "A", "output_2": "B", "x.status": "ok", "y.status": "ok"}
    rows = [
        {
            **base,
            "input": "agree",
            "panel.winner": "a",
            "panel.winner_votes": 2,
            "panel.valid": 2,
            "panel.status": "ok",
        },
        {
            **base,
            "input": "split",
            "panel.winner": None,
            "panel.winner_votes": 1,
            "panel.valid": 2,
            "panel.status": "ok",
        },
        {
            **base,
            "input": "short",
            "panel.winner": "b",
            "panel.winner_votes": 1,
            "panel.valid": 1,
            "panel.status": "inconclusive",
        },
    ]
    pairs, report = build_pairs(pa.Table.from_pylist(rows), PairRules())
    assert [p["prompt"] for p in pairs] == ["agree"] and report.source == "pairwise panel"


@pytest.mark.skipif(not have("datasets"), reason="datasets not installed")
@pytest.mark.parametrize(("suffix", "chat"), [(".parquet", False), (".jsonl", True)])
def test_the_dpo_file_loads_with_datasets(tmp_path: Path, suffix: str, chat: bool) -> None:
    import datasets

    results = tmp_path / "results.parquet"
    pq.write_table(pa.Table.from_pylist(POINTWISE), results)
    out = tmp_path / f"pairs{suffix}"
    command = [sys.executable, "-m", "jurist", "pairs", str(results), "-o", str(out), "--all-pairs"]
    done = subprocess.run(
        [*command, *(["--chat"] if chat else [])], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "3 pairs from 7 rows" in done.stdout
    loaded = datasets.load_dataset(
        "json" if suffix == ".jsonl" else "parquet", data_files=str(out), split="train"
    )
    assert {"prompt", "chosen", "rejected"} <= set(loaded.column_names)  # what TRL's DPOTrainer reads
    first = loaded[0]
    if chat:
        assert first["prompt"] == [{"role": "user", "content": "p1"}]
        assert first["chosen"] == [{"role": "assistant", "content": "great"}]
    else:
        assert (first["prompt"], first["chosen"], first["rejected"]) == ("p1", "great", "fine")
