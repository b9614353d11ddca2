"""Reading datasets (every format, every bad input) and writing results (every output format)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jurist import Engine, InputError, ScriptedBackend
from jurist.io.readers import read_input
from jurist.io.writers import OutputWriter, read_output

JUDGE = {
    "name": "j",
    "judge_params": {"prompt_template": "Q: {question}\nA: {answer}", "include_explanation": True},
}
YES = json.dumps({"explanation": "fine", "judgment": "Yes"})
RECORDS = [
    {"question": "2+2?", "answer": "4", "n": 1},
    {"question": "Capital of Peru?", "answer": "Lima", "n": 2},
]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet", ".arrow"])
def test_every_input_format_reads_the_same_rows(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"data{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, RECORDS)
    elif suffix == ".json":
        path.write_text(json.dumps(RECORDS))
    elif suffix == ".csv":
        path.write_text('question,answer,n\n2+2?,4,1\n"Capital of Peru?",Lima,2\n')
    elif suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(RECORDS), path)
    else:
        import pyarrow.feather as feather

        feather.write_feather(pa.Table.from_pylist(RECORDS), path)
    data = read_input(path)
    assert data.num_rows == 2
    assert data.table.select(["question", "n"]).to_pylist() == [
        {"question": "2+2?", "n": 1},
        {"question": "Capital of Peru?", "n": 2},
    ]
    assert data.row_errors == {}


def test_llmbar_style_json_list(tmp_path: Path) -> None:
    path = tmp_path / "Natural.json"
    path.write_text(json.dumps([{"input": "say hi", "output_1": "hi", "output_2": "bye", "label": 1}]))
    data = read_input(path)
    assert data.columns == ["input", "output_1", "output_2", "label"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "empty"),
        ("blank.jsonl", b"\n\n  \n", "empty"),
        ("empty.json", b"[]", "no rows"),
        ("space.json", b"   \n", "empty"),
        ("header_only.csv", b"question,answer\n", "no rows"),
        ("latin1.csv", "question,answer\ncafé,ok\n".encode("latin-1"), "not UTF-8"),
        ("latin1.json", '[{"q": "café"}]'.encode("latin-1"), "not UTF-8"),
        ("broken.json", b'[{"q": 1},', "malformed JSON at line 1"),
        ("scalar.json", b"42", "list of records"),
        ("data.txt", b"hello", "unknown input format"),
        ("bad.parquet", b"not parquet", "Parquet"),
    ],
)
def test_unreadable_files_name_the_file(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_input(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_input(tmp_path / "nope.jsonl")


def test_jsonl_bad_lines_become_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps(RECORDS[0]).encode(),
        b'{"question": "caf\xe9", "answer": "x"}',  # latin-1 byte inside
        b"{not json",
        b"[1, 2]",
        b"",
        json.dumps(RECORDS[1]).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    data = read_input(path)
    assert data.num_rows == 5  # the blank line is not a row
    assert set(data.row_errors) == {1, 2, 3}
    assert "line 2" in data.row_errors[1] and "UTF-8" in data.row_errors[1]
    assert "line 3" in data.row_errors[2] and "malformed JSON" in data.row_errors[2]
    assert "line 4" in data.row_errors[3] and "list" in data.row_errors[3]
    table = Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(data)
    assert table.num_rows == 5
    assert table["j.status"].to_pylist() == ["ok", "bad_input", "bad_input", "bad_input", "ok"]
    assert table["question"].to_pylist() == ["2+2?", None, None, None, "Capital of Peru?"]


def test_mixed_type_column_kept_as_text(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "m.jsonl", [{"question": "a", "answer": 1}, {"question": "b", "answer": {"x": [1]}}]
    )
    data = read_input(path)
    assert data.table["answer"].to_pylist() == ["1", '{"x": [1]}']


def test_unicode_survives_the_round_trip(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "u.jsonl", [{"question": "中文 ¿qué? 🎉", "answer": "naïve\ttab\nline"}])
    backend = ScriptedBackend([YES], cycle=True)
    out = tmp_path / "out.jsonl"
    Engine(JUDGE, backend).run_file(path, out)
    assert backend.requests[0].messages[-1].content == "Q: 中文 ¿qué? 🎉\nA: naïve\ttab\nline"
    assert read_output(out)["question"].to_pylist() == ["中文 ¿qué? 🎉"]


def test_over_long_prompt_is_a_row_status(tmp_path: Path) -> None:
    records = [{"question": "short", "answer": "ok"}, {"question": "x" * 5000, "answer": "long"}]
    backend = ScriptedBackend([YES], cycle=True, max_prompt_chars=2000)
    table = Engine(JUDGE, backend).run(records)
    assert table["j.status"].to_pylist() == ["ok", "too_long"]


@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".feather", ".jsonl"])
def test_every_output_format(tmp_path: Path, suffix: str) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / f"out{suffix}"
    Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run_file(src, out)
    table = read_output(out)
    assert table.num_rows == 2
    assert table["j.judgment"].to_pylist() == [True, True]
    assert table["j.status"].to_pylist() == ["ok", "ok"]
    if suffix != ".jsonl":
        assert table.schema.field("j.judgment").type == pa.bool_()
        assert b"jurist" in table.schema.metadata


def test_unknown_output_format_rejected_before_any_work(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    backend = ScriptedBackend([YES], cycle=True)
    with pytest.raises(InputError, match="unknown output format"):
        Engine(JUDGE, backend).run_file(src, tmp_path / "out.xlsx")
    assert backend.requests == []


def test_writer_is_atomic(tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    schema = pa.schema([pa.field("a", pa.int64())])
    with pytest.raises(RuntimeError), OutputWriter(out, schema) as writer:
        writer.write(pa.table({"a": [1, 2]}))
        raise RuntimeError("crash mid-run")
    assert not out.exists() and not (tmp_path / "r.parquet.partial").exists()


def test_row_id_column_in_input_is_used(tmp_path: Path) -> None:
    records = [{"row_id": "abc", **RECORDS[0]}, {"row_id": "def", **RECORDS[1]}]
    table = Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(records)
    assert table["row_id"].to_pylist() == ["abc", "def"]
    assert table.column_names.count("row_id") == 1


def test_input_column_clashing_with_output_is_reported() -> None:
    records = [{"question": "q", "answer": "a", "j.status": "mine"}]
    with pytest.raises(InputError, match="clash"):
        Engine(JUDGE, ScriptedBackend([YES], cycle=True)).run(records)
