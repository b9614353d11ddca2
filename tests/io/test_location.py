"""Places and listings: what a folder, a glob or a URL names, read from listings alone; credentials never in
a URL (and never repeated when refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurist.errors import InputError
from jurist.io.location import Place, _glob_regex, list_files


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")


def names(root: Path, text: str) -> list[str]:
    base, found = list_files(text)
    return [f.place.url[len(base.url) + 1 :] for f in found]


def test_globs_stay_in_a_folder_unless_they_say_otherwise() -> None:
    assert _glob_regex("*.jsonl").match("a.jsonl")
    assert not _glob_regex("*.jsonl").match("sub/a.jsonl")
    assert _glob_regex("**/*.jsonl").match("sub/deeper/a.jsonl")
    assert _glob_regex("**/*.jsonl").match("a.jsonl")
    assert _glob_regex("part-0?.json[l]").match("part-07.jsonl")
    assert not _glob_regex("part-[!0]*").match("part-0")


def test_a_folder_lists_its_dataset_files_in_order_without_hidden_ones(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "b.jsonl.gz",
        "a.parquet",
        "sub/c.csv",
        "_manifest.json",
        ".part.tmp",
        "notes.txt",
        "_x/d.jsonl",
    )
    keep = lambda name: not name.endswith(".txt")  # noqa: E731
    base, found = list_files(str(tmp_path), keep=keep)
    assert base == Place.of(tmp_path)
    assert [f.place.name for f in found] == ["a.parquet", "b.jsonl.gz", "c.csv"]
    assert all(f.size == 3 and f.mtime_ns for f in found)


def test_a_glob_names_what_it_matches_below_its_folder(tmp_path: Path) -> None:
    touch(tmp_path, "x/part-0.jsonl", "x/part-1.jsonl", "x/sub/part-2.jsonl", "x/other.parquet")
    assert names(tmp_path, f"{tmp_path}/x/*.jsonl") == ["part-0.jsonl", "part-1.jsonl"]
    assert names(tmp_path, f"{tmp_path}/x/**/part-*.jsonl") == [
        "part-0.jsonl",
        "part-1.jsonl",
        "sub/part-2.jsonl",
    ]
    with pytest.raises(InputError, match="matches no files"):
        list_files(f"{tmp_path}/x/*.csv")


def test_a_missing_place_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder") as raised:
        list_files(str(tmp_path / "nope"))
    assert "nope" in str(raised.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no dataset files"):
        list_files(str(tmp_path / "empty"))


def test_a_url_with_credentials_is_refused_without_repeating_them() -> None:
    with pytest.raises(InputError) as raised:
        Place.of("s3://AKIAKEY:very-secret-value@bucket/prefix/")
    text = str(raised.value)
    assert "very-secret-value" not in text and "AKIAKEY" not in text
    assert "environment" in text and "s3://bucket" in text


def test_places_are_values() -> None:
    assert Place.of("s3://bucket/prefix/") == Place("s3://bucket/prefix")
    assert Place.of("s3://bucket/a").child("b/c.parquet").url == "s3://bucket/a/b/c.parquet"
    assert Place.of("relative/x.jsonl").local == Path("relative/x.jsonl").absolute()
    assert Place.of("gs://b/x.jsonl.gz").suffixes == [".jsonl", ".gz"]
    assert Place.of("file:///tmp/x").url == "/tmp/x"
