"""One reader of result tables: which judges a table holds, of which kind, and which of their columns.

A results file written by jurist carries its run metadata (:mod:`jurist.engine.metadata`): one entry per
judge with its ``kind`` (``pointwise``, ``pairwise``, ``reward``, ``rag``, ``rule``) and the full names of
its ``columns``, and, for a panel, the panel's entry. :class:`ResultTable` reads them, so that filtering,
preference pairs, agreement, calibration, ``jurist info``, the benchmark and the audits ask it for
``judge.column("score")`` instead of building ``f"{judge}.score"`` strings and guessing a judge's kind from
the columns it happens to have.

Tables without jurist's metadata (a file from before version 0.1 wrote kinds, or a table built by hand)
are read by their columns: a judge is a prefix with a ``.status`` column, pairwise when it has a
``.winner``; :attr:`ResultTable.from_metadata` says which way a table was read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.dataset import ResultsDataset, is_results_dataset
from jurist.io.formats import output_format
from jurist.io.location import Place
from jurist.io.parts import read_metadata
from jurist.io.writers import read_output

PAIRWISE = "pairwise"  # the kind whose verdict is a winner
PANEL = "panel"  # the kind of a panel's entry (each judge kind names itself: JudgeKind.kind_name)


@dataclass(frozen=True)
class JudgeColumns:
    """A judge's columns in one result table: ``<name>.<suffix>`` for each suffix it wrote."""

    name: str
    kind: str
    suffixes: tuple[str, ...]
    pairwise: bool = False
    """A pairwise judge, or a panel of pairwise judges: its verdict is a winner."""

    def has(self, suffix: str) -> bool:
        return suffix in self.suffixes

    def column(self, suffix: str) -> str:
        """The full name of the judge's ``suffix`` column; an :class:`InputError` listing the judge's
        columns when it wrote none by that name."""
        if suffix not in self.suffixes:
            raise InputError(
                f"judge {self.name!r} has no column {self.name}.{suffix} "
                f"(its columns: {', '.join(self.columns) or 'none'})"
            )
        return f"{self.name}.{suffix}"

    def get(self, suffix: str) -> str | None:
        """The full name of the ``suffix`` column, or None when the judge has none."""
        return f"{self.name}.{suffix}" if suffix in self.suffixes else None

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(f"{self.name}.{s}" for s in self.suffixes)

    @property
    def score(self) -> str:
        return self.column("score")

    @property
    def status(self) -> str:
        return self.column("status")

    @property
    def verdict(self) -> str:
        """The column holding the verdict: ``winner`` for pairwise judges and panels, else ``judgment``."""
        for suffix in ("winner", "judgment"):
            if suffix in self.suffixes:
                return f"{self.name}.{suffix}"
        raise InputError(f"judge {self.name!r} has neither a winner nor a judgment column")

    def label_probabilities(self) -> dict[str, str]:
        """Label -> column of the judgment's label probabilities (``<judge>.judgment_p.<label>``; LOGPROBS
        scoring), empty when the judge has none."""
        prefix = "judgment_p."
        return {s[len(prefix) :]: f"{self.name}.{s}" for s in self.suffixes if s.startswith(prefix)}


class ResultTable:
    """A result table (or the columns of one that were read) with its judges.

    ``table``: the Arrow table. ``metadata``: the run metadata (None when the table has none).
    """

    def __init__(self, table: pa.Table, metadata: Mapping[str, Any] | None = None) -> None:
        self.table = table
        self.metadata: dict[str, Any] = dict(metadata or {})
        entries = _entries(self.metadata)
        self.from_metadata = bool(entries)
        self.judges: tuple[JudgeColumns, ...] = (
            tuple(_judge_from_entry(e, table.column_names) for e in entries)
            if entries
            else tuple(_judges_from_columns(table.column_names))
        )

    @classmethod
    def open(cls, path: str | Path, columns: Sequence[str] | None = None) -> ResultTable:
        """Read a results file (Parquet, Arrow IPC or JSONL), or a results dataset (a folder or URL prefix:
        its committed shards, :mod:`jurist.io.dataset`), and its run metadata. ``columns``: read only
        these (the judges are still known from the metadata). A file that cannot be read as results (a
        truncated Parquet file, a JSONL line that is not JSON) is an :class:`InputError` naming it."""
        if is_results_dataset(path):
            dataset = ResultsDataset(Place.of(path))
            try:
                return cls(*dataset.read(columns))
            except (pa.ArrowException, OSError) as exc:
                raise InputError(f"not a readable results dataset ({exc})", source=str(path)) from exc
        path = Path(path)
        with readable(path):
            table = read_output(path) if columns is None else _read_columns(path, columns)
            return cls(table, read_metadata(path))

    # --------------------------------------------------------------------------------- judges
    @property
    def names(self) -> list[str]:
        return [j.name for j in self.judges]

    def judge(self, name: str) -> JudgeColumns:
        """A judge (or the panel) by name; an :class:`InputError` listing the judges when absent."""
        for judge in self.judges:
            if judge.name == name:
                return judge
        raise InputError(f"the results hold no judge {name!r} (judges: {', '.join(self.names) or 'none'})")

    @property
    def panel(self) -> JudgeColumns | None:
        return next((j for j in self.judges if j.kind == PANEL), None)

    def of_kind(self, *kinds: str) -> list[JudgeColumns]:
        return [j for j in self.judges if j.kind in kinds]

    @property
    def cascade_stages(self) -> frozenset[str]:
        """The judges that are stages of a cascade in this table (from the metadata; the cascade's own
        columns stand for them, and a stage's columns are null on the rows the cascade did not send it)."""
        entries = self.metadata.get("judges") or ()
        cascades = [e for e in entries if isinstance(e, Mapping) and e.get("cascade")]
        return frozenset(str(s) for e in cascades for s in e.get("stages") or ())

    def owner(self, column: str) -> JudgeColumns | None:
        """The judge whose column ``column`` is, or None for an input or provenance column."""
        return next((j for j in self.judges if column in j.columns), None)

    # -------------------------------------------------------------------------------- columns
    def values(self, column: str) -> list[Any]:
        """A column's values as Python objects; an :class:`InputError` listing the columns when absent."""
        self.require(column)
        values: list[Any] = self.table.column(column).to_pylist()
        return values

    def require(self, *columns: str | None) -> None:
        """Fail, listing the table's columns, when one of ``columns`` is not in it (None is skipped)."""
        missing = [c for c in columns if c is not None and c not in self.table.column_names]
        if missing:
            raise InputError(
                f"no column {', '.join(missing)} in the results "
                f"(columns: {', '.join(self.table.column_names)})"
            )

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    @property
    def id_column(self) -> str | None:
        return "row_id" if "row_id" in self.table.column_names else None


def judge_entry_columns(
    name: str, kind: str, columns: Iterable[str], *, pairwise: bool = False
) -> dict[str, Any]:
    """The metadata entry :class:`ResultTable` reads for one judge (or a panel): its kind and columns,
    and whether its verdict is a winner (a pairwise judge or panel)."""
    return {"name": name, "kind": kind, "columns": list(columns), "pairwise": pairwise or kind == PAIRWISE}


def _entries(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    judges = [e for e in metadata.get("judges") or () if isinstance(e, Mapping) and "kind" in e]
    if not judges:
        return []
    panel = metadata.get("panel")
    return [*judges, *([panel] if isinstance(panel, Mapping) and "kind" in panel else [])]


def _judge_from_entry(entry: Mapping[str, Any], present: Sequence[str]) -> JudgeColumns:
    name = str(entry["name"])
    prefix = f"{name}."
    written = [str(c) for c in entry.get("columns") or ()]
    # a table read with only some columns holds only those
    held = set(present)
    suffixes = tuple(c[len(prefix) :] for c in written if c.startswith(prefix) and c in held)
    kind = str(entry["kind"])
    return JudgeColumns(name, kind, suffixes, bool(entry.get("pairwise")) or kind == PAIRWISE)


def _judges_from_columns(columns: Sequence[str]) -> list[JudgeColumns]:
    """Judges of a table without metadata: each prefix with a ``.status`` column (in column order)."""
    names = [c[: -len(".status")] for c in columns if c.endswith(".status")]
    out = []
    for name in names:
        prefix = f"{name}."
        suffixes = tuple(
            c[len(prefix) :]
            for c in columns
            if c.startswith(prefix) and not any(len(o) > len(name) and c.startswith(f"{o}.") for o in names)
        )
        pairwise = "winner" in suffixes
        kind = PANEL if name == PANEL else PAIRWISE if pairwise else "pointwise"
        out.append(JudgeColumns(name, kind, suffixes, pairwise))
    return out


@contextmanager
def readable(path: Path) -> Iterator[None]:
    """Around reading a results file: a missing file, or one that cannot be read as results (pyarrow's
    ArrowInvalid on a truncated or foreign file, a JSON or UTF-8 error, an I/O error), is an
    :class:`InputError` naming it."""
    if not path.is_file():
        raise InputError("no such results file", source=str(path))
    try:
        yield
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(
            f"not a readable results file ({type(exc).__name__}: {exc})", source=str(path)
        ) from exc


def _read_columns(path: Path, columns: Sequence[str]) -> pa.Table:
    fmt = output_format(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        present = pq.read_schema(path).names
        return pq.read_table(path, columns=[c for c in columns if c in present])
    table = read_output(path)
    return table.select([c for c in columns if c in table.column_names])
