"""The engine kept full across chunks, against chunks run one after another and against one single call.

    python benchmarks/continuous.py [--rows 1000] [--chunk 200] [--model PATH] [--out FILE]

On LLMBar rows from every set (each instruction with each of its two outputs; the built-in
``graded/instruction_following`` judge, JSON with an explanation) and the embedded SmolLM2 model, over the
same rows and one engine, emptying the prefix cache before each:

1. ``chunked``: chunks of ``--chunk`` rows, each one ``generate`` call that waits for its slowest row
   before the next chunk starts (jurist's schedule before the engine was kept full);
2. ``continuous``: the same chunks fed to the engine while earlier ones still decode (``stream``);
3. ``single_call``: every row in one ``generate`` call (no chunk boundaries at all; no resumability).

Results go to ``benchmarks/results/continuous.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from common import RESULTS, header, llmbar_all_pointwise_rows, make_backend, write


class Chunked:
    """The backend without its stream: the engine then sends one call per chunk."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.model_id = backend.model_id
        self.constraint_kinds = backend.constraint_kinds

    def generate(self, requests: Any) -> Any:
        return self._backend.generate(requests)

    def close(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=200)
    parser.add_argument("--judge", default="graded/instruction_following")
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "continuous.json")
    args = parser.parse_args()

    from jurist import Engine, load_judge_config

    rows = llmbar_all_pointwise_rows(args.rows)
    config = load_judge_config(args.judge)
    backend = make_backend(args.model)
    Engine(config, backend).run(rows[:4])  # warm-up
    schedules = {
        "chunked": Engine(config, Chunked(backend), chunk_size=args.chunk),  # type: ignore[arg-type]
        "continuous": Engine(config, backend, chunk_size=args.chunk),
        "single_call": Engine(config, Chunked(backend), chunk_size=len(rows)),  # type: ignore[arg-type]
    }
    results: dict[str, Any] = {
        **header("continuous"),
        "judge": args.judge,
        "model": backend.model_id,
        "rows": len(rows),
        "chunk": args.chunk,
        "stream_window": backend.stream_window,
    }
    name = schedules["chunked"].judges[0].name
    for label, engine in schedules.items():
        backend.reset_prefix_cache()
        started = time.perf_counter()
        table = engine.run(rows)
        seconds = time.perf_counter() - started
        tokens = sum(table[f"{name}.completion_tokens"].to_pylist())
        results[label] = {
            "seconds": round(seconds, 2),
            "rows_per_s": round(len(rows) / seconds, 3),
            "output_tokens_per_s": round(tokens / seconds, 1),
            "ok": table[f"{name}.status"].to_pylist().count("ok"),
        }
        print(label, results[label], flush=True)
    backend.close()
    results["continuous_over_chunked"] = round(
        results["continuous"]["rows_per_s"] / results["chunked"]["rows_per_s"], 3
    )
    results["continuous_over_single_call"] = round(
        results["continuous"]["rows_per_s"] / results["single_call"]["rows_per_s"], 3
    )
    write(results, args.out)
    print({k: results[k] for k in ("continuous_over_chunked", "continuous_over_single_call")})


if __name__ == "__main__":
    main()
