"""Units of a dataset: planned from listings, named after their shards, read where they are judged with the
dataset's columns; a shard that cannot be read is a ShardError naming it; --limit and --sample over shards."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_data import make_rows, shard_bytes, write_shards
from jurist.engine.plan import chunk_row_ids
from jurist.errors import InputError
from jurist.io.units import ShardError, Unit, choose, is_dataset_input, plan


def rows_of(unit: Unit, schema: pa.Schema | None = None, *, label: bool = True) -> list[tuple[str, str]]:
    """(row id, question) of every row of a unit, as a run reads it."""
    source = unit.open(schema, label=label)
    out = []
    for chunk in source.chunks(7):
        questions = chunk.table.column("question").to_pylist()
        out.extend(zip(chunk_row_ids(chunk, None), questions, strict=True))
    return out


def test_what_names_a_dataset(tmp_path: Path) -> None:
    write_shards(str(tmp_path / "d"), 2, 3, "jsonl")
    assert is_dataset_input([str(tmp_path / "d")])
    assert is_dataset_input([str(tmp_path / "d" / "*.jsonl")])
    assert is_dataset_input(["s3://bucket/x.parquet"])
    assert is_dataset_input(
        [str(tmp_path / "d" / "part-00000.jsonl"), str(tmp_path / "d" / "part-00001.jsonl")]
    )
    assert not is_dataset_input([str(tmp_path / "d" / "part-00000.jsonl")])
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "state.json").write_text("{}")
    assert not is_dataset_input([str(tmp_path / "hf")])  # a Hugging Face dataset saved with save_to_disk


def test_units_are_named_after_their_shards(tmp_path: Path) -> None:
    write_shards(str(tmp_path / "a"), 2, 3, "jsonl.gz", ids=False)
    write_shards(str(tmp_path / "a" / "sub"), 1, 3, "parquet", ids=False)
    corpus = plan([str(tmp_path / "a")])
    assert [u.name for u in corpus.units] == ["part-00000", "part-00001", "sub/part-00000"]
    assert [(u.format, u.compression) for u in corpus.units] == [("jsonl", "gzip")] * 2 + [("parquet", None)]
    assert corpus.labelled
    # two shards whose names differ only in their format keep their whole names
    write_shards(str(tmp_path / "b"), 1, 3, "jsonl", ids=False)
    write_shards(str(tmp_path / "b"), 1, 3, "parquet", ids=False)
    assert [u.name for u in plan([str(tmp_path / "b")]).units] == ["part-00000.jsonl", "part-00000.parquet"]
    # the same file named twice is one unit; a listing's identity changes when a file does
    first = plan([str(tmp_path / "a"), str(tmp_path / "a" / "*.jsonl.gz")])
    assert len(first.units) == 3
    before = [u.identity() for u in first.units]
    (tmp_path / "a" / "part-00001.jsonl.gz").write_bytes(shard_bytes(make_rows(4), "jsonl.gz"))
    assert [u.identity() for u in plan([str(tmp_path / "a")]).units] != before


def test_rows_have_their_shard_and_position_as_id(tmp_path: Path) -> None:
    write_shards(str(tmp_path), 2, 10, "jsonl.gz", ids=False)
    units = plan([str(tmp_path)]).units
    got = rows_of(units[1])
    assert got[0] == ("part-00001.jsonl.gz:0", "qqqq10") and got[-1][0] == "part-00001.jsonl.gz:9"
    assert rows_of(units[1], label=False)[3][0] == "3"  # a dataset of one file: positions alone


def test_a_big_parquet_file_is_judged_in_slices_of_its_row_groups(tmp_path: Path) -> None:
    every = make_rows(1000, ids=False)
    path = tmp_path / "big.parquet"
    path.write_bytes(shard_bytes(every, "parquet", row_group=37))
    corpus = plan([str(path)], unit_bytes=path.stat().st_size // 5)
    assert len(corpus.units) >= 5 and corpus.units[0].name == "big.00000"
    seen = [row for unit in corpus.units for row in rows_of(unit, label=False)]
    assert [q for _, q in seen] == [r["question"] for r in every]  # every row once, in order
    assert [i for i, _ in seen] == [str(n) for n in range(1000)]  # positions in the file
    sizes = [len(rows_of(unit)) for unit in corpus.units]  # whole row groups (the last one has 1 row)
    assert sum(1 for s in sizes if s % 37) == 1 and max(sizes) < 1000


def test_shards_are_read_with_the_first_shards_columns(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"question": "x", "n": 1}\n')
    (tmp_path / "b.jsonl").write_text('{"question": "y", "n": "two"}\n{"question": "z", "n": 3, "new": 1}\n')
    corpus = plan([str(tmp_path)])
    schema = corpus.head().schema
    source = corpus.units[1].open(schema)
    chunk = next(source.chunks(10))
    assert chunk.table.schema == schema
    assert "column 'n' holds 'two'" in chunk.errors[0] and "b.jsonl line 1" in chunk.errors[0]
    assert chunk.table.column("n").to_pylist() == [None, 3]
    # a Parquet shard without a column of the first shard's is a bad shard, named
    pq.write_table(pa.table({"other": [1]}), tmp_path / "c.parquet")
    bad = plan([str(tmp_path)]).units[2]
    with pytest.raises(ShardError, match="lacks column question, n") as raised:
        bad.open(schema)
    assert "c.parquet" in str(raised.value)


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("torn.parquet", b"PAR1 not really", "not a readable Parquet file"),
        ("empty.jsonl", b"", "is empty"),
        ("cut.jsonl.gz", gzip.compress(shard_bytes(make_rows(3000), "jsonl"))[:3000], "cannot be read"),
    ],
)
def test_a_shard_that_cannot_be_read_is_named_with_its_reason(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    (tmp_path / "good.jsonl").write_text('{"question": "a"}\n')
    (tmp_path / name).write_bytes(data)
    corpus = plan([str(tmp_path)])
    schema = pa.schema([("question", pa.string())])
    unit = next(u for u in corpus.units if u.shard == name)
    with pytest.raises(ShardError, match=reason) as raised:
        for _ in unit.open(schema).chunks(100):
            pass
    assert name in str(raised.value)


def test_limit_takes_the_first_rows_across_shards(tmp_path: Path) -> None:
    every = write_shards(str(tmp_path), 3, 10, "jsonl.gz")
    chosen = choose(plan([str(tmp_path)]), 14, None, 0)
    assert [u.limit for u in chosen.units] == [None, 4]
    got = [q for unit in chosen.units for _, q in rows_of(unit)]
    assert got == [r["question"] for r in every[:14]]


def test_sample_is_uniform_over_every_row_of_every_shard(tmp_path: Path) -> None:
    # shards of 5, 10 and 25 rows; a sample of 8 of the 40 rows: each row is in it with probability 8/40,
    # whatever its shard. Checked over 2,000 seeds against that independent value (a binomial bound per row)
    for number, size in enumerate((5, 10, 25)):
        (tmp_path / f"s{number}.jsonl").write_text(
            "".join(json.dumps({"question": f"{number}-{i}"}) + "\n" for i in range(size))
        )
    corpus = plan([str(tmp_path)])
    counts: Counter[str] = Counter()
    draws = 2000
    for seed in range(draws):
        chosen = choose(corpus, None, 8, seed)
        picked = [q for unit in chosen.units for _, q in rows_of(unit)]
        assert len(picked) == 8 == len(set(picked))
        counts.update(picked)
    assert len(counts) == 40
    expected, spread = draws * 0.2, (draws * 0.2 * 0.8) ** 0.5
    assert all(abs(c - expected) < 4.5 * spread for c in counts.values()), counts
    # the same seed draws the same rows
    again = [[q for u in choose(corpus, None, 8, 7).units for _, q in rows_of(u)] for _ in range(2)]
    assert again[0] == again[1]


def test_unknown_formats_and_bad_unit_sizes_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text("{}\n")
    with pytest.raises(InputError, match="unit size"):
        plan([str(tmp_path)], unit_bytes=0)
    with pytest.raises(InputError, match="unknown input format"):
        plan([str(tmp_path / "x.jsonl")], input_format="yaml")
