"""``jurist batch`` on the default model (SmolLM2 on vLLM's CPU engine): a mixed batch file of N lines.

The file (:mod:`batch_lines`) holds plain chat, ``json_schema``, ``json_object`` and ``logprobs`` lines, and
lines that must become errors (bad JSON, a duplicate custom_id, an unserved url). The command runs as a
user runs it; then every output line is checked against OpenAI's output line shape (pydantic models,
:mod:`jurist.openai_batch.shapes`): one per input line, in input order, answered lines with usage counts,
``logprobs`` lines with their top log-probabilities, the error lines with the expected codes.

    flock /tmp/jurist-engine.lock python benchmarks/batch_default_model.py --lines 10000

Writes benchmarks/results/batch_default_model.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from batch_lines import KINDS, expected_errors, write_file
from common import RESULTS, ROOT
from jurist.openai_batch.shapes import ChatCompletion, OutputLine


def check(source: Path, output: Path) -> dict[str, Any]:
    """Every output line against its input line (see the module's docstring)."""
    errors: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {k: {"answered": 0, "json_ok": 0, "length": 0} for k in KINDS}
    lines = 0
    with source.open(encoding="utf-8") as inputs, output.open(encoding="utf-8") as outputs:
        for index, (raw_in, raw_out) in enumerate(zip(inputs, outputs, strict=True)):
            lines += 1
            line = OutputLine.model_validate_json(raw_out)
            if line.error is not None:
                errors[line.error.code] = errors.get(line.error.code, 0) + 1
                continue
            sent = json.loads(raw_in)
            assert line.custom_id == sent["custom_id"] and line.response is not None
            body = ChatCompletion.model_validate(line.response.body)
            usage = body.usage
            assert (
                usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
                and usage.prompt_tokens > 0
            )
            kind = KINDS[index % len(KINDS)]
            tally = by_kind[kind]
            tally["answered"] += 1
            choice = body.choices[0]
            tally["length"] += choice.finish_reason == "length"
            if kind in ("schema", "object"):
                with contextlib.suppress(ValueError):
                    tally["json_ok"] += isinstance(json.loads(choice.message.content or ""), dict)
            if kind == "logprobs":
                assert choice.logprobs is not None and choice.logprobs.content
                assert all(len(step.top_logprobs) <= 3 for step in choice.logprobs.content)
    return {"lines": lines, "errors": errors, "by_kind": by_kind}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jurist-batch-default-") as folder:
        source = write_file(Path(folder) / "requests.jsonl", args.lines)
        output, summary = Path(folder) / "results.jsonl", Path(folder) / "summary.json"
        command = [
            "-m",
            "jurist",
            "batch",
            str(source),
            "-o",
            str(output),
            "--summary-json",
            str(summary),
            "-q",
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *command], env=env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - started
        assert done.returncode == 0, done.stderr[-2000:]
        checked = check(source, output)
        assert checked["lines"] == args.lines and checked["errors"] == expected_errors(args.lines), checked
        ran = json.loads(summary.read_text())
    result = {
        "benchmark": "batch_default_model",
        "date": time.strftime("%Y-%m-%d"),
        "command": "flock /tmp/jurist-engine.lock python benchmarks/batch_default_model.py "
        f"--lines {args.lines}",
        "model": "SmolLM2-135M-Instruct (embedded default) on vLLM's CPU engine, 2 cores",
        "lines": args.lines,
        "wall_seconds": round(wall, 1),
        "summary": ran,
        "checked": checked,
        "every_line_valid": True,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "batch_default_model.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
