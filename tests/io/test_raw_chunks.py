"""A JSONL file cut into unparsed chunks and parsed elsewhere gives the chunks the source itself reads: the
same rows, unreadable lines (with the same reasons), line numbers, columns and types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.io import sources
from jurist.io.opening import open_source
from jurist.io.raw_chunks import can_cut_raw, raw_chunks
from jurist.io.records import RecordTyper
from jurist.io.selection import LimitSource
from jurist.io.sources import JsonlSource


def nasty_file(path: Path) -> Path:
    lines = [b"\xef\xbb\xbf" + json.dumps({"id": 0, "question": "first", "n": 1.5}).encode()]
    for i in range(1, 40):
        row: dict[str, object] = {"id": i, "question": f"q{i}", "n": i / 4, "tags": {"a": i}}
        if i == 5:
            lines.append(b"{not json")
            continue
        if i == 9:
            lines.append(b"\xff\xfe not utf-8")
            continue
        if i == 13:
            lines.append(b"[1, 2, 3]")
            continue
        if i == 17:
            row["n"] = "not a number"  # does not fit the column's type
        if i == 21:
            row["late"] = "a column the first rows lacked"
        if i == 25:
            lines.append(b"   ")  # blank: skipped
        lines.append(json.dumps(row).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize(("size", "skip"), [(1, 0), (4, 0), (7, 3), (100, 0), (10, 30), (10, 60)])
def test_parsed_raw_chunks_are_the_source_s_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, skip: int
) -> None:
    monkeypatch.setattr(sources, "SCHEMA_ROWS", 12)  # the columns are fixed before the odd rows
    source = open_source(nasty_file(tmp_path / "rows.jsonl"))
    assert isinstance(source, JsonlSource) and can_cut_raw(source)
    expected = list(source.chunks(size, skip))
    typer = RecordTyper(source.source, source.schema)
    got = [raw.parse(typer) for raw in raw_chunks(source, size, skip)]
    assert len(got) == len(expected)
    assert sum(c.num_rows for c in got) == max(0, 40 - skip)  # 40 lines with a row; the blank one is none
    for mine, theirs in zip(got, expected, strict=True):
        assert (mine.start, mine.numbers) == (theirs.start, theirs.numbers)
        assert mine.table.equals(theirs.table)
        assert dict(mine.errors) == dict(theirs.errors)
        assert mine.rows() == theirs.rows()
    reasons = " | ".join(e for c in got for e in c.errors.values())
    if skip == 0:
        for what in (
            "line 6: malformed",
            "line 10: not valid UTF-8",
            "line 14: a list",
            "line 18: column 'n'",
        ):
            assert what in reasons
    assert "late" not in source.schema.names and all("late" not in c.table.column_names for c in got)


def test_only_a_plain_jsonl_file_is_cut_raw(tmp_path: Path) -> None:
    source = open_source(nasty_file(tmp_path / "rows.jsonl"))
    assert not can_cut_raw(LimitSource(source, 5))  # a selection reads through the source
    with pytest.raises(ValueError, match="chunk size"):
        next(raw_chunks(source, 0))  # type: ignore[arg-type]
