"""Where data lives: a local path or a URL, as a filesystem and a path in it, listed without being read.

A :class:`Place` is a value: a local path (kept absolute) or a URL (``s3://``, ``gs://``, ``hdfs://``,
``abfs://``, ...). Its filesystem comes from pyarrow.fs (:func:`filesystem`), or from fsspec for a scheme
pyarrow does not know (wrapped as a pyarrow filesystem), and is made where it is used, so that a worker on
another machine reads with its own credentials. Credentials come from the environment or the provider's
usual chain (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, an instance role, ...): a URL that carries a
user or password is refused, without repeating it, so that no secret is ever shown, logged or written.

:func:`list_files` turns what a user typed (a file, a folder, a glob with ``*``, ``?``, ``[...]`` and
``**``) into the files it names, with their sizes and modification times, from listings alone.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import InputError

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://(.*)$")
GLOB_CHARS = "*?["


def is_url(text: str) -> bool:
    """Whether ``text`` is a URL (``scheme://...``), not a local path."""
    return _SCHEME.match(text) is not None


def is_glob(text: str) -> bool:
    return any(c in text for c in GLOB_CHARS)


@dataclass(frozen=True)
class Place:
    """A file or folder: ``url`` is a URL or an absolute local path (no credentials in either)."""

    url: str

    @classmethod
    def of(cls, text: str | Path) -> Place:
        """The place a user named (a relative local path is made absolute; a URL's trailing ``/`` goes)."""
        text = str(text)
        match = _SCHEME.match(text)
        if match is None:
            return cls(str(Path(text).expanduser().absolute()))
        scheme, rest = match.groups()
        authority = rest.split("/", 1)[0]
        if "@" in authority:
            raise InputError(
                f"a {scheme}:// URL must not carry a user or password: give credentials through the "
                "environment or the provider's usual chain (for S3: AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, a profile or an instance role)",
                source=f"{scheme}://{authority.rsplit('@', 1)[1]}/...",
            )
        if scheme == "file":
            return cls(str(Path(rest or "/").absolute()))
        return cls(f"{scheme}://{rest.rstrip('/')}")

    @property
    def remote(self) -> bool:
        return is_url(self.url)

    @property
    def local(self) -> Path | None:
        """The local path, or None for a URL."""
        return None if self.remote else Path(self.url)

    @property
    def name(self) -> str:
        return posixpath.basename(self.url.rstrip("/"))

    @property
    def suffixes(self) -> list[str]:
        return Path(self.name).suffixes

    def child(self, relative: str) -> Place:
        return Place(posixpath.join(self.url, relative))

    def fs(self) -> tuple[Any, str]:
        """This place's pyarrow filesystem and its path in it."""
        return filesystem(self.url)

    def open_input_stream(self, compression: str | None = None) -> Any:
        fs, path = self.fs()
        return fs.open_input_stream(path, compression=compression)

    def open_input_file(self) -> Any:
        fs, path = self.fs()
        return fs.open_input_file(path)

    def __str__(self) -> str:
        return self.url


def filesystem(url: str) -> tuple[Any, str]:
    """A pyarrow filesystem for ``url`` and the path in it: a local path, a URL pyarrow.fs knows (``s3``,
    ``gs``, ``hdfs``, ``abfs``, ``file``), else fsspec's filesystem for the scheme."""
    import pyarrow.fs as pafs

    if not is_url(url):
        return pafs.LocalFileSystem(), url
    try:
        fs, path = pafs.FileSystem.from_uri(url)
        return fs, path.rstrip("/")
    except (ValueError, OSError, ImportError) as first:
        try:
            import fsspec

            inner, path = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError, OSError) as exc:
            raise InputError(
                f"cannot open this location ({type(first).__name__}: {first}; fsspec: {exc})",
                source=url,
            ) from exc
        return pafs.PyFileSystem(pafs.FSSpecHandler(inner)), str(path).rstrip("/")


@dataclass(frozen=True)
class Listed:
    """A file found by a listing: its place, size in bytes and modification time (ns; None if unknown)."""

    place: Place
    size: int
    mtime_ns: int | None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over paths: ``*`` and ``?`` stay within a folder, ``**/`` spans any folders."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _hidden(relative: str) -> bool:
    """A name that datasets keep out (``_manifest.json``, ``.partial``), as pyarrow.dataset does."""
    return any(part.startswith(("_", ".")) for part in relative.split("/"))


def list_files(text: str, keep: Any = None) -> tuple[Place, list[Listed]]:
    """The files ``text`` names, sorted by path, and the folder they are named relative to: a file itself
    (its folder), a folder (every file below it whose name ``keep`` accepts, hidden names left out), or a
    glob (the files it matches below the folder before its first wildcard). Only listings are read. A
    missing file or folder, or a glob that matches nothing, is an :class:`InputError` naming it."""
    import pyarrow.fs as pafs

    if is_glob(text):
        head = re.split(r"[*?\[]", text, maxsplit=1)[0]
        base = Place.of(head[: head.rfind("/") + 1] if "/" in head else ".")
        fs, root = base.fs()
        pattern = _glob_regex(text[len(head[: head.rfind("/") + 1]) :] if "/" in head else text)
        infos = _listing(fs, root, text)
        found = [i for i in infos if i.type == pafs.FileType.File and pattern.match(_relative(i.path, root))]
        if not found:
            raise InputError("matches no files", source=text)
        return base, [_entry(base, root, i) for i in found]
    place = Place.of(text)
    fs, path = place.fs()
    try:
        info = fs.get_file_info(path)
    except OSError as exc:
        raise InputError(f"cannot be listed: {exc}", source=place.url) from exc
    if info.type == pafs.FileType.File:
        folder = Place(posixpath.dirname(place.url))
        return folder, [Listed(place, int(info.size), _ns(info))]
    if info.type != pafs.FileType.Directory:
        raise InputError("no such file or folder", source=place.url)
    infos = _listing(fs, path, place.url)
    found = [
        i
        for i in infos
        if i.type == pafs.FileType.File
        and not _hidden(_relative(i.path, path))
        and (keep is None or keep(posixpath.basename(i.path)))
    ]
    if not found:
        raise InputError("holds no dataset files", source=place.url)
    return place, [_entry(place, path, i) for i in found]


def _listing(fs: Any, root: str, shown: str) -> list[Any]:
    import pyarrow.fs as pafs

    try:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except OSError as exc:
        raise InputError(f"cannot be listed: {exc}", source=shown) from exc
    return sorted(infos, key=lambda i: i.path)


def _relative(path: str, root: str) -> str:
    return posixpath.relpath(path, root) if root else path


def _entry(base: Place, root: str, info: Any) -> Listed:
    return Listed(base.child(_relative(info.path, root)), int(info.size), _ns(info))


def _ns(info: Any) -> int | None:
    mtime = getattr(info, "mtime_ns", None)
    return int(mtime) if mtime is not None else None
