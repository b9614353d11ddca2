"""What defines a run, built once from the command line or from Python: :class:`RunSpec`.

A spec holds the judges' configs, which rows (:class:`Selection`) and how they are judged and laid out
(:class:`RunOptions`). It is frozen and picklable: a Ray actor rebuilds the run's engine from it
(:meth:`jurist.engine.core.Engine.from_spec`), and :class:`~jurist.engine.run.Run` takes the run's
fingerprint from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from jurist.analysis.calibration import Calibration
from jurist.config.models import JudgeConfig
from jurist.engine.stream import MAX_OPEN_CHUNKS
from jurist.io.opening import open_source
from jurist.io.selection import LimitSource, SampleSource
from jurist.io.sources import RowSource


@dataclass(frozen=True)
class Selection:
    """Which rows a run judges: ``input`` (a path, ``-`` for stdin, or anything
    :func:`~jurist.io.opening.open_source` reads) in ``input_format``, the first ``limit`` rows or a uniform
    ``sample`` of that many (drawn with ``seed``)."""

    input: Any
    input_format: str | None = None
    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    def open(self, id_column: str | None) -> RowSource:
        """The rows chosen, as a source (``id_column``: the column that identifies rows, if any)."""
        source = open_source(self.input, input_format=self.input_format, id_columns=[id_column or "id"])
        if self.sample is not None:
            source = SampleSource(source, self.sample, self.seed)
        if self.limit is not None:
            source = LimitSource(source, self.limit)
        return source

    def decisive(self) -> dict[str, Any]:
        """What of the selection decides a run's results (its fingerprint; the input is hashed apart)."""
        return {
            "limit": self.limit,
            "sample": self.sample,
            "seed": self.seed if self.sample is not None else None,
        }


@dataclass(frozen=True)
class RunOptions:
    """How rows are judged and laid out, besides the judges and their backends: the keyword arguments of
    :class:`~jurist.engine.core.Engine`, which documents each."""

    chunk_size: int | None = None
    carry_input: bool = True
    id_column: str | None = None
    panel: bool = False
    quorum: int | None = None
    calibrations: tuple[Calibration, ...] = ()
    max_open_chunks: int = MAX_OPEN_CHUNKS

    def as_kwargs(self) -> dict[str, Any]:
        """The options as :class:`~jurist.engine.core.Engine`'s keyword arguments."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["calibrations"] = list(self.calibrations)
        return out


@dataclass(frozen=True)
class RunSpec:
    """Everything that decides a run's results: the judges' configs, the rows, the options."""

    judges: tuple[JudgeConfig, ...]
    rows: Selection
    options: RunOptions = field(default_factory=RunOptions)
