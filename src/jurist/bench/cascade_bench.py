"""``jurist bench --cascade A.yaml --cascade B.yaml``: a cascade measured like any judge, through the front
door ``jurist judge dataset`` uses (:func:`jurist.launch.launch`, each run a :meth:`~jurist.launch.Launch.run`
on the same loaded stages), and its last stage measured alone over the same rows.

The stages' models are loaded first (timed, with the peak memory), after calibration when thresholds are
calibrated (its seconds, loading apart, are recorded). A cold run over the first ``cold_rows`` rows (its
results in a scratch folder) is followed by ``repeat`` warm runs over the first ``rows`` rows into
``OUTPUT/cascade.parquet`` (the prefix caches emptied before each; the fastest is kept). A run's seconds
are the cascade run's own (its stages' judging and its commits), without model loading. Then, unless
``baseline`` is off, the last stage is measured alone by :class:`jurist.bench.runner.Bench` over the same
rows, and :func:`jurist.bench.cascaded.compare` sets the two side by side in the cascade's entry.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from jurist.backends.base import Backend, describe
from jurist.bench.cascaded import agreement, compare, names, stage_figures, stage_mode, table_counts
from jurist.bench.measure import PeakMemory, Record, Timed, figures, timed
from jurist.bench.runner import PREFILL_ONLY, Bench, BenchSpec, machine
from jurist.cascade.batches import CascadeBatches
from jurist.cascade.engine import CascadeEngine, check_memory_shares
from jurist.config.cascade import CascadeSettings, stage_configs
from jurist.config.inference import InferenceConfig
from jurist.engine.core import BackendFactory
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import ConfigError
from jurist.io.opening import open_source
from jurist.io.results import ResultTable
from jurist.judges.judge import Judge
from jurist.launch import Launch, launch


@dataclass(frozen=True)
class CascadeBench:
    """What to measure: the stages (``refs``: config paths, built-in names or configs, in order) with
    ``overrides``, the ``input`` and its first ``rows`` rows, how thresholds are set (``settings``),
    ``repeat`` warm runs, a cold run of ``cold_rows``, and whether to measure the last stage alone."""

    refs: Sequence[Any]
    input: str
    output: Path
    settings: CascadeSettings
    rows: int = 200
    overrides: Mapping[str, Any] = field(default_factory=dict)
    repeat: int = 1
    cold_rows: int = 8
    baseline: bool = True

    def check(self) -> None:
        if self.rows < 1:
            raise ConfigError(f"--rows must be at least 1, got {self.rows}")
        if self.repeat < 1:
            raise ConfigError(f"--repeat must be at least 1, got {self.repeat}")


class _Stages:
    """The stages' backends as the cascade's engine gets them: each real backend wrapped in
    :class:`~jurist.bench.measure.Timed` (kept here, to read and empty their records and caches)."""

    def __init__(self, factory: BackendFactory | None) -> None:
        if factory is None:
            from jurist.backends import create_backend

            factory = create_backend
        self.factory = factory
        self.made: list[tuple[Backend, Timed]] = []

    def __call__(self, config: InferenceConfig) -> Backend:
        backend = self.factory(config)
        wrapped = timed(backend)
        self.made.append((backend, wrapped))
        return wrapped  # type: ignore[return-value]

    def reset(self) -> None:
        for backend, wrapped in self.made:
            wrapped.record = Record()
            method = getattr(backend, "reset_prefix_cache", None)
            if callable(method):
                method()

    def cache(self) -> dict[str, float] | None:
        stats = [getattr(b, "prefix_cache_stats", None) for b, _ in self.made]
        if not stats or not all(callable(s) for s in stats):
            return None
        counted = [s() for s in stats]  # type: ignore[misc]
        return {key: float(sum(c[key] for c in counted)) for key in ("queries", "hits")}

    def record(self) -> Record:
        return Record.merged([w.record for _, w in self.made])

    def close(self) -> None:
        for backend, _ in self.made:
            backend.close()
        self.made.clear()


def bench_cascade(
    job: CascadeBench,
    backend_factory: BackendFactory | None = None,
    progress: IO[str] | None = sys.stderr,
) -> dict[str, Any]:
    """Measure ``job`` (see the module); the result as ``bench.json`` holds it: the cascade's entry and,
    unless the baseline is off, the last stage's. ``backend_factory``: how stages' backends are made
    (default: from their configs)."""
    job.check()

    def say(text: str) -> None:
        if progress is not None:
            print(f"[bench] {text}", file=progress, flush=True)

    started_at = time.strftime("%Y-%m-%dT%H:%M:%S")
    configs = stage_configs(job.refs, job.overrides)
    modes = [stage_mode(c) for c in configs]
    job.output.mkdir(parents=True, exist_ok=True)
    rows = open_source(job.input).read_all()[0].slice(0, job.rows).to_pylist()
    count = len(rows)
    options = RunOptions(chunk_size=max(count, 1))
    spec = RunSpec(tuple(configs), Selection(job.input, limit=job.rows), options, cascade=job.settings)
    if backend_factory is None:  # jurist's own backends: the stages' engines must fit one device together
        check_memory_shares([Judge.from_config(c) for c in configs])
    stages = _Stages(backend_factory)
    entry: dict[str, Any] = {}
    try:
        say(
            f"cascade of {len(configs)} stages: preparing"
            + (" and calibrating" if job.settings.calibration else "")
        )
        with PeakMemory() as memory:
            started = time.perf_counter()
            launched = launch(spec, backend_factory=stages)  # no output, so no calibration cache: timed
            preparing = time.perf_counter() - started
            engine, notes = launched.engine, launched.notes
            assert isinstance(engine, CascadeEngine)
            calibration_seconds = preparing - engine.load_seconds
            try:
                for judge in engine.judges:  # every stage's model loads now, not inside a timed run
                    real = getattr(engine.backend_for(judge), "real", None)
                    if callable(real):
                        real()
            except BaseException:
                engine.close()
                raise
        for note in notes:
            say(note)
        try:
            entry = _measure(job, launched, engine, stages, modes, say)
        finally:
            engine.close()
        entry["load_seconds"] = round(engine.load_seconds, 3)
        entry["load_peak_rss_mb"] = round(memory.rss_mb, 1)
        entry["cascade"]["calibration_seconds"] = (
            round(calibration_seconds, 3) if job.settings.calibration is not None else None
        )
        entry["cascade"]["notes"] = notes
    finally:
        stages.close()
    results = [entry]
    if job.baseline:
        last = configs[-1]
        say(f"the last stage alone ({last.name}) over the same {count} rows")
        bench = Bench(
            BenchSpec([last], rows, modes=[modes[-1]], repeat=job.repeat, cold_rows=job.cold_rows),
            backend_factory,
            progress,
        )
        baseline = bench.model(None)[0]
        results.append(baseline)
        if "error" not in baseline:
            entry["cascade"]["vs_last_stage"] = compare(entry, baseline)
    return {
        "benchmark": "jurist bench",
        "started": started_at,
        "environment": machine(),
        "settings": {
            "rows": count,
            "repeat": job.repeat,
            "cold_rows": job.cold_rows,
            "one_row": 0,
            "modes": list(dict.fromkeys(modes)),
            "models": [entry["model"]],
            "cascade": {
                "stages": [str(r) if not isinstance(r, Mapping) else "<python>" for r in job.refs],
                "thresholds": list(job.settings.thresholds),
                "calibration_labels": job.settings.calibration.labels.describe("the input")
                if job.settings.calibration
                else None,
                "abstain": job.settings.abstain,
                "baseline": job.baseline,
            },
        },
        "results": results,
    }


def _measure(
    job: CascadeBench,
    launched: Launch,
    engine: CascadeEngine,
    stages: _Stages,
    modes: Sequence[str],
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The cold run, the warm runs and the cascade's entry (each run the launched one, over its rows)."""
    spec = launched.spec
    labels_only = all(m in PREFILL_ONLY for m in modes)
    judges = [j.name for j in engine.judges]
    cascade = engine.plan.name
    results_path = job.output / "cascade.parquet"

    def run(part: RunSpec, output: Path) -> tuple[dict[str, Any], dict[str, Any], ResultTable]:
        stages.reset()
        before = stages.cache()
        with PeakMemory() as memory:
            again = replace(launched, spec=part, batches=CascadeBatches(engine))
            summary = again.run(output, overwrite=True)
        after = stages.cache()
        table = ResultTable.open(output)
        verdict = table.judge(cascade).verdict
        counts = table_counts(table.table, judges, cascade, verdict, labels_only=labels_only)
        seconds = summary.seconds - summary.load_seconds
        cache = (before, after) if before is not None and after is not None else None
        result = figures(counts, seconds, stages.record(), cache)
        result["requests"] = summary.requests
        result["peak_rss_mb"] = round(memory.rss_mb, 1)
        result["peak_gpu_mb"] = memory.gpu_mb
        assert summary.cascade is not None
        return result, summary.cascade, table

    cold_rows = max(1, min(job.cold_rows, job.rows))
    say(f"cascade: cold run of {cold_rows} rows")
    with tempfile.TemporaryDirectory() as scratch:
        cold_spec = replace(spec, rows=Selection(job.input, limit=cold_rows))
        cold, _, _ = run(cold_spec, Path(scratch) / "cold.parquet")
    runs: list[tuple[dict[str, Any], dict[str, Any], ResultTable]] = []
    for number in range(job.repeat):
        say(f"cascade: {job.rows} rows, run {number + 1} of {job.repeat}")
        runs.append(run(spec, results_path))
        say(f"cascade: {runs[-1][0]['rows_per_s']} rows/s")
    warm, report, table = min(runs, key=lambda r: r[0]["seconds"])
    models = [engine.stage_model(k) or "" for k in range(len(judges))]
    judge_name, model_name = names(judges, models)
    engines = list(dict.fromkeys(str(describe(b).get("engine")) for b, _ in stages.made))
    plan = engine.describe_plan()
    figures_of_cascade: dict[str, Any] = {
        "name": cascade,
        "stages": stage_figures(report, plan, models),
        "abstained": report["abstained"],
        "requests": warm["requests"],
        "backends_loaded": len(stages.made),
        "abstain": plan["abstain"],
        "calibration": plan["calibration"],
        "report": report,
        "results": str(results_path),
    }
    if job.settings.calibration is not None:
        figures_of_cascade["agreement"] = agreement(
            table, job.settings.calibration.labels, [cascade, *judges]
        )
    return {
        "judge": judge_name,
        "config": [str(getattr(c, "source", c)) for c in spec.judges],
        "mode": " -> ".join(dict.fromkeys(modes)),
        "model": model_name,
        "engine": " -> ".join(engines),
        "cold": cold,
        "warm": warm,
        "runs": [r[0] for r in runs],
        "cascade": figures_of_cascade,
    }
