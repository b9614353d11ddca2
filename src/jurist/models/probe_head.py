"""A probe head: a small classifier on a judge model's own hidden state, fitted from labels.

The feature of one prompt is the hidden state of its last token (after the answer prefix a LOGPROBS judge
would read its label at) at the output of transformer layer ``layer``, passed through the model's final
norm, as vLLM's pooling runner returns it (LAST pooling, no normalisation) for a model cut after that layer,
and as engine NATIVE computes it from ``hidden_states[layer]``. The head standardises the feature (``mean``,
``scale``), passes it through its ``hidden`` layers if it has any (each ``relu(W x + b)``: a small MLP, kept
by ``jurist probe fit --mlp`` only where nested cross-validation prefers it to the linear head) and gives
each of its ``labels`` the softmax of ``coef @ x + intercept``: a label distribution, as LOGPROBS gives, so
everything that reads label probabilities reads a head's alike. That computation is :class:`HeadArrays`,
the arrays that ``jurist probe fit`` trains and measures and a head file holds.

A head file (JSON) records what it may be used with: the model (its name and weights fingerprint), the layer,
the judge's prompt and answer fingerprints, and how it was fitted (label source, rows, cross-validated
metrics). :meth:`ProbeHead.check_model` and :meth:`ProbeHead.check_judge` refuse any other, naming both. Its
``format`` says which heads a reader must understand: ``jurist-probe-head/1`` a linear head (what every
jurist since heads began reads), ``jurist-probe-head/2`` one with hidden layers, ``jurist-probe-head/3``
one whose feature is pooled (``pooling``: the mean of the states of one template field's tokens, the
response's say, named by ``pooled_field``, alone or after the last token's state); a format this jurist does
not know is refused, naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from jurist.errors import ConfigError
from jurist.records import Pooling
from jurist.stats.share import Share

FORMAT = "jurist-probe-head/1"
"""A linear head's format."""
FORMAT_HIDDEN = "jurist-probe-head/2"
"""The format of a head with hidden layers (a reader of format 1 alone would misread it: it refuses it)."""
FORMAT_POOLED = "jurist-probe-head/3"
"""The format of a head on a pooled feature, with hidden layers or without (older readers refuse it)."""
FORMATS = (FORMAT, FORMAT_HIDDEN, FORMAT_POOLED)


def pooled_text(row: Mapping[str, Any], field: str) -> str:
    """The text of a row's ``field`` whose tokens a pooled feature averages, as the fit and PROBE judging
    both read it (none: the empty text, which no prompt holds)."""
    value = row.get(field)
    return "" if value is None else str(value)


def head_format(hidden: bool, pooling: Pooling) -> str:
    """The format a head is written in: the oldest that can hold it."""
    if pooling != "last":
        return FORMAT_POOLED
    return FORMAT_HIDDEN if hidden else FORMAT


@dataclass(frozen=True)
class HeadArrays:
    """A head in arrays: the feature standardised by ``mean`` and ``scale``, through each ``hidden`` layer
    (``relu(x @ weights.T + bias)``; none for a linear head), then one row of ``coef`` and one ``intercept``
    per label. Features may have any leading shape (rows, or rows x prompts) x hidden size."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    hidden: tuple[tuple[np.ndarray, np.ndarray], ...] = ()

    def logits(self, features: Any) -> np.ndarray:
        """Per-label logits."""
        x = (np.asarray(features, dtype=np.float64) - self.mean) / self.scale
        for weights, bias in self.hidden:
            x = np.maximum(x @ weights.T + bias, 0.0)
        return np.asarray(x @ self.coef.T + self.intercept)

    def log_probabilities(self, features: Any) -> np.ndarray:
        """Per-label log-probabilities (the log-softmax of the logits)."""
        z = self.logits(features)
        z = z - z.max(axis=-1, keepdims=True)
        return np.asarray(z - np.log(np.exp(z).sum(axis=-1, keepdims=True)))

    def probabilities(self, features: Any) -> np.ndarray:
        """Per-label probabilities (the softmax of the logits)."""
        z = self.logits(features)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return np.asarray(e / e.sum(axis=-1, keepdims=True))


class HiddenLayer(BaseModel):
    """One hidden layer of a head: ``relu(weights @ x + bias)``, one row of weights per unit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: tuple[tuple[float, ...], ...] = Field(min_length=1)
    bias: tuple[float, ...]


class ProbeModel(BaseModel):
    """The model a head was fitted on: how results name it, its weights fingerprint
    (:func:`~jurist.models.weights.weights_fingerprint`), its layer count and hidden size."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    weights: str | None
    num_layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)


class ProbeHead(BaseModel):
    """A fitted head (see the module docstring). ``coef`` has one row per label, ``intercept`` one value per
    label; ``metrics`` and ``fit`` describe the fit for people (cross-validated accuracy, baselines, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = FORMAT
    model: ProbeModel
    layer: int = Field(ge=1, description="Transformer layers run: the feature is the output of the last.")
    pooling: Pooling = "last"
    pooled_field: str | None = Field(
        default=None, description="The judge's template field whose tokens a pooled feature averages."
    )
    judge: str
    prompt_fingerprint: str
    answer_fingerprint: str
    labels: tuple[str, ...] = Field(min_length=2)
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]
    intercept: tuple[float, ...]
    hidden: tuple[HiddenLayer, ...] = ()
    fit: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _shapes(self) -> ProbeHead:
        size = self.feature_size
        wanted = head_format(bool(self.hidden), self.pooling)
        if self.format not in FORMATS:
            raise ValueError(
                f"format {self.format!r} is not one this jurist reads ({', '.join(map(repr, FORMATS))}): "
                "a newer jurist wrote it; upgrade jurist, or fit the head again"
            )
        if self.format != wanted:
            kind = f"a head {'with' if self.hidden else 'without'} hidden layers"
            pooled = f" on a {self.pooling}-pooled feature" if self.pooling != "last" else ""
            raise ValueError(f"{kind}{pooled} is {wanted!r}")
        if (self.pooling == "last") != (self.pooled_field is None):
            raise ValueError("pooled_field names the field a pooled feature averages, and only then")
        if self.layer > self.model.num_layers:
            raise ValueError(f"layer {self.layer} of a model with {self.model.num_layers} layers")
        if len(self.mean) != size or len(self.scale) != size:
            raise ValueError(f"mean and scale need {size} values (the feature's width)")
        width = size
        for number, layer in enumerate(self.hidden):
            if any(len(row) != width for row in layer.weights) or len(layer.bias) != len(layer.weights):
                raise ValueError(f"hidden layer {number} needs rows of {width} weights and one bias per row")
            width = len(layer.weights)
        if len(self.coef) != len(self.labels) or any(len(row) != width for row in self.coef):
            raise ValueError(f"coef needs one row of {width} values per label ({len(self.labels)})")
        if len(self.intercept) != len(self.labels):
            raise ValueError(f"intercept needs one value per label ({len(self.labels)})")
        if any(s <= 0 for s in self.scale):
            raise ValueError("scale values must be positive")
        return self

    @property
    def feature_size(self) -> int:
        """The feature's width: the hidden size, twice it when the last token's state and the mean are
        both read."""
        return self.model.hidden_size * (2 if self.pooling == "last_mean" else 1)

    # --------------------------------------------------------------------------------- scoring
    @property
    def arrays(self) -> HeadArrays:
        """The head's arrays (built on each call: a copy with other fields never reads stale ones)."""

        def array(values: Any) -> np.ndarray:
            return np.asarray(values, dtype=np.float64)

        hidden = tuple((array(layer.weights), array(layer.bias)) for layer in self.hidden)
        return HeadArrays(
            array(self.mean), array(self.scale), array(self.coef), array(self.intercept), hidden
        )

    def log_probabilities(self, features: Any) -> np.ndarray:
        """Per-label log-probabilities (rows x labels) of a (rows x feature size) array of features."""
        return self.arrays.log_probabilities(features)

    @property
    def accuracy(self) -> float | None:
        """The fit's cross-validated accuracy, from ``metrics`` as head files of any version hold it."""
        found = self.metrics.get("accuracy")
        return Share.read(found).estimate if isinstance(found, Mapping) else None

    # --------------------------------------------------------------------------------- checks
    def check_model(self, name: str, weights: str | None, num_layers: int | None = None) -> None:
        """Refuse (:class:`~jurist.errors.ConfigError`) a model other than the one the head was fitted on,
        naming both: another weights fingerprint, or another layer count."""
        if weights != self.model.weights or (num_layers is not None and num_layers != self.model.num_layers):
            raise ConfigError(
                f"the probe head was fitted on {self.model.name} (weights {self.model.weights}, "
                f"{self.model.num_layers} layers); this engine loads {name} (weights {weights}"
                + (f", {num_layers} layers)" if num_layers is not None else ")")
                + ": fit a head on this model (jurist probe fit)",
                field="judge_params.probe",
            )

    def check_judge(self, name: str, prompt: str, answer: str, labels: Sequence[str]) -> None:
        """Refuse a judge whose prompt, answer format or labels differ from those the head was fitted with,
        naming both fingerprints."""
        problems = []
        if prompt != self.prompt_fingerprint:
            problems.append(f"prompt {prompt} (the head's: {self.prompt_fingerprint})")
        if answer != self.answer_fingerprint:
            problems.append(f"answer format {answer} (the head's: {self.answer_fingerprint})")
        if tuple(labels) != self.labels:
            problems.append(f"labels {', '.join(labels)} (the head's: {', '.join(self.labels)})")
        if problems:
            raise ConfigError(
                f"judge {name!r} does not match the probe head fitted with judge {self.judge!r}: "
                + "; ".join(problems)
                + ". A head reads the hidden state of one prompt: fit it again for this judge",
                field="judge_params.probe",
            )

    # --------------------------------------------------------------------------------- files
    def save(self, path: str | Path) -> Path:
        """Write the head as JSON (atomically: a temporary file renamed into place)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.model_dump(mode="json"), indent=1)
        fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(scratch, 0o666 & ~umask)  # as a plain open() would make it, not mkstemp's 0600
            os.replace(scratch, path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
        return path


def load_head(path: str | Path) -> ProbeHead:
    """Read a head file; a :class:`~jurist.errors.ConfigError` names the file and what is wrong."""
    return read_head(path)[0]


def read_head(path: str | Path) -> tuple[ProbeHead, str]:
    """A head file read once: the head and the sha256 of the bytes it was read from (what decides a run's
    results besides the config); a :class:`~jurist.errors.ConfigError` names the file and what is wrong."""
    path = Path(path)
    where = f"judge_params.probe ({path})"
    try:
        raw = path.read_bytes()
        data: Mapping[str, Any] = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no probe head file {path}", field="judge_params.probe") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not a probe head file: {exc}", field="judge_params.probe") from None
    try:
        return ProbeHead.model_validate(data), hashlib.sha256(raw).hexdigest()
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"]) or "the file"
        raise ConfigError(f"{key}: {error['msg']}", field=where) from None
