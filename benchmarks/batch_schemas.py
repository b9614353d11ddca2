"""Batch lines with JSON schemas, decoded under jurist's whitespace-free regex and under vLLM's grammar
backend (as before), on the same engine in one run: per kind of line, how many answers finished inside
``max_tokens`` 40 and how many of those met their schema (``jsonschema``), and lines/s.

    python benchmarks/batch_schemas.py [--model PATH]   # default: the tiny random-weight model of the tests

The files are the tests' (``tests/batch/schema_lines.py``): the 12 verdict lines of the well-formed-answers
issue and a 400-line mixed file. The random-weight model is the adversarial case: only the constraint
keeps its answers short and well-formed. Writes ``benchmarks/results/batch_schemas.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header, write
from jurist.records import ConstraintKind

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "batch"))

from schema_lines import check_answers, issue_lines, mixed_lines  # type: ignore[import-not-found]
from schema_lines import write as write_lines  # type: ignore[import-not-found]

MODES: dict[str, tuple[ConstraintKind, ...]] = {
    "regex": ("regex", "choice", "json_schema"),
    "grammar": ("choice", "json_schema"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="A model folder (default: the tests' tiny model).")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    from jurist import InferenceConfig
    from jurist.backends.vllm.backend import VLLMBackend
    from jurist.openai_batch import BatchRun, Served

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        model = args.model
        if model is None:
            from tiny_model import build_tiny_model  # type: ignore[import-not-found]

            model = str(build_tiny_model(folder / "tiny"))
        config = {"model": {"model_name": model, "model_max_length": 2048}}
        backend = VLLMBackend(
            InferenceConfig.model_validate({**config, "engine_params": {"gpu_memory_utilization": 0.15}})
        )
        files = {"issue_12": issue_lines(), "mixed_400": mixed_lines(400)}
        results: dict[str, Any] = {}
        try:
            for name, lines in files.items():
                source = write_lines(folder / f"{name}.jsonl", lines)
                for mode, kinds in MODES.items():
                    output = folder / f"{name}.{mode}.jsonl"
                    run = BatchRun(lambda: backend, Served(None, {}, False, kinds, default_max_tokens=40))
                    started = time.perf_counter()
                    summary = run.run(str(source), output)
                    seconds = time.perf_counter() - started
                    try:
                        counts = check_answers(source, output)
                        broken = None
                    except Exception as exc:  # an answer that finished but breaks its schema
                        counts, broken = {}, f"{type(exc).__name__}: {str(exc)[:300]}"
                    results[f"{name} / {mode}"] = {
                        "lines": len(lines),
                        "seconds": round(seconds, 2),
                        "lines_per_s": round(len(lines) / seconds, 2),
                        "by_kind": counts,
                        "answer_breaking_its_schema": broken,
                        "summary": summary.as_dict(),
                    }
                    print(name, mode, json.dumps(counts), f"{seconds:.1f} s", flush=True)
        finally:
            backend.close()
    out = RESULTS / "batch_schemas.json"
    write({**header("batch_schemas"), "command": "python benchmarks/batch_schemas.py", "model": args.model
           or "tests' tiny random-weight model", "results": results}, out)  # fmt: skip


if __name__ == "__main__":
    main()
