"""The cascade as a batch source of a :class:`~jurist.engine.run.Run`: :class:`CascadeBatches`.

Chunks are read a window at a time (``max_open_chunks`` of them). Stage 1 judges every row of each chunk;
the rows it does not keep, from every chunk of the window, go to stage 2 together as one batch, and so on.
Each stage's outputs of a chunk are written beside the run (:class:`~jurist.cascade.side.SideStore`) as
soon as the stage has judged them, before the next stage starts; once a chunk's record batch is committed
by the run, they are dropped. A rerun after a crash therefore judges again only the work of the stage that
was interrupted: no committed row, and no row a finished stage judged, is sent to a model again. Each
stage's model is loaded once (the engine's backends are made on first use and kept) and memory holds one
window of chunks.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from jurist.cascade.columns import ABSTAINED, CascadeAssembler, Decision
from jurist.cascade.confidence import confidence_of, verdict_of
from jurist.cascade.engine import CascadeEngine
from jurist.cascade.side import SideStore
from jurist.engine.cascade_report import cascade_report
from jurist.engine.plan import chunk_row_ids
from jurist.engine.run import BatchSource, RunContext
from jurist.engine.stream import judge_chunks
from jurist.engine.summary import JudgeSummary
from jurist.io.sources import Chunk, RowSource
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput


@dataclass
class _Open:
    """A chunk of the window: its rows' stage outputs, confidences and verdicts, and the rows still going
    on to the next stage."""

    chunk: Chunk
    outputs: list[list[JudgeOutput | None]]
    confidences: list[list[float | None]]
    verdicts: list[list[Any]]
    going: list[int]
    decisions: dict[int, Decision] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return self.chunk.start, self.chunk.num_rows


class CascadeBatches(BatchSource):
    """The record batches of a cascade run (see the module); the run's engine is a
    :class:`~jurist.cascade.engine.CascadeEngine`. ``--repair`` sends a damaged part's rows through the
    stages again, as one window."""

    def __init__(self, engine: CascadeEngine) -> None:
        self.engine = engine
        self.side: SideStore | None = None

    def start(self, run: RunContext) -> int:
        """Open the side store of this run, and add the cascade's entry to the run metadata."""
        self.side = SideStore(run.output, run.run_id)
        metadata = run.store.metadata
        metadata["judges"] = [*metadata.get("judges", []), self.engine.judge_entry(run.source)]
        metadata["cascade"] = self.engine.describe_plan()
        return run.store.rows

    def batches(self, run: RunContext) -> Iterator[pa.RecordBatch]:
        engine = self.engine
        assembler = engine.cascade_assembler(run.source)
        chunks = run.source.chunks(engine.chunk_size, run.store.rows)
        while window := list(itertools.islice(chunks, max(1, engine.max_open))):
            yield from self._window(run, assembler, window)
        cost = (engine.plan.calibration or {}).get("cost")
        report = cascade_report(
            [j.name for j in engine.judges], self._store_counts(run), self._side().stats(), cost
        )
        run.summary.cascade = report
        run.store.metadata["cascade"] = {**engine.describe_plan(), "report": report}

    def rejudge(self, run: RunContext, rows: RowSource) -> Iterator[pa.RecordBatch]:
        engine = self.engine
        return self._window(run, engine.cascade_assembler(run.source), list(rows.chunks(engine.chunk_size)))

    def models(self, run: RunContext) -> dict[str, Any]:
        return self.engine.describe_models()

    def done(self, run: RunContext) -> None:
        self._side().remove()

    # ------------------------------------------------------------------------------------ window
    def _side(self) -> SideStore:
        if self.side is None:
            raise RuntimeError("CascadeBatches.start was not called")
        return self.side

    def _window(
        self, run: RunContext, assembler: CascadeAssembler, window: list[Chunk]
    ) -> Iterator[pa.RecordBatch]:
        engine, plan = self.engine, self.engine.plan
        stages = len(engine.judges)
        states = [
            _Open(
                chunk,
                [[None] * chunk.num_rows for _ in range(stages)],
                [[None] * chunk.num_rows for _ in range(stages)],
                [[None] * chunk.num_rows for _ in range(stages)],
                list(range(chunk.num_rows)),
            )
            for chunk in window
        ]
        for stage, judge in enumerate(engine.judges):
            self._judge_stage(run, stage, judge, [s for s in states if s.going])
            for state in states:
                still = []
                for index in state.going:
                    output = state.outputs[stage][index]
                    assert output is not None
                    confidence = confidence_of(judge, output)
                    state.confidences[stage][index] = confidence
                    state.verdicts[stage][index] = verdict_of(judge, output)
                    if not plan.keeps(stage, confidence):
                        still.append(index)
                    elif output.ok:
                        state.decisions[index] = self._decision(state, index, stage, output, "ok", None)
                    else:  # the last stage decides, and failed on this row
                        failed = f"stage {stage + 1} ({judge.name}): {output.error}"
                        state.decisions[index] = self._decision(
                            state, index, None, output, output.status, failed
                        )
                state.going = still
        for state in states:
            for index in state.going:  # with --abstain: below every stage's threshold
                last = state.outputs[-1][index]
                status: str = ABSTAINED if last is None or last.ok else last.status
                error: str | None = (
                    "below the threshold of every stage"
                    if status == ABSTAINED
                    else (last.error if last else None)
                )
                state.decisions[index] = self._decision(state, index, None, None, status, error)
            yield self._batch(run, assembler, state)
            self._side().drop(state.chunk.start)

    def _decision(
        self,
        state: _Open,
        index: int,
        stage: int | None,
        output: JudgeOutput | None,
        status: str,
        error: str | None,
    ) -> Decision:
        model = None
        if stage is not None:
            model = self.engine.stage_model(stage)
        return Decision(
            stage,
            output,
            status,
            error,
            tuple(c[index] for c in state.confidences),
            tuple(v[index] for v in state.verdicts),
            model,
        )

    def _judge_stage(self, run: RunContext, stage: int, judge: Judge, states: Sequence[_Open]) -> None:
        """Fill one stage's outputs of the rows going to it: kept ones from the side store, the rest judged
        in one batch over every chunk of the window, then kept."""
        side = self._side()
        todo = []
        for state in states:
            kept = side.load(*state.key, stage)
            if kept is not None and all(i in kept for i in state.going):
                for index in state.going:
                    state.outputs[stage][index] = kept[index]
            else:
                todo.append(state)
        if not todo:
            return
        engine = self.engine
        tables: list[pa.Table] = []
        numbers: list[int] = []
        errors: dict[int, str] = {}
        for state in todo:
            chunk = state.chunk
            positions = chunk.numbers
            for index in state.going:
                if index in chunk.errors:
                    errors[len(numbers)] = chunk.errors[index]
                numbers.append(positions[index])
            tables.append(chunk.table.take(state.going))
        batch = Chunk(pa.concat_tables(tables), 0, errors, numbers)
        load_before, sent_before = engine.load_seconds, engine.tally.requests
        started = time.perf_counter()
        backend = engine.backend_for(judge)
        runs = judge_chunks([judge], backend, iter([batch]), engine.id_column, max_open=1, tally=engine.tally)
        outputs = [o for _, judged in runs for o in judged[judge.name]]
        seconds = time.perf_counter() - started - (engine.load_seconds - load_before)
        engine.note_model(stage, backend.model_id)
        at = 0
        for state in todo:
            mine = dict(zip(state.going, outputs[at : at + len(state.going)], strict=True))
            at += len(state.going)
            side.save(*state.key, stage, mine)
            for index, output in mine.items():
                state.outputs[stage][index] = output
        stats = side.stats()
        entry = stats.setdefault(str(stage + 1), {})
        for key, value in (
            ("rows", len(outputs)),
            ("requests", engine.tally.requests - sent_before),
            ("prompt_tokens", sum(o.prompt_tokens or 0 for o in outputs)),
            ("completion_tokens", sum(o.completion_tokens or 0 for o in outputs)),
            ("seconds", seconds),
        ):
            entry[key] = entry.get(key, 0) + value
        side.save_stats(stats)

    def _batch(self, run: RunContext, assembler: CascadeAssembler, state: _Open) -> pa.RecordBatch:
        engine, chunk = self.engine, state.chunk
        decisions = [state.decisions[i] for i in range(chunk.num_rows)]
        outputs = {j.name: state.outputs[k] for k, j in enumerate(engine.judges)}
        provenance = {j.name: j.provenance(engine.stage_model(k) or "") for k, j in enumerate(engine.judges)}
        batch = assembler.cascade_batch(
            chunk.table, chunk_row_ids(chunk, engine.id_column), outputs, provenance, decisions
        )
        summary = run.summary
        summary.rows += chunk.num_rows
        for judge, outs in zip(engine.judges, state.outputs, strict=True):
            counted = summary.judges.setdefault(judge.name, JudgeSummary())
            for output in outs:
                if output is not None:
                    counted.add(output)
        own = summary.judges.setdefault(engine.plan.name, JudgeSummary())
        for decision in decisions:
            own.count(decision.status, decision.error, decision.output.score if decision.output else None)
        summary.models.update(engine.models_by_name())
        summary.models[engine.plan.name] = " -> ".join(j.name for j in engine.judges)
        if run.progress is not None:
            first = [o for o in state.outputs[0] if o is not None]
            run.progress.update({engine.judges[0].name: first})
        return batch

    def _store_counts(self, run: RunContext) -> dict[str, Any]:
        """Rows by deciding stage and status, over every committed batch (this run's and earlier ones')."""
        name = self.engine.plan.name
        stages: dict[int, int] = {}
        statuses: dict[str, int] = {}
        rows = 0
        for batch in run.store.batches():
            stage_values = batch.column(batch.schema.get_field_index(f"{name}.stage")).to_pylist()
            status_values = batch.column(batch.schema.get_field_index(f"{name}.status")).to_pylist()
            for stage, status in zip(stage_values, status_values, strict=True):
                rows += 1
                statuses[status] = statuses.get(status, 0) + 1
                if stage is not None:
                    stages[stage] = stages.get(stage, 0) + 1
        return {"rows": rows, "stages": stages, "statuses": statuses}
