"""``jurist probe fit`` from start to end: a judge, rows, their labels (people's, or a bigger judge's
verdicts) -> features (:mod:`.features`) -> a chosen and measured head (:mod:`.fit`) -> a head file
(:class:`~jurist.models.probe_head.ProbeHead`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from jurist.backends import check_capability
from jurist.config.loading import load_judge_config
from jurist.config.types import InferenceEngine
from jurist.errors import InputError
from jurist.io.readers import read_input
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource
from jurist.models.probe_head import HiddenLayer, ProbeHead, ProbeModel, head_format
from jurist.probe.cost import COST_ROWS, measure_costs
from jurist.probe.examples import examples, preference_examples
from jurist.probe.features import Feature, default_layers, engine_states, extract
from jurist.probe.fit import FitSettings, accuracy_by_layer, choose, fit
from jurist.records import Pooling


@dataclass(frozen=True)
class ProbeFit:
    """Everything a fit needs. ``config``: a judge config (path or built-in name) with ``overrides``; its
    scoring becomes LOGPROBS for the fit (the head reads the prompt LOGPROBS reads). ``labels``: a column of
    the input, a labels file or a bigger judge's verdicts (their label probabilities where they wrote them:
    soft targets), matched on the rows' ids (``id_column`` of the input, else its ``row_id`` or ``id``, else
    positions: :class:`~jurist.labels.source.LabelSource`). ``pairs``: a column naming each row's
    preference pair, which fits a reward head on those pairs (each row one response; its label says whether
    people preferred it). ``pilot``: choose the layer on that many rows with the multi-layer transformers
    pass (through the engine, a layer at a time, for an early exit or a pooled feature), then read every
    row's state at that layer through the judge's engine (on vLLM, its pooling runner
    on the model cut there), chunked and cached beside the head. ``max_cost``: an early-exit student,
    whose layers are those of the judge's own model that judge in PROBE for at most that share of the judge's
    LOGPROBS time per row (:mod:`.cost`, measured on ``cost_rows`` rows); every state then comes through the
    engine (the pilot's at each such layer), none from transformers. ``pooling``: the feature, the last
    token's state or the mean over the tokens of the template field ``pooled_field`` (default ``response``),
    alone or after it (a pointwise judge's head on labels or label distributions, or a reward head on pairs,
    each response's own tokens); a pooled feature comes through the engine alone, as an early exit's does."""

    config: str
    input: Path
    output: Path
    overrides: Mapping[str, Any] = field(default_factory=dict)
    labels: LabelSource | None = None
    id_column: str | None = None
    layers: tuple[int, ...] | None = None
    settings: FitSettings = field(default_factory=FitSettings)
    batch_size: int | None = None
    pairs: str | None = None
    pilot: int | None = None
    max_cost: float | None = None
    cost_rows: int = COST_ROWS
    pooling: Pooling = "last"
    pooled_field: str | None = None
    factory: Callable[[Any], Any] | None = None
    """What makes the engine's backends from an inference config (default
    :func:`jurist.backends.create_backend`): the states' and the cost's passes."""


def fit_probe(job: ProbeFit) -> tuple[ProbeHead, dict[str, Any]]:
    """Fit a head as ``job`` says, write it to ``job.output`` and return it with the fit's report."""
    if job.pairs is not None and job.settings.mlp_units is not None:  # refused before any row is read
        raise InputError("--mlp fits labels or label distributions; a reward head (--pairs) is linear")
    overrides = {**job.overrides, "judge_params.scoring": "LOGPROBS", "judge_params.probe": None}
    judge = Judge(load_judge_config(job.config, overrides))
    rows = read_input(job.input).rows()
    feature = Feature.of(job.pooling, job.pooled_field, judge, rows)
    labels, source = _labels(job, rows)
    if job.pairs is not None:
        found = preference_examples(judge, rows, [row.get(job.pairs) for row in rows], labels)
    else:
        found = examples(judge, rows, labels)
    if feature.pooling != "last" and found.shape.kind == "pairwise":
        raise InputError(
            f"--pool {feature.pooling} averages one response's tokens: it fits a pointwise judge, and "
            f"{judge.name!r} is a {found.shape.kind} judge"
        )
    pilot = (
        found if job.pilot is None else found.subset(_pilot_rows(len(found.truth), job.pilot, job.settings))
    )
    stored = job.output.with_name(job.output.name + ".states")  # the engine's states, chunked
    extra: dict[str, Any] = {}
    if job.max_cost is None and feature.pooling == "last":
        backend = _backend(judge, job.batch_size)
        try:
            layers = job.layers or default_layers(int(backend.text_config.num_hidden_layers))
            began = time.perf_counter()
            feats = extract(
                judge, pilot, backend, layers, job.output.with_name(job.output.name + ".features.npz")
            )
            run = 0 if feats.cached else len(pilot.truth)  # rows the pass ran now (none: from the cache)
            passes = {"transformers": _pass(run, feats.layers, time.perf_counter() - began)}
        finally:
            backend.close()
        model, states, own, tried = feats.model, feats.states, feats.own, feats.layers
        extra["prompt_tokens_per_row"] = float(feats.tokens.mean())
    else:  # an early exit (the layers within the budget) or a pooled feature: every state through the engine
        model = engine_model(judge)
        tried = tuple(sorted(set(job.layers or default_layers(model["num_layers"]))))
        if job.max_cost is not None:
            costs = measure_costs(judge, found, tried, job.max_cost, job.cost_rows, job.factory, feature)
            extra["cost"] = costs.as_dict()
            tried = costs.affordable
            if not tried:
                shallowest = min(costs.layers)
                raise InputError(
                    f"no layer judges within --max-cost {job.max_cost}: the shallowest tried, {shallowest}, "
                    f"costs {costs.ratio(shallowest):.2f} of the teacher's time per row here; give shallower "
                    "--layers or a larger budget"
                )
        own = None
        reads = [engine_states(judge, pilot, k, stored, factory=job.factory, feature=feature) for k in tried]
        states = np.concatenate([read.states for read in reads], axis=2)
        run = max(read.run for read in reads) // found.shape.prompts_per_row  # rows, each at every layer
        passes = {
            "engine_pilot" if job.pilot is not None else "engine": _pass(
                run, tried, sum(read.seconds for read in reads)
            )
        }
    if job.pilot is None:
        result = fit(found, states, own, tried, job.settings)
    else:  # the layer from the pilot, every row's state at it through the engine
        rng = np.random.default_rng(job.settings.seed)
        li, _, grid = choose(pilot.shape, states, pilot.truth, job.settings, rng, pilot.soft)
        layer = tried[li]
        read = engine_states(judge, found, layer, stored, factory=job.factory, feature=feature)
        passes["engine"] = _pass(read.run // found.shape.prompts_per_row, (layer,), read.seconds)
        result = fit(found, read.states, None, (layer,), job.settings)
        by_layer = accuracy_by_layer(grid, tried, job.settings.cs)
        result.report["pilot"] = {"rows": len(pilot.truth), "by_layer": by_layer}
    objective = "labels" if found.soft is None else "label distributions"
    report = {
        **result.report,
        "labels": source,
        "objective": "preference pairs" if job.pairs else objective,
        "feature_passes": passes,
        "feature": {"pooling": feature.pooling, "field": feature.field},
        "judge": judge.name,
        "model": model,
        "kind": found.shape.kind,
        **extra,
        "input": str(job.input),
    }
    head = ProbeHead(
        model=ProbeModel(**model),
        layer=result.layer,
        pooling=feature.pooling,
        pooled_field=feature.field,
        judge=judge.name,
        prompt_fingerprint=judge.prompt_hash,
        answer_fingerprint=judge.schema_hash,
        labels=found.shape.labels,
        mean=tuple(result.head.mean.tolist()),
        scale=tuple(result.head.scale.tolist()),
        coef=tuple(tuple(row) for row in result.head.coef.tolist()),
        intercept=tuple(result.head.intercept.tolist()),
        hidden=tuple(
            HiddenLayer(weights=tuple(tuple(r) for r in w.tolist()), bias=tuple(b.tolist()))
            for w, b in result.head.hidden
        ),
        format=head_format(bool(result.head.hidden), feature.pooling),
        fit={
            "head": result.family,
            "feature": feature.pooling,
            "c": result.c,
            "layers_tried": list(tried),
            "labels": source,
            "objective": report["objective"],
            "rows": len(found.truth),
        },
        metrics={k: v for k, v in report.items() if k not in ("model", "by_layer")},
    )
    head.save(job.output)
    return head, report


def _labels(job: ProbeFit, rows: Sequence[Mapping[str, Any]]) -> tuple[Sequence[Any], str]:
    """One label per input row (an inconclusive verdict is none; a bigger judge's label distribution where it
    wrote one), and where they came from in words."""
    if job.labels is None:
        raise InputError("give labels: --label-column (a column of the input), --labels FILE or --verdicts")
    soft = job.labels.verdicts is not None and job.pairs is None
    source = replace(job.labels, soft=True) if soft else job.labels
    return source.for_rows(rows, job.id_column), source.describe("the input")


def _pilot_rows(n: int, size: int, settings: FitSettings) -> np.ndarray:
    """``size`` of ``n`` examples drawn at random (seeded), in order: the pilot the layer is chosen on."""
    return np.sort(np.random.default_rng(settings.seed).permutation(n)[: min(size, n)])


def _pass(rows: int, layers: Sequence[int], seconds: float) -> dict[str, Any]:
    """A feature pass in figures: rows run now, layers read, seconds, rows per second."""
    per_second = rows / seconds if rows and seconds > 0 else None
    return {"rows": rows, "layers": list(layers), "seconds": round(seconds, 2), "rows_per_s": per_second}


def engine_model(judge: Judge) -> dict[str, Any]:
    """The judge's model as a head file names it, read from its folder's config without loading it (the
    early-exit route, where no transformers pass runs): its name, weights fingerprint, layers and width."""
    import json

    from jurist.models.resolve import resolve_model
    from jurist.models.truncate import num_layers
    from jurist.models.weights import weights_fingerprint

    resolved = resolve_model(judge.config.inference_config.model.model_name)
    folder = Path(resolved.path)
    if not (folder / "config.json").is_file():
        raise InputError(
            f"{resolved.label}: an early-exit head (--max-cost) or a pooled one (--pool) reads the model "
            "cut, which needs it as a local folder (download it first, then name the folder)"
        )
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    text = config.get("text_config", config)
    return {
        "name": resolved.label,
        "weights": weights_fingerprint(str(folder)),
        "num_layers": num_layers(folder),
        "hidden_size": int(text["hidden_size"]),
    }


def _backend(judge: Judge, batch_size: int | None) -> Any:
    """The transformers backend of the judge's model (features come from transformers, any engine the judge
    names that reads hidden states: their states are the ones vLLM's pooling runner gives)."""
    from jurist.backends.hf.backend import TransformersBackend

    config = judge.config.inference_config
    check_capability(config, "hidden_states", "a probe head reads the model's hidden states")
    native = config.model_copy(update={"engine": InferenceEngine.NATIVE, "engine_params": {}})
    return TransformersBackend(native, batch_size=batch_size or 4)
