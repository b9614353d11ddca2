"""What the benchmarks share: LLMBar rows, the engine they measure, alternating runs, the result file."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_LLMBAR = ROOT.parent / "shared" / "data" / "llmbar" / "Natural.json"
LOCAL_LLMBAR = ROOT / "examples" / "llmbar" / "Natural.json"
RESULTS = ROOT / "benchmarks" / "results"


def llmbar_source() -> Path:
    """LLMBar's Natural set: the shared copy when present, else the one in examples/."""
    return SHARED_LLMBAR if SHARED_LLMBAR.exists() else LOCAL_LLMBAR


def llmbar_records(n: int) -> list[dict[str, Any]]:
    """The first ``n`` LLMBar records (input, output_1, output_2, label)."""
    return list(json.loads(llmbar_source().read_text(encoding="utf-8")))[:n]


LLMBAR_SETS = (
    "Natural",
    "Adversarial_Neighbor",
    "Adversarial_GPTInst",
    "Adversarial_GPTOut",
    "Adversarial_Manual",
    "MT-Bench",
)
"""The human-labelled pair sets in ../shared/data/llmbar: LLMBar's Natural and four adversarial sets, in the
paper's order, then the MT-Bench human-judgment pairs kept beside them (not part of LLMBar)."""


def llmbar_all_pointwise_rows(n: int) -> list[dict[str, str]]:
    """Pointwise rows from every set (LLMBar's Natural and adversarial sets, then MT-Bench), the first ``n``:
    every instruction with its first output, then with its second, set by set."""
    folder = llmbar_source().parent
    rows = []
    for name in LLMBAR_SETS:
        path = folder / f"{name}.json"
        if path.exists():
            records = json.loads(path.read_text(encoding="utf-8"))
            rows += [
                {"request": r["input"], "response": r[key]}
                for key in ("output_1", "output_2")
                for r in records
            ]
    return rows[:n]


def llmbar_pointwise_rows(n: int) -> list[dict[str, str]]:
    """Pointwise rows: every instruction with its first output, then with its second; the first ``n``."""
    records = llmbar_records(10**9)
    rows = [{"request": r["input"], "response": r[key]} for key in ("output_1", "output_2") for r in records]
    return rows[:n]


def llmbar_labelled_answers(pairs: int) -> list[dict[str, Any]]:
    """The first ``pairs`` pairs of LLMBar's Natural set as pointwise rows, each answer a row of its own (id
    ``<pair>-<side>``, ``request``, ``response``), labelled by whether it is the answer that follows the
    instruction (LLMBar builds every pair so that exactly one does)."""
    return [
        {
            "id": f"{n}-{side}",
            "request": r["input"],
            "response": r[f"output_{side}"],
            "label": int(r["label"]) == side,
        }
        for n, r in enumerate(llmbar_records(pairs))
        for side in (1, 2)
    ]


@dataclass(frozen=True)
class CascadeOutcome:
    """What a benchmark reads of a cascade run: its summary, its rows, each judge's agreement with the
    labels (``accuracy`` of ``jurist agree``), the cascade's metadata and the run's notes."""

    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    agreement: dict[str, float | None]
    cascade: dict[str, Any]
    notes: list[str]


def run_calibrated_cascade(
    configs: Sequence[Any],
    rows: Sequence[dict[str, Any]],
    target: float,
    delta: float,
    backend_factory: Callable[[Any], Any] | None = None,
) -> CascadeOutcome:
    """A cascade of the stage ``configs`` over ``rows``, its thresholds calibrated on the rows' ``label``
    column (target agreement, delta), in a scratch folder; stages' backends from ``backend_factory``
    (default: their configs')."""
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    import tempfile

    from jurist.analysis.human import agreement_report
    from jurist.config.cascade import CalibrationSettings, CascadeSettings
    from jurist.engine.spec import RunOptions, RunSpec, Selection
    from jurist.io.results import ResultTable
    from jurist.labels.source import LabelSource
    from jurist.launch import launch

    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "rows.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        output = Path(scratch) / "out.parquet"
        settings = CascadeSettings(calibration=CalibrationSettings(LabelSource(data), target, delta))
        spec = RunSpec(tuple(configs), Selection(str(data)), RunOptions(chunk_size=64), cascade=settings)
        launched = launch(spec, output=output, backend_factory=backend_factory)
        notes = launched.notes
        try:
            summary = launched.run(output)
        finally:
            launched.close()
        table = ResultTable.open(output)
        agree = agreement_report(table, LabelSource(column="label").for_results(table).labels)
        return CascadeOutcome(
            summary.as_dict(),
            table.table.to_pylist(),
            {name: report["accuracy"]["estimate"] for name, report in agree.items()},
            table.metadata["cascade"],
            list(notes),
        )


def make_backend(model: str | None, *, prefix_caching: bool = True) -> Any:
    """The vLLM engine every benchmark measures (embedded SmolLM2 when ``model`` is None)."""
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    from jurist import InferenceConfig
    from jurist.backends.vllm.backend import VLLMBackend

    return VLLMBackend(
        InferenceConfig.model_validate(
            {
                "model": {"model_name": model, "model_max_length": 4096},
                "engine_params": {"enable_prefix_caching": prefix_caching, "gpu_memory_utilization": 0.2},
            }
        )
    )


def hit_rate(before: dict[str, float], after: dict[str, float]) -> float | None:
    """The prefix-cache hit rate between two ``prefix_cache_stats()`` readings."""
    queries = after["queries"] - before["queries"]
    return round((after["hits"] - before["hits"]) / queries, 3) if queries else None


def alternate(
    measure: Callable[[str], dict[str, Any]], names: Sequence[str], repeats: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Run the measurements in turn ``repeats`` times (spreading the box's noise over all of them);
    return every run and the fastest run of each."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:
            runs[name].append(measure(name))
            print(name, runs[name][-1], flush=True)
    best = {name: min(r, key=lambda x: x["seconds"]) for name, r in runs.items()}
    return runs, best


def header(benchmark: str) -> dict[str, Any]:
    """The fields every result file starts with."""
    return {
        "benchmark": benchmark,
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        },
        "data": str(llmbar_source()),
    }


def write(results: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
