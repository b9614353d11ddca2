"""The features a probe head is fitted on, extracted once with transformers and kept in a cache file.

For every labelled row's prompts: the last token's state at each asked layer
(:func:`jurist.backends.hf.states.last_states`: the same state vLLM's pooling runner gives a model cut after
that layer, so a head fitted here scores on either engine), and, from the same pass, the judge's own label
distribution (LOGPROBS) where the labels' first tokens differ (as for every built-in judge): what the
head is compared with. The cache (``.npz``) is keyed by the model's weights fingerprint, the judge's prompt
and answer fingerprints, the layers and the prompts' token ids: a second fit on the same rows reads it
instead of running the model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.models.probe_head import pooled_text
from jurist.probe.examples import Examples
from jurist.records import LabelRequest, Pooling, StateRequest

logger = logging.getLogger("jurist")


@dataclass(frozen=True)
class Features:
    """``states``: rows x prompts x layers x hidden size; ``own``: rows x prompts x labels (the judge's own
    label probabilities, renormalised over its labels), or None when the labels' first tokens coincide;
    ``tokens``: each row's prompt tokens (all its prompts); ``cached``: read from the cache file, not run."""

    layers: tuple[int, ...]
    states: np.ndarray
    own: np.ndarray | None
    tokens: np.ndarray
    model: dict[str, Any]
    cached: bool = False


def default_layers(num_layers: int) -> tuple[int, ...]:
    """The layers a fit chooses from when none are given: every eighth of the model's depth from a quarter
    on (6, 9, 12, 15, 18, 21, 24 of 24), where small models' middle layers carry the most."""
    return tuple(sorted({max(1, round(num_layers * k / 8)) for k in range(2, 9)}))


def extract(
    judge: Judge,
    found: Examples,
    backend: Any,
    layers: Sequence[int],
    cache: Path | None = None,
) -> Features:
    """Run the judge's prompts through ``backend`` (an engine NATIVE
    :class:`~jurist.backends.hf.backend.TransformersBackend`)
    once, or read the cache file when it holds these prompts on this model."""
    flat = [request for row in found.requests for request in row]
    ids = backend.prompt_ids(flat)
    bad = [i for i, p in enumerate(ids) if isinstance(p, str) or len(p) >= backend.context_length]
    if bad:
        first = bad[0] // found.shape.prompts_per_row
        raise InputError(
            f"input row {found.positions[first]}: its prompt cannot be scored "
            f"({ids[bad[0]] if isinstance(ids[bad[0]], str) else 'longer than the context'}); "
            f"{len(bad)} prompts in all: drop those rows or give a longer model_max_length"
        )
    described = backend.describe()
    model = _model(backend, described)
    total = model["num_layers"]
    wanted = tuple(sorted({int(x) for x in layers}))
    if not wanted or wanted[0] < 1 or wanted[-1] > total:
        raise InputError(f"layers must be between 1 and {total} (the model's layers), not {list(layers)}")
    key = _key(described.get("weights"), judge, wanted, ids)
    if cache is not None and cache.is_file():
        with np.load(cache, allow_pickle=False) as saved:
            if str(saved["key"]) == key:
                own = saved["own"] if saved["own"].size else None
                return Features(wanted, saved["states"], own, saved["tokens"], model, cached=True)
    first_tokens = first_label_tokens(backend, flat[0])
    logger.info("probe features: %d prompts, layers %s", len(flat), list(wanted))
    states, logprobs = backend.states(ids, wanted, first_tokens or ())
    rows, per_row = len(found.requests), found.shape.prompts_per_row
    states = states.reshape(rows, per_row, len(wanted), -1)
    own = None
    if logprobs is not None:
        probs = np.exp(logprobs - logprobs.max(axis=1, keepdims=True))
        own = (probs / probs.sum(axis=1, keepdims=True)).reshape(rows, per_row, -1)
    tokens = np.asarray([sum(len(ids[r * per_row + k]) for k in range(per_row)) for r in range(rows)])
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with cache.open("wb") as handle:
            np.savez(
                handle, key=key, states=states, own=own if own is not None else np.zeros(0), tokens=tokens
            )
    return Features(wanted, states, own, tokens, model)


def _model(backend: Any, described: dict[str, Any]) -> dict[str, Any]:
    config = backend.text_config
    return {
        "name": backend.model_id,
        "weights": described.get("weights"),
        "num_layers": int(config.num_hidden_layers),
        "hidden_size": int(config.hidden_size),
    }


def first_label_tokens(backend: Any, request: LabelRequest) -> list[int] | None:
    """The first token of each label after the request's prompt, when they all differ (None otherwise: the
    labels' distribution then needs more than the prompt's own forward pass, and the fit reports none)."""
    prompt = backend.prompt_ids([request])[0]
    extended = [replace(request, answer_prefix=request.answer_prefix + label) for label in request.labels]
    firsts = []
    for ids in backend.prompt_ids(extended):
        if (
            isinstance(ids, str)
            or isinstance(prompt, str)
            or ids[: len(prompt)] != prompt
            or len(ids) <= len(prompt)
        ):
            return None
        firsts.append(ids[len(prompt)])
    return firsts if len(set(firsts)) == len(firsts) else None


def _key(weights: str | None, judge: Judge, layers: tuple[int, ...], ids: Sequence[Any]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([weights, judge.prompt_hash, judge.schema_hash, list(layers)]).encode())
    for prompt in ids:
        digest.update(np.asarray(prompt, dtype=np.int64).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


@dataclass(frozen=True)
class Feature:
    """What a head reads of each prompt: the last token's state (``pooling`` last), or the mean over the
    tokens of the template field ``field`` (alone, or after the last token's state); ``texts`` holds that
    field's text by input row position."""

    pooling: Pooling = "last"
    field: str | None = None
    texts: Mapping[int, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(
        cls, pooling: Pooling, name: str | None, judge: Judge, rows: Sequence[Mapping[str, Any]]
    ) -> Feature:
        """The feature ``pooling`` names over ``name`` (default: the judge's ``response`` field), checked
        against the judge's template."""
        if pooling == "last":
            return cls()
        fields = sorted(judge.prompt.required_fields)
        name = name or ("response" if "response" in fields else None)
        if name is None or name not in fields:
            raise InputError(
                f"--pool {pooling} averages one of the judge's template fields ({', '.join(fields)}): "
                f"{'name it with --pool-field' if name is None else f'not {name!r}'}"
            )
        texts = {i: pooled_text(row, name) for i, row in enumerate(rows)}
        return cls(pooling, name, texts)

    def requests(self, found: Examples, layer: int) -> list[StateRequest]:
        """The state requests of every prompt of ``found`` (rows in order) after ``layer``."""
        return [
            StateRequest(r.messages, layer, r.answer_prefix, self.pooling, self.texts.get(position, ""))
            for positions, row in zip(found.prompt_rows(), found.requests, strict=True)
            for position, r in zip(positions, row, strict=True)
        ]


@dataclass(frozen=True)
class EngineStates:
    """Every example prompt's state after one layer, read through the judge's engine: ``states`` (rows x
    prompts x 1 x hidden size), the prompts run now (the others came from the cache) and the seconds they
    took (the engine's start not counted)."""

    states: np.ndarray
    run: int
    seconds: float


def engine_states(
    judge: Judge,
    found: Examples,
    layer: int,
    cache: Path,
    chunk: int = 256,
    factory: Any = None,
    feature: Feature | None = None,
) -> EngineStates:
    """The state after ``layer`` of every prompt of ``found``, through the hidden-state path of the engine
    the judge names (:class:`~jurist.records.StateRequest`: on vLLM, the pooling runner on the model cut
    after ``layer``), pooled as ``feature`` says (default: the last token's), ``chunk`` prompts at a time.
    Each chunk is kept in ``cache`` (a folder) as soon as it is done, under a hash of the model, the judge's
    prompt and answer, the layer and the chunk's requests (with their pooling), so a run stopped part way
    resumes where it stopped and a second fit on the same rows runs nothing. An
    engine that answers a prompt with no state (longer than its context, say) stops the pass, naming the
    input row. ``factory``: what makes the backend (default :func:`jurist.backends.create_backend`)."""
    from jurist.backends import create_backend
    from jurist.backends.base import call
    from jurist.records import EngineUse, HiddenState

    per_row = found.shape.prompts_per_row
    feature = feature or Feature()
    requests = feature.requests(found, layer)
    config = judge.config.inference_config
    config = config.model_copy(update={"use": EngineUse.states(layer, feature.pooling)})
    identity = [config.model.model_name, config.model.revision, judge.prompt_hash, judge.schema_hash, layer]
    cache.mkdir(parents=True, exist_ok=True)
    backend, parts, run, seconds = None, [], 0, 0.0
    try:
        for start in range(0, len(requests), chunk):
            batch = requests[start : start + chunk]
            keys = [_chunk_key(r) for r in batch]
            digest = hashlib.sha256(json.dumps([identity, keys]).encode()).hexdigest()
            path = cache / f"states-{digest[:24]}.npy"
            if path.is_file():
                parts.append(np.load(path, allow_pickle=False))
                continue
            backend = backend or (factory or create_backend)(config)
            began = time.perf_counter()
            answers: list[HiddenState] = call(backend, StateRequest, batch)  # type: ignore[assignment]
            seconds += time.perf_counter() - began
            run += len(batch)
            for offset, answer in enumerate(answers):
                if answer.values is None:
                    row = found.positions[(start + offset) // per_row]
                    raise InputError(f"input row {row}: no hidden state ({answer.error}); drop the row")
            values = np.stack([np.asarray(a.values, dtype=np.float32) for a in answers])
            scratch = path.with_suffix(".tmp.npy")
            np.save(scratch, values)
            scratch.replace(path)  # a chunk is whole or absent
            parts.append(values)
    finally:
        if backend is not None:
            backend.close()
    states = np.concatenate(parts).reshape(len(found.requests), per_row, 1, -1)
    return EngineStates(states, run, seconds)


def _chunk_key(request: StateRequest) -> str:
    """A request as a chunk's cache key holds it: a last-token request as before pooling existed (a cache
    written then is read still), a pooled one with its pooling and text."""
    if request.pooling == "last":
        return (
            f"StateRequest(messages={request.messages!r}, layer={request.layer!r}, "
            f"answer_prefix={request.answer_prefix!r})"
        )
    return repr(request)
