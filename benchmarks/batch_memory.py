"""Memory of ``jurist batch`` as files grow: peak RSS from 10,000 to 1,000,000 lines on the scripted backend.

Each size runs in a fresh process (its peak resident memory is its own, ``ru_maxrss``) over a mixed file
(:mod:`batch_lines`: chat, JSON schema, JSON object and logprobs lines, bad lines, duplicates); the scripted
backend streams (as vLLM does) and answers each request in the shape it asks for. The parent then checks
the output: one line per input line, in input order, each valid against OpenAI's output line shape.

    python benchmarks/batch_memory.py [--sizes 10000 1000000]

Writes benchmarks/results/batch_memory.json; the done-when bound is a peak RSS ratio of at most 1.2.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from batch_lines import expected_errors, write_file
from common import RESULTS, ROOT
from jurist.records import ALL_CONSTRAINT_KINDS, Completion, GenerationRequest


def answer(request: GenerationRequest) -> Completion:
    """JSON for a JSON constraint, a word with log-probabilities when asked for, else a short sentence."""
    if request.constraint is not None:
        text = '{"explanation": "scripted", "judgment": true}'
    elif request.logprobs is not None:
        text = "yes"
    else:
        text = "A short scripted answer."
    tokens = tuple(text[i : i + 3] for i in range(0, len(text), 3))
    logprobs = tuple({t: -0.1, "no": -2.4} for t in tokens) if request.logprobs is not None else None
    return Completion(
        text, "stop", prompt_tokens=len(request.messages[-1].content) // 4, completion_tokens=len(tokens),
        token_logprobs=logprobs, tokens=tokens if logprobs else None,
    )  # fmt: skip


def child(source: str, output: str) -> None:
    """Run one file; print the peak RSS and the summary as JSON."""
    from jurist.backends.scripted import ScriptedStreamingBackend
    from jurist.openai_batch import BatchRun, Served

    served = Served(None, {}, False, ALL_CONSTRAINT_KINDS)
    backend = ScriptedStreamingBackend(answer, record=False, window=256)
    started = time.perf_counter()
    summary = BatchRun(lambda: backend, served).run(source, Path(output))
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_rss_mb": round(peak_mb, 1), "seconds": round(seconds, 1), **summary.as_dict()}))


def check(source: Path, output: Path) -> dict[str, Any]:
    """One output line per input line, in order, each of OpenAI's shape; the error codes counted."""
    from jurist.openai_batch.shapes import ChatCompletion, OutputLine

    codes: dict[str, int] = {}
    lines = 0
    with source.open(encoding="utf-8") as inputs, output.open(encoding="utf-8") as outputs:
        for raw_in, raw_out in zip(inputs, outputs, strict=True):
            lines += 1
            line = OutputLine.model_validate_json(raw_out)
            if line.error is not None:
                codes[line.error.code] = codes.get(line.error.code, 0) + 1
            else:
                assert line.response is not None
                ChatCompletion.model_validate(line.response.body)
                assert json.loads(raw_in)["custom_id"] == line.custom_id
    return {"lines": lines, "errors": codes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="jurist-batch-memory-") as folder:
        for n in args.sizes:
            source = write_file(Path(folder) / f"in-{n}.jsonl", n)
            output = Path(folder) / f"out-{n}.jsonl"
            env_path = f"{ROOT / 'src'}:{ROOT / 'benchmarks'}"
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(source), str(output)],
                capture_output=True, text=True, check=True,
                env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
            )  # fmt: skip
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            checked = check(source, output)
            assert checked["lines"] == n and checked["errors"] == expected_errors(n), checked
            runs.append(
                {
                    "lines": n,
                    "file_mb": round(source.stat().st_size / 2**20, 1),
                    **measured,
                    "checked": checked,
                }
            )
            print(json.dumps(runs[-1]), flush=True)
            source.unlink()
            output.unlink()
    ratio = runs[-1]["peak_rss_mb"] / runs[0]["peak_rss_mb"]
    result = {
        "benchmark": "batch_memory",
        "date": time.strftime("%Y-%m-%d"),
        "what": "jurist batch on the scripted (streaming) backend: peak RSS of a fresh process per file size",
        "command": "python benchmarks/batch_memory.py --sizes " + " ".join(str(n) for n in args.sizes),
        "runs": runs,
        "peak_rss_ratio": round(ratio, 3),
        "bound": 1.2,
        "within_bound": ratio <= 1.2,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "batch_memory.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"peak RSS ratio {ratio:.3f} ({runs[0]['peak_rss_mb']} -> {runs[-1]['peak_rss_mb']} MB)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
