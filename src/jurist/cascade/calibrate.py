"""Calibrating a cascade's thresholds on labelled rows of the input, before the run judges the rest.

The labels (a :class:`~jurist.labels.source.LabelSource`: a labels file in any format jurist reads, a
label column of the input, or another run's verdicts) are matched to the input's rows by its one id rule,
on the ids the run gives the rows (:func:`~jurist.engine.plan.chunk_row_ids`). Every stage judges every
labelled row once; each stage's threshold is then chosen by fixed-sequence testing with an exact binomial
bound (:func:`~jurist.stats.selective.calibrate_cascade`). The result is kept beside the output
(``<output>.calibration.json``, keyed by the stages, the labels, the input and the settings), so that a
rerun (a resume after a crash, or a finished run found complete) does not judge the labelled rows again.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from jurist.cascade.confidence import confidence_of, verdict_of
from jurist.cascade.engine import CascadeEngine
from jurist.config.cascade import CalibrationSettings, CascadePlan
from jurist.engine.plan import chunk_row_ids
from jurist.engine.spec import Selection
from jurist.engine.stream import judge_chunks
from jurist.errors import InputError
from jurist.io.sources import Chunk
from jurist.labels.source import LabelSource
from jurist.labels.vocabulary import normalize_labels
from jurist.stats.selective import ThresholdChoice, calibrate_cascade, check_enough_labels


def cache_path(output: Path) -> Path:
    return output.with_name(output.name + ".calibration.json")


def calibrate(
    engine: CascadeEngine, rows: Selection, settings: CalibrationSettings, cache: Path | None = None
) -> tuple[CascadePlan, list[str]]:
    """The engine's plan with calibrated thresholds, and notes for people (stages that keep nothing)."""
    source = rows.open(engine.id_column)
    key = _key(engine, source.identity(), settings, rows)
    if cache is not None and cache.is_file():
        try:
            kept = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = {}
        if kept.get("key") == key:
            return _plan(engine, kept["thresholds"], kept["calibration"]), list(kept["notes"])
    chunk, truth = _labelled_rows(engine, source, settings.labels)
    thresholded = len(engine.judges) if engine.plan.abstain else len(engine.judges) - 1
    check_enough_labels(chunk.num_rows, settings.target, settings.delta, thresholded)
    pairwise = engine.judges[0].kind.kind_name == "pairwise"
    truth = normalize_labels(truth, pairwise)
    per_stage: list[tuple[list[float | None], list[bool]]] = []
    cost: dict[str, dict[str, float]] = {}
    agreement: list[float] = []
    for number, judge in enumerate(engine.judges):
        before_load, before_sent = engine.load_seconds, engine.tally.requests
        started = time.perf_counter()
        backend = engine.backend_for(judge)
        runs = judge_chunks([judge], backend, iter([chunk]), engine.id_column, max_open=1, tally=engine.tally)
        outputs = [o for _, judged in runs for o in judged[judge.name]]
        engine.note_model(number, backend.model_id)
        cost[str(number + 1)] = {
            "rows": len(outputs),
            "requests": engine.tally.requests - before_sent,
            "prompt_tokens": sum(o.prompt_tokens or 0 for o in outputs),
            "completion_tokens": sum(o.completion_tokens or 0 for o in outputs),
            "seconds": time.perf_counter() - started - (engine.load_seconds - before_load),
        }
        correct = [o.ok and verdict_of(judge, o) == t for o, t in zip(outputs, truth, strict=True)]
        per_stage.append(([confidence_of(judge, o) for o in outputs], correct))
        agreement.append(sum(correct) / len(correct))
    abstain = engine.plan.abstain
    choices = calibrate_cascade(per_stage, settings.target, settings.delta, abstain=abstain)
    thresholds = [c.threshold if c is not None else None for c in choices]
    calibration = {
        "method": "fixed-sequence testing with an exact binomial (Clopper-Pearson) bound",
        "labels": settings.labels.describe("the input"),
        "labelled_rows": chunk.num_rows,
        "target_agreement": settings.target,
        "delta": settings.delta,
        "stages": [_stage(c, a) for c, a in zip(choices, agreement, strict=True)],
        "cost": cost,
    }
    notes = _notes(engine, choices, settings)
    if cache is not None:
        payload = {"key": key, "thresholds": thresholds, "calibration": calibration, "notes": notes}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return _plan(engine, thresholds, calibration), notes


def _plan(engine: CascadeEngine, thresholds: list[float | None], calibration: dict[str, Any]) -> CascadePlan:
    old = engine.plan
    return CascadePlan(old.stages, tuple(thresholds), old.abstain, calibration, old.name)


def _stage(choice: ThresholdChoice | None, agreement: float) -> dict[str, Any]:
    base: dict[str, Any] = {"agreement_on_all_labelled_rows": round(agreement, 6)}
    if choice is None:
        return {**base, "threshold": None, "decides every row it sees": True}
    return {**base, **choice.as_dict()}


def _notes(
    engine: CascadeEngine, choices: list[ThresholdChoice | None], settings: CalibrationSettings
) -> list[str]:
    notes = []
    for number, (judge, choice) in enumerate(zip(engine.judges, choices, strict=True), start=1):
        if choice is None:
            continue
        if choice.threshold is None:
            onward = "abstain on" if number == len(choices) else f"go on to stage {number + 1} for"
            notes.append(
                f"cascade stage {number} ({judge.name}) keeps nothing: no threshold certifies agreement "
                f"{settings.target} at delta {choice.delta:.4g} on the {choice.rows} labelled rows "
                f"that reach it; all its rows {onward} a verdict"
            )
        else:
            notes.append(
                f"cascade stage {number} ({judge.name}): threshold {choice.threshold:.4f} keeps "
                f"{choice.kept} of {choice.rows} labelled rows, agreement >= "
                f"{choice.agreement_bound:.3f} at delta {choice.delta:.4g}"
            )
    return notes


def _labelled_rows(engine: CascadeEngine, source: Any, labels: LabelSource) -> tuple[Chunk, list[Any]]:
    """The input rows that have a label, as one chunk, and their labels."""
    keyed = None if labels.own_column is not None else labels.read(engine.id_column)
    tables: list[pa.Table] = []
    numbers: list[int] = []
    errors: dict[int, str] = {}
    truth: list[Any] = []
    seen: list[str] = []
    for chunk in source.chunks(engine.chunk_size):
        ids = chunk_row_ids(chunk, engine.id_column)
        seen += ids[: 3 - len(seen)]
        if keyed is None:
            found = labels.for_rows(chunk.table.to_pylist())
        else:
            found = [keyed.labels.get(i) for i in ids]
        chosen = [i for i, label in enumerate(found) if label is not None]
        for index in chosen:
            if index in chunk.errors:
                errors[len(numbers)] = chunk.errors[index]
            numbers.append(chunk.numbers[index])
            truth.append(found[index])
        tables += [chunk.table.take(chosen)] if chosen else []
    if not truth:
        if keyed is None:
            raise InputError(f"no row of the input {source.source} has a label in {labels.describe()}")
        raise keyed.no_match(seen, f"the input {source.source}")
    return Chunk(pa.concat_tables(tables), 0, errors, numbers), truth


def _key(
    engine: CascadeEngine, identity: dict[str, Any], settings: CalibrationSettings, rows: Selection
) -> str:
    payload = {
        "stages": [j.config.model_dump(mode="json") for j in engine.judges],
        "abstain": engine.plan.abstain,
        "input": identity,
        "rows": rows.decisive(),
        "labels": settings.labels.identity(),
        "settings": {"target": settings.target, "delta": settings.delta},
        "id_column": engine.id_column,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]
