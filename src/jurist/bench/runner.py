"""``jurist bench``: throughput of judge models, per (model, judge, mode), on the user's own rows.

For each model, one after another: load it (timed), then for each judge and mode judge a first small batch
on the fresh engine (the cold time: first-call allocation, compilation, cache warm-up) and the full rows
``repeat`` times (the prefix cache emptied before each, where the engine has one; the fastest run is kept),
optionally one row at a time over the first rows (the batched / one-row ratio), and record what each run did
(:func:`jurist.bench.measure.metrics`), the peak memory, and the machine. The model is closed before the next
loads.

With labels (a :class:`~jurist.labels.source.LabelSource` matched to the rows by their ids: ``jurist bench
--labels``, ``--label-column`` or ``--verdicts``), each measurement also reports the verdicts' quality
against them (:mod:`jurist.bench.quality`: accuracy with a 95 % interval, and for
pairwise judges order consistency, the first-shown rate and both decision rules), from its last warm run.

Modes: ``generation`` (decode the answer under the judge's constraint), ``logprobs`` (read the label
distribution after one prefill; BOOL, ENUM and INT judgments and pairwise judges), ``probe`` (a probe head,
``--judge_params.probe HEAD``, reads it from the hidden state of the same prefill, on the model cut at the
head's layer; the head is given to this mode only), ``reward`` (a reward model or classifier,
``reward_judge_params``: one prefill through the engine's pooling path). A judge that a mode does not apply
to is listed with the reason.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import IO, Any

from jurist.backends.base import Backend, describe
from jurist.bench.measure import PeakMemory, metrics, query_gpus, timed
from jurist.bench.quality import quality, quality_by_group
from jurist.config.inference import InferenceConfig
from jurist.config.loading import load_judge_config
from jurist.config.models import JudgeConfig
from jurist.engine.core import Engine
from jurist.engine.metadata import environment
from jurist.errors import ConfigError, JuristError
from jurist.io.opening import open_source
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource
from jurist.records import EngineUse
from jurist.scoring import MODES as SCORING_MODES

SCORING = {kind.bench_name: mode.value for mode, kind in SCORING_MODES.items()}
"""Each scoring mode as ``--modes`` names it (generation, logprobs, probe) -> ``judge_params.scoring``."""
MODES = (*SCORING, "reward")
PREFILL_ONLY = ("reward", *(kind.bench_name for mode, kind in SCORING_MODES.items() if mode.reads_labels))
"""Modes that decode nothing: a valid row is an ok row with a score."""


@dataclass(frozen=True)
class BenchSpec:
    """What to measure: judges (paths, built-in names or configs), models (None: each judge's own), modes,
    rows (in memory), repeats, cold rows, the one-row loop's rows (0: none), config overrides, labels (None:
    no quality report; matched to the rows by their ids, :attr:`truth`) and ``by``, a column of the rows
    whose values split the quality report."""

    judges: Sequence[str | JudgeConfig | Mapping[str, Any]]
    rows: Sequence[Mapping[str, Any]]
    models: Sequence[str | None] = (None,)
    modes: Sequence[str] = ("generation",)
    repeat: int = 1
    cold_rows: int = 8
    one_row: int = 0
    overrides: Mapping[str, Any] = field(default_factory=dict)
    labels: LabelSource | None = None
    by: str | None = None

    def check(self) -> None:
        unknown = [m for m in self.modes if m not in MODES]
        if unknown:
            raise ConfigError(f"unknown mode {', '.join(unknown)}; modes: {', '.join(MODES)}")
        if not self.rows:
            raise ConfigError("no rows to measure")
        if self.repeat < 1:
            raise ConfigError(f"--repeat must be at least 1, got {self.repeat}")
        if self.by is not None and self.labels is None:
            raise ConfigError("groups (--by) need labels")
        names = dict.fromkeys(k for row in self.rows for k in row)
        if self.by is not None and self.by not in names:
            raise ConfigError(f"--by {self.by!r}: the input has no such column ({', '.join(names)})")
        _ = self.truth  # the labels read and matched now, before any model loads

    @cached_property
    def truth(self) -> list[Any] | None:
        """One label per row (None where a row has none), read once; None without labels."""
        return None if self.labels is None else self.labels.for_rows(self.rows)


def bench_spec(input: str, count: int, **fields: Any) -> BenchSpec:
    """``jurist bench``'s spec over the first ``count`` rows of ``input`` (any dataset jurist reads), with
    ``fields`` of :class:`BenchSpec` (its labels matched to these rows by their ids), checked."""
    table, _ = open_source(input).read_all()
    spec = BenchSpec(rows=table.slice(0, count).to_pylist(), **fields)
    spec.check()
    return spec


def machine() -> dict[str, Any]:
    """The machine (CPU model and cores, memory, GPUs with their memory) and the library versions."""
    described = environment()
    try:
        import psutil

        described["machine"]["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:  # pragma: no cover
        pass
    gpus = query_gpus("name", "memory.total")
    described["machine"]["gpus"] = [{"name": name, "memory_mb": float(memory)} for name, memory in gpus]
    return described


class Bench:
    """Runs a :class:`BenchSpec`; ``factory`` makes a model's backend from its inference config (default:
    ``create_backend``); ``progress`` gets a line per step."""

    def __init__(
        self,
        spec: BenchSpec,
        factory: Callable[[InferenceConfig], Backend] | None = None,
        progress: IO[str] | None = sys.stderr,
    ) -> None:
        spec.check()
        self.spec = spec
        if factory is None:
            from jurist.backends import create_backend

            factory = create_backend
        self.factory = factory
        self.progress = progress
        self.steps = len(spec.models) * len(spec.judges) * len(spec.modes)
        self.step = 0

    def say(self, text: str) -> None:
        if self.progress is not None:
            print(f"[bench] {text}", file=self.progress, flush=True)

    def config(self, judge: Any, model: str | None, mode: str) -> JudgeConfig:
        settings = dict(self.spec.overrides)
        if model is not None:
            settings["inference_config.model.model_name"] = model
        if mode == "reward":
            config = load_judge_config(judge, settings)
            if not config.is_reward:
                raise ConfigError(
                    "mode reward measures reward models (configs with reward_judge_params); this judge "
                    "generates its answer: use generation or logprobs"
                )
            return config
        if mode != "probe":  # the head a probe measurement reads is no key of the other modes
            settings.pop("judge_params.probe", None)
        settings["judge_params.scoring"] = SCORING[mode]
        return load_judge_config(judge, settings)

    def run(self) -> dict[str, Any]:
        """Every measurement, the machine and the settings, as ``bench.json`` holds them."""
        results: list[dict[str, Any]] = []
        started = time.strftime("%Y-%m-%dT%H:%M:%S")
        for model in self.spec.models:
            results.extend(self.model(model))
        return {
            "benchmark": "jurist bench",
            "started": started,
            "environment": machine(),
            "settings": {
                "rows": len(self.spec.rows),
                "labelled": self.spec.labels is not None,
                "repeat": self.spec.repeat,
                "cold_rows": self.spec.cold_rows,
                "one_row": self.spec.one_row,
                "modes": list(self.spec.modes),
                "models": [m or "(each judge's own)" for m in self.spec.models],
            },
            "results": results,
        }

    def model(self, model: str | None) -> list[dict[str, Any]]:
        """Measure every judge and mode on one model: loaded once per engine configuration the measurements
        need (what their scoring modes ask of it, as a run would load it: the lm_head in float32 for
        those that read label probabilities)."""
        configs: list[tuple[Any, str, JudgeConfig | JuristError]] = []
        loads: dict[EngineUse, list[int]] = {}  # what the judges ask of the engine -> positions in configs
        for judge in self.spec.judges:
            for mode in self.spec.modes:
                try:  # a config no judge can run (PROBE without a head, say) is listed with the reason
                    loaded = self.config(judge, model, mode)
                    config: JudgeConfig | JuristError = loaded
                    use = Judge(loaded).engine_config.use
                except JuristError as exc:
                    config, use = exc, EngineUse()
                loads.setdefault(use, []).append(len(configs))
                configs.append((judge, mode, config))
        entries: dict[int, dict[str, Any]] = {}
        for use, positions in sorted(loads.items(), key=lambda item: repr(item[0])):
            measured = self.load(model, [configs[p] for p in positions], use)
            entries.update(zip(positions, measured, strict=True))
        return [entries[p] for p in range(len(configs))]

    def load(
        self, model: str | None, configs: list[tuple[Any, str, JudgeConfig | JuristError]], use: EngineUse
    ) -> list[dict[str, Any]]:
        """Load the model once, measure ``configs`` on it, close it."""
        first = next((c for _, _, c in configs if isinstance(c, JudgeConfig)), None)
        if first is None:
            return [self.refused(judge, model, mode, str(c)) for judge, mode, c in configs]
        label = model or first.inference_config.model.model_name or "default model"
        self.say(f"loading {label}")
        engine_config = first.inference_config.model_copy(update={"use": use})
        with PeakMemory() as memory:
            started = time.perf_counter()
            backend = self.factory(engine_config)
            load_seconds = time.perf_counter() - started
        self.say(f"loaded {backend.model_id} in {load_seconds:.1f} s")
        out = []
        try:
            for judge, mode, config in configs:
                self.step += 1
                if not isinstance(config, JudgeConfig):
                    self.say(f"[{self.step}/{self.steps}] {judge} {mode}: {config}")
                    out.append(self.refused(judge, model, mode, str(config)))
                    continue
                entry = self.measure(backend, config, mode)
                described = describe(backend)
                entry.update(model=backend.model_id, engine=described.get("engine"))
                head = described.get("head_dtype") or described.get("label_head_dtype")
                if head is not None:
                    entry["head_dtype"] = head
                entry["load_seconds"] = round(load_seconds, 3)
                entry["load_peak_rss_mb"] = round(memory.rss_mb, 1)
                out.append(entry)
        finally:
            backend.close()
        return out

    @staticmethod
    def refused(judge: Any, model: str | None, mode: str, why: str) -> dict[str, Any]:
        return {"judge": str(judge), "model": model, "mode": mode, "error": why}

    def measure(self, backend: Backend, config: JudgeConfig, mode: str) -> dict[str, Any]:
        """Cold first batch, ``repeat`` warm runs over every row, the one-row loop on request."""
        spec, rows = self.spec, list(self.spec.rows)
        wrapped = timed(backend)
        engine = Engine(config, wrapped, chunk_size=max(len(rows), 1))
        name = engine.judges[0].name
        where = f"[{self.step}/{self.steps}] {backend.model_id} / {name} / {mode}"
        entry: dict[str, Any] = {"judge": name, "config": config.source, "mode": mode}
        last: dict[str, Any] = {}

        def run(part: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
            wrapped.record = type(wrapped.record)()
            stats = getattr(backend, "prefix_cache_stats", None)
            before = stats() if callable(stats) else None
            with PeakMemory() as memory:
                started = time.perf_counter()
                outputs = engine.outputs(list(part))
                seconds = time.perf_counter() - started
            last["outputs"] = outputs
            after = stats() if before is not None and callable(stats) else None
            cache = (before, after) if before is not None and after is not None else None
            result = metrics(outputs, seconds, wrapped.record, cache, labels_only=mode in PREFILL_ONLY)
            result["peak_rss_mb"] = round(memory.rss_mb, 1)
            result["peak_gpu_mb"] = memory.gpu_mb
            return result

        def reset() -> None:
            method = getattr(backend, "reset_prefix_cache", None)
            if callable(method):
                method()

        reset()
        self.say(f"{where}: cold batch of {min(spec.cold_rows, len(rows))} rows")
        entry["cold"] = run(rows[: max(1, spec.cold_rows)])
        runs = []
        for number in range(spec.repeat):
            reset()
            self.say(f"{where}: {len(rows)} rows, run {number + 1} of {spec.repeat}")
            runs.append(run(rows))
            self.say(
                f"{where}: {runs[-1]['rows_per_s']} rows/s, {runs[-1]['output_tokens_per_s']} output tokens/s"
            )
        entry["warm"] = min(runs, key=lambda r: r["seconds"])
        entry["runs"] = runs
        if spec.truth is not None:
            judge, outputs = engine.judges[0], last["outputs"][engine.judges[0].name]
            entry["quality"] = quality(judge, outputs, spec.truth, rows)
            if spec.by is not None:
                groups = [row.get(spec.by) for row in rows]
                entry["quality_by_group"] = quality_by_group(judge, outputs, spec.truth, groups, rows)
        if spec.one_row:
            loop_rows = rows[: spec.one_row]
            reset()
            self.say(f"{where}: the same {len(loop_rows)} rows batched, then one row at a time")
            batched = run(loop_rows)
            reset()
            tokens = 0
            started = time.perf_counter()
            for row in loop_rows:
                outputs = engine.outputs([row])
                tokens += sum(o.completion_tokens or 0 for outs in outputs.values() for o in outs)
            seconds = time.perf_counter() - started
            entry["one_row"] = {
                "rows": len(loop_rows),
                "seconds": round(seconds, 3),
                "rows_per_s": round(len(loop_rows) / seconds, 3) if seconds else None,
                "output_tokens_per_s": round(tokens / seconds, 1) if seconds else None,
                "batched_same_rows": batched,
            }
            entry["batched_over_one_row"] = (
                round(batched["rows_per_s"] / entry["one_row"]["rows_per_s"], 3)
                if entry["one_row"]["rows_per_s"]
                else None
            )
        return entry


def run_bench(
    spec: BenchSpec,
    factory: Callable[[InferenceConfig], Backend] | None = None,
    progress: IO[str] | None = sys.stderr,
) -> dict[str, Any]:
    """Measure ``spec`` (see :class:`Bench`); the result as ``bench.json`` holds it."""
    return Bench(spec, factory, progress).run()
