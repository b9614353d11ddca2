"""Checking a run's committed results before resuming them, and mending what can be mended.

Between two runs a part file can go missing, be truncated (a full disk, a copy cut short) or otherwise
become unreadable, and the manifest can be damaged the same way. Resuming on top of that would end in a
traceback at the merge, or worse in an output with rows missing or repeated. So a resumed run first checks:

* the manifest (:func:`check_manifest`, before :func:`~jurist.io.parts.check_output` looks at the output):
  it must parse and agree with itself (parts in order, each starting where the last ended, the rows adding
  up). When it does not, the run stops and names it; with ``repair`` it is rebuilt from the part files,
  each of which records the run's fingerprint and its first row (:data:`PART_KEY`): the longest run of
  readable parts of this run from row 0 is kept, and everything after is judged again by resuming;
* every part the manifest lists (:func:`damaged_parts`): it must exist, read in full, hold the rows the
  manifest says and the run's columns. The damaged ones are named; with ``repair`` exactly their rows are
  judged again and written under the same names (:meth:`~jurist.io.parts.ResultStore.rewrite`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jurist.io.parts import (
    FINGERPRINT_KEY,
    MANIFEST,
    PART_KEY,
    OutputError,
    ResultStore,
    parts_dir,
    write_atomic,
)

_PART_NAME = re.compile(r"^part-(\d{6})\.parquet$")


@dataclass(frozen=True)
class Damage:
    """One damaged part: its file, the rows it should hold (``start``, ``rows``) and what is wrong."""

    file: str
    start: int
    rows: int
    problem: str

    def describe(self) -> str:
        return f"{self.file} (rows {self.start}-{self.start + self.rows - 1}): {self.problem}"


def _manifest_problem(manifest: Any) -> str | None:
    """Why a parsed manifest cannot be trusted, or None when it agrees with itself."""
    if not isinstance(manifest, dict):
        return "is not a JSON object"
    parts = manifest.get("parts")
    if not isinstance(parts, list) or not isinstance(manifest.get("rows"), int):
        return "lacks its list of parts or its row count"
    start = 0
    for number, part in enumerate(parts):
        if not isinstance(part, dict) or part.get("file") != f"part-{number:06d}.parquet":
            return f"entry {number} does not name part-{number:06d}.parquet"
        if part.get("start") != start or not isinstance(part.get("rows"), int) or part["rows"] < 1:
            return f"entry {number} ({part['file']}) does not start at row {start} or has no rows"
        start += part["rows"]
    if start != manifest["rows"]:
        return f"says {manifest['rows']} rows, but its parts hold {start}"
    return None


def _part_info(path: Path) -> dict[str, Any] | None:
    """What a part file says about itself (run fingerprint, first row, rows), or None when unreadable."""
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return None
    return {**_own(table.schema), "read_rows": table.num_rows}


def check_manifest(
    output: Path, fingerprint: str, *, repair: bool = False, overwrite: bool = False
) -> str | None:
    """Check the manifest of ``output``'s committed results (nothing to do when there are none, or when they
    belong to another run: :func:`~jurist.io.parts.check_output` deals with those).

    A manifest that does not parse or does not agree with itself raises :class:`OutputError` naming it and
    what is wrong; with ``repair`` it is rebuilt from the part files instead, and the line returned says
    what was kept. With ``overwrite`` the results are about to be discarded: nothing is checked."""
    directory = parts_dir(output)
    if overwrite:
        return None
    path = directory / MANIFEST
    problem: str | None
    if not path.exists():
        # a run killed between writing its first part and its first manifest leaves part-000000 alone
        if not directory.is_dir() or not any(
            p.name != "part-000000.parquet" for p in directory.glob("part-*")
        ):
            return None
        problem = "is missing, but part files are there"
    else:
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problem = f"does not parse ({exc})"
        else:
            problem = _manifest_problem(manifest)
            if problem is None:
                return None
            if isinstance(manifest, dict) and manifest.get(FINGERPRINT_KEY) not in (None, fingerprint):
                return None  # another run's: check_output refuses it, naming it
    if not repair:
        raise OutputError(
            f"the manifest {path} {problem}; rerun with --repair to rebuild it from the part files (the rows "
            "no readable part of this run holds are judged again), or --overwrite to start afresh",
            source=str(output),
        )
    return _rebuild(directory, fingerprint, problem)


def _rebuild(directory: Path, fingerprint: str, problem: str) -> str:
    parts: list[dict[str, Any]] = []
    rows = 0
    numbered = sorted(
        (int(m.group(1)), p) for p in directory.glob("part-*.parquet") if (m := _PART_NAME.match(p.name))
    )
    for number, part in numbered:
        info = _part_info(part)
        if (
            number != len(parts)
            or info is None
            or info.get(FINGERPRINT_KEY) != fingerprint
            or info.get("start") != rows
            or info.get("read_rows") != info.get("rows")
        ):
            break
        parts.append({"file": part.name, "start": rows, "rows": int(info["rows"])})
        rows += int(info["rows"])
    manifest = {FINGERPRINT_KEY: fingerprint, "rows": rows, "parts": parts, "metadata": {}}
    write_atomic(directory / MANIFEST, lambda p: p.write_text(json.dumps(manifest, indent=1) + "\n"))
    return (
        f"repaired: the manifest {directory / MANIFEST} {problem}; rebuilt from {len(parts)} readable "
        f"part(s) holding rows 0-{rows - 1}; the rest is judged again"
        if parts
        else f"repaired: the manifest {directory / MANIFEST} {problem}, and no part could be kept; "
        "every row is judged again"
    )


def _own(schema: pa.Schema) -> dict[str, Any]:
    """What a part says about itself; empty for parts written before jurist recorded it."""
    try:
        own = json.loads((schema.metadata or {}).get(PART_KEY) or b"{}")
    except ValueError:
        return {"unreadable": True}
    return own if isinstance(own, dict) else {"unreadable": True}


def damaged_parts(store: ResultStore) -> list[Damage]:
    """Every part the manifest lists that is missing, unreadable, short or long, or has other columns."""
    found = []
    wanted = store.schema.remove_metadata()
    for part in store.parts:
        path = store.dir / part["file"]
        start, rows = int(part["start"]), int(part["rows"])
        if not path.is_file():
            found.append(Damage(part["file"], start, rows, "the file is missing"))
            continue
        try:
            table = pq.read_table(path)
        except (OSError, ValueError, pa.ArrowException) as exc:
            problem = f"truncated or unreadable ({str(exc).splitlines()[0][:200]})"
            found.append(Damage(part["file"], start, rows, problem))
            continue
        own = _own(table.schema)
        if table.num_rows != rows:
            found.append(Damage(part["file"], start, rows, f"holds {table.num_rows} rows, not {rows}"))
        elif not table.schema.remove_metadata().equals(wanted):
            found.append(Damage(part["file"], start, rows, "its columns are not this run's"))
        elif own and (own.get(FINGERPRINT_KEY) != store.fingerprint or own.get("start") != start):
            found.append(Damage(part["file"], start, rows, "written by another run, or for other rows"))
    return found


def refuse_damage(store: ResultStore, damage: list[Damage]) -> None:
    """Stop a resumed run on a damaged store, naming every damaged part."""
    rows = sum(d.rows for d in damage)
    raise OutputError(
        f"{len(damage)} committed part(s) in {store.dir} are damaged: "
        + "; ".join(d.describe() for d in damage)
        + f". Rerun with --repair to judge only these {rows} rows again, or --overwrite to start afresh",
        source=str(store.output),
    )
