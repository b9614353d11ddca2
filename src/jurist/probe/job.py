"""``jurist probe fit`` from start to end: a judge, rows, their labels (people's, or a bigger judge's
verdicts) -> features (:mod:`.features`) -> a chosen and measured head (:mod:`.fit`) -> a head file
(:class:`~jurist.models.probe_head.ProbeHead`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.backends import check_capability
from jurist.config.loading import load_judge_config
from jurist.config.types import InferenceEngine
from jurist.errors import InputError
from jurist.io.readers import read_input
from jurist.judges.judge import Judge
from jurist.labels.source import LabelSource
from jurist.models.probe_head import ProbeHead, ProbeModel
from jurist.probe.examples import examples
from jurist.probe.features import default_layers, extract
from jurist.probe.fit import FitSettings, fit


@dataclass(frozen=True)
class ProbeFit:
    """Everything a fit needs. ``config``: a judge config (path or built-in name) with ``overrides``; its
    scoring becomes LOGPROBS for the fit (the head reads the prompt LOGPROBS reads). ``labels``: a column of
    the input, a labels file or a bigger judge's verdicts, matched on the rows' ids (``id_column`` of the
    input, else its ``row_id`` or ``id``, else positions: :class:`~jurist.labels.source.LabelSource`)."""

    config: str
    input: Path
    output: Path
    overrides: Mapping[str, Any] = field(default_factory=dict)
    labels: LabelSource | None = None
    id_column: str | None = None
    layers: tuple[int, ...] | None = None
    settings: FitSettings = field(default_factory=FitSettings)
    batch_size: int | None = None


def fit_probe(job: ProbeFit) -> tuple[ProbeHead, dict[str, Any]]:
    """Fit a head as ``job`` says, write it to ``job.output`` and return it with the fit's report."""
    overrides = {**job.overrides, "judge_params.scoring": "LOGPROBS", "judge_params.probe": None}
    judge = Judge(load_judge_config(job.config, overrides))
    data = read_input(job.input)
    rows = data.rows()
    labels, source = _labels(job, data.table, len(rows))
    found = examples(judge, rows, labels)
    backend = _backend(judge, job.batch_size)
    try:
        total = int(backend.text_config.num_hidden_layers)
        layers = job.layers or default_layers(total)
        cache = job.output.with_name(job.output.name + ".features.npz")
        feats = extract(judge, found, backend, layers, cache)
    finally:
        backend.close()
    result = fit(found, feats.states, feats.own, feats.layers, job.settings)
    report = {
        **result.report,
        "labels": source,
        "judge": judge.name,
        "model": feats.model,
        "kind": found.shape.kind,
        "prompt_tokens_per_row": float(feats.tokens.mean()),
        "input": str(job.input),
    }
    head = ProbeHead(
        model=ProbeModel(**feats.model),
        layer=result.layer,
        judge=judge.name,
        prompt_fingerprint=judge.prompt_hash,
        answer_fingerprint=judge.schema_hash,
        labels=found.shape.labels,
        mean=tuple(result.head.mean.tolist()),
        scale=tuple(result.head.scale.tolist()),
        coef=tuple(tuple(row) for row in result.head.coef.tolist()),
        intercept=tuple(result.head.intercept.tolist()),
        fit={"c": result.c, "layers_tried": list(feats.layers), "labels": source, "rows": len(found.truth)},
        metrics={k: v for k, v in report.items() if k not in ("model", "by_layer")},
    )
    head.save(job.output)
    return head, report


def _labels(job: ProbeFit, table: Any, n: int) -> tuple[Sequence[Any], str]:
    """One label per input row (an inconclusive verdict is none), and where they came from in words."""
    if job.labels is None:
        raise InputError("give labels: --label-column (a column of the input), --labels FILE or --verdicts")
    return job.labels.for_rows(table.to_pylist(), job.id_column), job.labels.describe("the input")


def _backend(judge: Judge, batch_size: int | None) -> Any:
    """The transformers backend of the judge's model (features come from transformers, any engine the judge
    names that reads hidden states: their states are the ones vLLM's pooling runner gives)."""
    from jurist.backends.hf.backend import TransformersBackend

    config = judge.config.inference_config
    check_capability(config, "hidden_states", "a probe head reads the model's hidden states")
    native = config.model_copy(update={"engine": InferenceEngine.NATIVE, "engine_params": {}})
    return TransformersBackend(native, batch_size=batch_size or 4)
