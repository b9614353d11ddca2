"""What defines a run, built once from the command line or from Python: :class:`RunSpec`.

A spec holds the judges' configs, which rows (:class:`Selection`), how they are judged and laid out
(:class:`RunOptions`), a cascade's thresholds (:class:`~jurist.config.cascade.CascadeSettings`) and where
answers come from when not from a model (``answers``: an OpenAI batch output file). It is frozen and
picklable: a Ray actor rebuilds the run's engine from it (:meth:`jurist.engine.core.Engine.from_spec`), and
the run's fingerprint comes from it alone (:meth:`RunSpec.fingerprint`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.config.cascade import CascadePlan, CascadeSettings
from jurist.config.models import JudgeConfig
from jurist.engine.metadata import fingerprint
from jurist.engine.window import MAX_OPEN_CHUNKS
from jurist.io.opening import open_source
from jurist.io.selection import LimitSource, SampleSource
from jurist.io.sources import RowSource, file_identity
from jurist.io.units import UNIT_BYTES
from jurist.judges.panel import default_quorum
from jurist.stats.calibration import Calibration


@dataclass(frozen=True)
class Selection:
    """Which rows a run judges: ``input`` (a path, ``-`` for stdin, anything
    :func:`~jurist.io.opening.open_source` reads, or a dataset of files: a tuple of files, folders, globs or
    URLs, :mod:`jurist.io.units`) in ``input_format``, the first ``limit`` rows or a uniform ``sample`` of
    that many (drawn with ``seed``)."""

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
    """How rows are judged and laid out, besides the judges and their backends (one object: the
    :class:`~jurist.engine.core.Engine` takes it, a :class:`RunSpec` holds it).

    ``chunk_size``: rows per chunk, the unit of planning, writing and resuming (None: the judges'
    ``generation.batch_size``, else 4096); ``carry_input``: copy the input columns into the output;
    ``id_column``: the input column that identifies rows (None: ``row_id``, else ``id``, else the row's
    0-based position in the input); ``panel``: add the panel's per-row columns
    (:mod:`jurist.judges.panel`), with ``quorum`` (None: a majority); ``calibrations``: fitted maps
    (:mod:`jurist.stats.calibration`), each adding ``<judge>.calibrated``; ``max_open_chunks``: with a
    streaming backend, chunks in flight at once; ``unit_bytes``: in a run over a dataset of files, a
    Parquet file bigger than this is judged in slices of its row groups, one unit of work each."""

    chunk_size: int | None = None
    carry_input: bool = True
    id_column: str | None = None
    panel: bool = False
    quorum: int | None = None
    calibrations: tuple[Calibration, ...] = ()
    max_open_chunks: int = MAX_OPEN_CHUNKS
    unit_bytes: int = UNIT_BYTES


@dataclass(frozen=True)
class RunSpec:
    """Everything that decides a run's results: the judges' configs (a cascade's stages, in order, when
    ``cascade`` is set), the rows, the options, the cascade's thresholds, and ``answers``: the OpenAI batch
    output files the answers are read from instead of a model (``--from-batch-results``; one per round of a
    judge that calls the model several times per row)."""

    judges: tuple[JudgeConfig, ...]
    rows: Selection
    options: RunOptions = field(default_factory=RunOptions)
    cascade: CascadeSettings | None = None
    answers: tuple[Path, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The judges' names, in order."""
        return tuple(c.name or "judge" for c in self.judges)

    def cascade_plan(self) -> CascadePlan | None:
        """The cascade's stages and thresholds (None: not a cascade); refused while they are still to be
        calibrated."""
        if self.cascade is None:
            return None
        if self.cascade.pending:
            raise ValueError("the cascade's thresholds are not calibrated yet (jurist.launch.launch does it)")
        return self.cascade.plan(self.names)

    def decisive_options(self) -> dict[str, Any]:
        """What besides the judges and the input decides the results (part of the fingerprint)."""
        options = self.options
        decisive: dict[str, Any] = {
            **self.rows.decisive(),
            "carry_input": options.carry_input,
            "id_column": options.id_column,
            "panel": (options.quorum or default_quorum(len(self.judges))) if options.panel else None,
            "calibrations": [c.column for c in options.calibrations],
        }
        plan = self.cascade_plan()
        if plan is not None:
            decisive["cascade"] = plan.decisive()
        if len(self.answers) == 1:
            decisive["answers"] = file_identity(self.answers[0])
        elif self.answers:
            decisive["answers"] = [file_identity(p) for p in self.answers]
        return decisive

    def fingerprint(
        self,
        input_identity: dict[str, Any],
        decisive: dict[str, Any] | None = None,
        identities: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> str:
        """A short hash of what decides the results of this spec's run over the input so identified
        (``decisive``: :meth:`decisive_options`, when the caller already has them; ``identities``: what the
        judges' scoring modes read besides their configs, from
        :func:`~jurist.engine.metadata.scoring_identities`)."""
        options = self.decisive_options() if decisive is None else decisive
        return fingerprint(self.judges, input_identity, options, identities)
