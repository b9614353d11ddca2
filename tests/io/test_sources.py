"""Streamed input: every source cuts into the same chunks, compressed files, CSV types, schema drift in
JSON Lines, limits and samples, in-memory objects (Arrow readers, pandas, polars, Hugging Face datasets)."""

from __future__ import annotations

import bz2
import gzip
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from installed import have
from jurist import Engine, InputError, ScriptedBackend
from jurist.io import tabular
from jurist.io.opening import open_source
from jurist.io.selection import LimitSource, SampleSource
from jurist.io.sources import RowSource

ROWS = [{"id": f"{i:03d}", "question": f"q{i}", "n": i, "x": i / 4} for i in range(23)]
YES = json.dumps({"judgment": "Yes"})
JUDGE = {"name": "j", "judge_params": {"prompt_template": "Q: {question}"}}


def jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def chunked(
    source: RowSource, size: int, skip: int = 0
) -> list[tuple[int, list[int], list[dict[str, Any]], dict[int, str]]]:
    return [(c.start, c.numbers, c.table.to_pylist(), dict(c.errors)) for c in source.chunks(size, skip)]


@pytest.mark.parametrize(
    "suffix", [".jsonl", ".jsonl.gz", ".jsonl.bz2", ".jsonl.zst", ".parquet", ".arrow", ".csv"]
)
def test_every_file_format_streams_the_same_rows(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"data{suffix}"
    if suffix == ".jsonl":
        path.write_bytes(jsonl_bytes(ROWS))
    elif suffix == ".jsonl.gz":
        path.write_bytes(gzip.compress(jsonl_bytes(ROWS)))
    elif suffix == ".jsonl.bz2":
        path.write_bytes(bz2.compress(jsonl_bytes(ROWS)))
    elif suffix == ".jsonl.zst":
        with pa.output_stream(str(path), compression="zstd") as stream:
            stream.write(jsonl_bytes(ROWS))
    elif suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(ROWS), path, row_group_size=5)
    elif suffix == ".arrow":
        feather.write_feather(pa.Table.from_pylist(ROWS), path, chunksize=4)
    else:
        path.write_text(
            "id,question,n,x\n" + "".join(f"{r['id']},{r['question']},{r['n']},{r['x']}\n" for r in ROWS)
        )
    source = open_source(str(path))
    chunks = chunked(source, 10)
    assert [start for start, _, _, _ in chunks] == [0, 10, 20]
    assert [numbers for _, numbers, _, _ in chunks] == [list(range(0, 10)), list(range(10, 20)), [20, 21, 22]]
    assert [row for _, _, rows, _ in chunks for row in rows] == ROWS
    assert source.total in (None, 23)
    # resuming after 13 rows starts inside the second chunk, and keeps the positions
    resumed = chunked(open_source(str(path)), 10, skip=13)
    assert [start for start, _, _, _ in resumed] == [13]
    assert resumed[0][2] == ROWS[13:]


def test_chunk_boundaries_keep_row_errors_in_place(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines, bad = [], set()
    for i in range(157):
        if rng.random() < 0.1:
            lines.append(b"{broken")
            bad.add(i)
        else:
            lines.append(json.dumps({"k": i}).encode())
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for size in (1, 7, 64, 500):
        seen_bad = set()
        for chunk in open_source(str(path)).chunks(size):
            for index, reason in chunk.errors.items():
                seen_bad.add(chunk.start + index)
                assert f"line {chunk.start + index + 1}" in reason
            values = chunk.table.column("k").to_pylist()
            assert [v for i, v in enumerate(values) if i not in chunk.errors] == [
                chunk.start + i for i in range(chunk.num_rows) if i not in chunk.errors
            ]
        assert seen_bad == bad


def test_csv_types_come_from_every_row_and_ids_stay_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tabular, "_BLOCK", 64)  # many small blocks: a late value must not break the stream
    body = "".join(f"{i:03d},{i},{i % 2 == 0},{'late text' if i == 90 else i}\n" for i in range(100))
    path = tmp_path / "t.csv"
    path.write_text("id,n,flag,late\n" + body)
    source = open_source(str(path))
    assert source.schema.field("id").type == pa.string()
    assert source.schema.field("n").type == pa.int64()
    assert source.schema.field("flag").type == pa.bool_()
    assert source.schema.field("late").type == pa.string()  # a text value at row 90 makes the column text
    table, errors = source.read_all()
    assert errors == {} and table.num_rows == 100
    assert table["id"].to_pylist()[:2] == ["000", "001"]
    assert table["late"].to_pylist()[90] == "late text"


def test_csv_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_bytes("a,b\nx,y\ncafé,ok\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"not UTF-8.*line 3"):
        open_source(str(path))


def test_jsonl_columns_are_fixed_by_the_first_rows(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from jurist.io import sources

    rows: list[dict[str, Any]] = [{"q": f"q{i}", "n": i, "note": None} for i in range(5)]
    rows.append({"q": "late", "n": "not a number", "note": "x", "extra": 1})
    path = tmp_path / "drift.jsonl"
    path.write_bytes(jsonl_bytes(rows))
    old = sources.SCHEMA_ROWS
    sources.SCHEMA_ROWS = 3
    try:
        source = open_source(str(path))
        table, errors = source.read_all()
    finally:
        sources.SCHEMA_ROWS = old
    assert source.columns == ["q", "n", "note"]  # "extra" came too late to be a column
    assert table.schema.field("note").type == pa.string()  # no value in the first rows: text
    assert set(errors) == {5}
    assert "column 'n'" in errors[5] and "line 6" in errors[5]
    assert "extra" in caplog.text


def test_limit_and_a_seeded_sample_keep_input_order(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(jsonl_bytes(ROWS))
    limited = LimitSource(open_source(str(path)), 5)
    assert limited.total == 5 and [r["n"] for r in limited.read_all()[0].to_pylist()] == [0, 1, 2, 3, 4]
    sample = SampleSource(open_source(str(path)), 6, seed=3)
    again = SampleSource(open_source(str(path)), 6, seed=3)
    picked = [r["n"] for r in sample.read_all()[0].to_pylist()]
    assert picked == [r["n"] for r in again.read_all()[0].to_pylist()]  # the seed decides
    assert picked == sorted(picked) and len(set(picked)) == 6
    chunk = next(SampleSource(open_source(str(path)), 6, seed=3).chunks(100))
    assert chunk.numbers == picked  # positions in the input, so row ids point back to it
    other = [r["n"] for r in SampleSource(open_source(str(path)), 6, seed=4).read_all()[0].to_pylist()]
    assert other != picked


def test_a_sample_names_rows_by_their_input_position(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(jsonl_bytes([{"question": f"q{i}"} for i in range(40)]))
    backend = ScriptedBackend([YES], cycle=True)
    out = tmp_path / "out.parquet"
    Engine(JUDGE, backend).run_file(path, out, sample=5, seed=1)
    table = pq.read_table(out)
    assert [f"q{i}" for i in map(int, table["row_id"].to_pylist())] == table["question"].to_pylist()


def test_an_id_column_is_the_row_id_and_keeps_its_text(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("id,question\n007,a\n010,b\n")
    table = Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(open_source(str(path)))
    assert table["row_id"].to_pylist() == ["007", "010"]


def test_arrow_readers_and_iterables_are_sources() -> None:
    table = pa.Table.from_pylist([{"question": "a"}, {"question": "b"}])
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1))
    engine = Engine(JUDGE, ScriptedBackend([YES], cycle=True))
    assert engine.run(reader)["j.status"].to_pylist() == ["ok", "ok"]
    generated = ({"question": q} for q in "xyz")
    assert engine.run(generated)["question"].to_pylist() == ["x", "y", "z"]


@pytest.mark.skipif(not have("pandas"), reason="pandas not installed")
def test_a_pandas_dataframe_is_a_source() -> None:
    import pandas as pd

    frame = pd.DataFrame({"question": ["a", "b"], "n": [1, 2]})
    table = Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(frame)
    assert table["question"].to_pylist() == ["a", "b"] and table["n"].to_pylist() == [1, 2]


@pytest.mark.skipif(not have("polars"), reason="polars not installed")
def test_a_polars_dataframe_is_a_source() -> None:
    import polars as pl

    frame = pl.DataFrame({"question": ["a", "b"]})
    table = Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(frame)
    assert table["question"].to_pylist() == ["a", "b"]


@pytest.mark.skipif(not have("datasets"), reason="datasets not installed")
def test_hugging_face_datasets_in_memory_and_on_disk(tmp_path: Path) -> None:
    import datasets

    dataset = datasets.Dataset.from_list([{"question": f"q{i}"} for i in range(5)])
    engine = Engine(JUDGE, ScriptedBackend([YES], cycle=True))
    assert engine.run(dataset)["question"].to_pylist() == [f"q{i}" for i in range(5)]
    assert engine.run(dataset.select([3, 1]))["question"].to_pylist() == ["q3", "q1"]
    streamed = dataset.to_iterable_dataset()
    assert engine.run(streamed)["question"].to_pylist() == [f"q{i}" for i in range(5)]
    folder = tmp_path / "saved"
    dataset.save_to_disk(str(folder))
    source = open_source(str(folder))
    assert source.total == 5 and source.read_all()[0]["question"].to_pylist()[-1] == "q4"
    datasets.DatasetDict({"train": dataset}).save_to_disk(str(tmp_path / "dict"))
    with pytest.raises(InputError, match="several splits"):
        open_source(str(tmp_path / "dict"))


def test_a_folder_that_is_no_dataset_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder"):
        open_source(str(tmp_path))
