"""Where labels come from and how they meet rows: one value, :class:`LabelSource`, that every command
reading labels builds from the same options (``jurist agree``, ``estimate``, ``audit``, ``calibrate``,
``compare``, ``report``, ``probe fit``, ``bench``, a cascade's calibration) and joins by one id rule (its
docstring). A labels file that a sampling plan wrote (:mod:`jurist.labels.sampling`) also gives each row's
chance of having been chosen (its ``probability`` column), which ``jurist estimate`` weights each label by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.opening import open_source
from jurist.io.results import ResultTable
from jurist.io.tabular import ID_COLUMNS, id_column_of, row_ids
from jurist.labels.vocabulary import parse_label_map

LABEL = "label"
PROBABILITY = "probability"
ROW_ID, ID = ID_COLUMNS
BY_POSITION = "its row positions (0, 1, ...; give --labels-id-column to match by an id column)"


class ResultLabels(NamedTuple):
    """One label per result row (None: unlabelled), and each row's chance of having been chosen for
    labelling (None when the source records none)."""

    labels: list[Any]
    probabilities: list[float | None] | None


@dataclass(frozen=True)
class KeyedLabels:
    """A file's or verdicts' labels by row id, read once (``--label-map`` applied). ``ids``: every line's id
    in order; ``how``: how they were matched, in words; ``chances``: a sampling plan's probabilities by id,
    None when the file records none."""

    source: str
    how: str
    ids: tuple[str, ...]
    labels: Mapping[str, Any]
    chances: Mapping[str, Any] | None = None

    def join(self, row_ids: Sequence[str], rows: str) -> list[Any]:
        """One label per row id (None where it has none); fails when no id matches a row of ``rows``
        (the rows in words)."""
        if not any(row in self.labels for row in row_ids):
            raise self.no_match(row_ids, rows)
        return [self.labels.get(row) for row in row_ids]

    def no_match(self, row_ids: Sequence[str], rows: str) -> InputError:
        """The error of a source none of whose ids match a row."""
        return InputError(
            f"no label of {self.source} matches a row of {rows}: its lines are matched by {self.how} "
            f"(the labels' ids start {_sample(self.ids)}; the rows' start {_sample(row_ids)})"
        )

    def probabilities(self, row_ids: Sequence[str]) -> list[float | None] | None:
        """Each row's chance of having been chosen for labelling; None when the file records none. A
        probability outside (0, 1] fails, naming its row."""
        if self.chances is None:
            return None
        values = [self.chances.get(row) for row in row_ids]
        for row, p in zip(row_ids, values, strict=True):
            if p is not None and (isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1):
                raise InputError(
                    f"row {row!r}: the selection probability must be a number in (0, 1], not {p!r}"
                )
        return [None if p is None else float(p) for p in values]

    def check_held(self, held: Sequence[str]) -> None:
        """Refuse labels for rows that are not among ``held`` (the results' row ids)."""
        known = set(held)
        unknown = [v for v in self.ids if v not in known]
        if unknown:
            shown = ", ".join(repr(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            raise InputError(
                f"{self.source}: {len(unknown)} of its {len(self.ids)} labels (matched by {self.how}) are "
                f"for rows the results do not hold (ids {shown}; the results have {len(held)} rows)"
            )


@dataclass(frozen=True)
class LabelSource:
    """Where labels come from: a labels ``file`` (``--labels``: ``jurist label``'s JSONL, an LLMBar JSON
    file, a CSV, anything jurist reads; its ``column``, default ``label``), or without a file the rows' own
    ``column`` (of the results, or of the input), or a results file's ``verdicts`` (judge
    ``verdict_judge``, default its only one: a bigger judge's verdicts as labels; an inconclusive verdict is
    no label; with ``soft``, each row's label distribution where the judge wrote one, its
    ``judgment_p.<label>`` columns, a mapping label -> probability: soft targets). ``label_map``
    (``"1=a,2=b"``) maps the labels read, whatever the source; the commands then
    normalise them per judge (:mod:`jurist.labels.vocabulary`). Options that do not go together are an
    :class:`~jurist.errors.InputError` when the value is made.

    The one id rule, for every consumer:

    * a labels file's lines are matched by the first of: ``id_column`` (``--labels-id-column``); the
      file's ``row_id`` column (what ``jurist label`` writes); the column the rows' ids come from (the
      input's ``--id-column``, or the one the results' run was given), where the file has it; the file's
      ``id`` column; otherwise the line positions 0, 1, ... (LLMBar's JSON files). A results file's
      verdicts are matched by its ``row_id``;
    * the rows' ids are the run's row ids: a results table's ``row_id`` column; for an input, its id
      column (``--id-column``, else ``row_id``, else ``id``) or, where a row has no id, its position as
      text, as a run writes them (:func:`jurist.io.tabular.row_ids`);
    * the last line of a row wins (a correction, or an undo's null label, is appended after what it
      changes);
    * a file or verdicts none of whose ids match a row fail with an InputError naming the file, how its
      lines were matched and the first ids on both sides.
    """

    file: Path | None = None
    column: str | None = None
    id_column: str | None = None
    label_map: str | None = None
    verdicts: Path | None = None
    verdict_judge: str | None = None
    soft: bool = False

    def __post_init__(self) -> None:
        file, verdicts, column = self.file is not None, self.verdicts is not None, self.column is not None
        judge, ids = self.verdict_judge is not None, self.id_column is not None
        problems = {
            "give --labels or --verdicts, not both": file and verdicts,
            "give --labels FILE, --label-column or --verdicts RESULTS": not (file or verdicts or column),
            "--label-column names a column of --labels or of the rows, not --verdicts": verdicts and column,
            "--verdict-judge names a judge of --verdicts: give --verdicts": judge and not verdicts,
            "--labels-id-column names a column of --labels: give --labels": ids and not file,
            "--soft reads the label probabilities of --verdicts: give --verdicts": self.soft and not verdicts,
        }
        problem = next((text for text, bad in problems.items() if bad), None)
        if problem is not None:
            raise InputError(problem)
        parse_label_map(self.label_map)

    @property
    def own_column(self) -> str | None:
        """The rows' own label column: ``column`` when there is no file and no verdicts, else None."""
        return self.column if self.file is None and self.verdicts is None else None

    def describe(self, rows: str = "the rows") -> str:
        """Where the labels come from, in words (``rows``: the rows a label column belongs to)."""
        if self.verdicts is not None:
            judge = f" of judge {self.verdict_judge}" if self.verdict_judge else ""
            return f"verdicts{judge} in {self.verdicts}"
        return str(self.file) if self.file is not None else f"column {self.column!r} of {rows}"

    def identity(self) -> dict[str, Any]:
        """What decides the labels read (the options; the file's or verdicts' SHA-256): a cache's key."""
        path = self.file or self.verdicts
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if path is not None else None
        return {**{k: None if v is None else str(v) for k, v in vars(self).items()}, "sha256": digest}

    def for_results(self, results: ResultTable, *, held_only: bool = False) -> ResultLabels:
        """One label per result row, matched on the results' ``row_id``, and the sampling plan's
        probabilities where the labels file records them (the file is read once). ``held_only``: refuse
        labels for rows the results do not hold (``jurist compare``)."""
        own = self.own_column
        if own is not None:
            return ResultLabels(self._mapped(results.values(own)), None)
        if results.id_column is None:
            raise InputError("the results have no row_id column to match labels on")
        ids = [str(v) for v in results.values(results.id_column)]
        keyed = self.read((results.metadata.get("options") or {}).get("id_column") or ROW_ID)
        labels = keyed.join(ids, "the results (by their 'row_id')")
        if held_only:
            keyed.check_held(ids)
        return ResultLabels(labels, keyed.probabilities(ids))

    def for_rows(self, rows: Sequence[Mapping[str, Any]], id_column: str | None = None) -> list[Any]:
        """One label per input row (None where a row has none): the rows' own column, or the file or verdicts
        matched on the rows' ids (``id_column``, else ``row_id``, else ``id``, else positions)."""
        names = list(dict.fromkeys(k for row in rows for k in row))
        own = self.own_column
        column = own or id_column_of(names, id_column)
        if column is not None and column not in names:
            what = "label" if own else "id"
            raise InputError(f"the input has no {what} column {column!r} (columns: {', '.join(names)})")
        values = None if column is None else [row.get(column) for row in rows]
        if own is not None:
            return self._mapped(values or [])
        ids = row_ids(values, range(len(rows)))
        by = f"its column {column!r}" if column is not None else "row position"
        return self.read(column).join(ids, f"the input (by {by})")

    def read(self, rows_id_column: str | None = None) -> KeyedLabels:
        """The file's or the verdicts' labels by row id (``rows_id_column``: the column the rows' ids come
        from, which the file's lines match where it has that column)."""
        if self.verdicts is not None:
            return self._verdicts(self.verdicts)
        if self.file is None:
            raise InputError(f"labels from {self.describe()} are a column of the rows, not a file")
        keep = [c for c in (self.id_column, rows_id_column) if c is not None]
        table = open_source(str(self.file), id_columns=keep).read_whole().table
        name = self.column or LABEL
        if name not in table.column_names:
            raise InputError(
                f"{self.file} has no label column {name!r} (columns: {', '.join(table.column_names)})"
            )
        ids, how = self._file_ids(table, rows_id_column)
        labels = self._mapped(table.column(name).to_pylist())
        chances = None
        if PROBABILITY in table.column_names and table.column(PROBABILITY).null_count < table.num_rows:
            chances = dict(zip(ids, table.column(PROBABILITY).to_pylist(), strict=True))
        return KeyedLabels(str(self.file), how, tuple(ids), dict(zip(ids, labels, strict=True)), chances)

    def _file_ids(self, table: pa.Table, rows_id_column: str | None) -> tuple[list[str], str]:
        names = table.column_names
        column = self.id_column or next((c for c in (ROW_ID, rows_id_column, ID) if c and c in names), None)
        if column is None:
            return [str(i) for i in range(table.num_rows)], BY_POSITION
        if column not in names:
            raise InputError(f"{self.file} has no id column {column!r} (columns: {', '.join(names)})")
        return [str(v) for v in table.column(column).to_pylist()], f"its column {column!r}"

    def _verdicts(self, path: Path) -> KeyedLabels:
        results = ResultTable.open(path)
        names = results.names
        name = self.verdict_judge or (names[0] if len(names) == 1 else None)
        if name is None:
            raise InputError(
                f"holds judges {', '.join(names)}: name one with --verdict-judge", source=str(path)
            )
        if results.id_column is None:
            raise InputError("has no row_id column to match its verdicts on", source=str(path))
        columns = results.judge(name)
        verdicts = results.values(columns.verdict)
        ids = [str(v) for v in results.values(results.id_column)]
        labels = self._mapped(None if v == "inconclusive" else v for v in verdicts)
        if self.soft:  # the label distribution where the row has one, else the verdict
            found = columns.label_probabilities()
            if not found:
                raise InputError(f"judge {name} wrote no label probabilities (LOGPROBS)", source=str(path))
            shares = {label: results.values(column) for label, column in found.items()}
            dists = [{k: v[i] for k, v in shares.items()} for i in range(len(ids))]
            labels = [d if None not in d.values() else v for d, v in zip(dists, labels, strict=True)]
        by_id = dict(zip(ids, labels, strict=True))
        return KeyedLabels(f"the verdicts of {name} in {path}", f"its column {ROW_ID!r}", tuple(ids), by_id)

    def _mapped(self, labels: Iterable[Any]) -> list[Any]:
        mapping = parse_label_map(self.label_map)
        if mapping is None:
            return list(labels)
        return [None if v is None else mapping.get(str(v).strip(), v) for v in labels]


def _sample(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values[:3]) or "nothing"
