"""`jurist bench` timing a cascade on the real engine: the embedded SmolLM2 twice, as a cheap first stage and
an expensive last one, over LLMBar rows, with a hand threshold.

Rows: the first 20 pairs of LLMBar Natural as 40 pointwise rows (each instruction with each of its two
outputs; ``label`` says whether the output is the better one). Both stages are the built-in
``generic/instruction_following`` (a yes/no judgment) on the default model:

* stage 1 scores by LOGPROBS (one prefill, no explanation); its confidence is the top label's probability;
* stage 2 (standing in for a bigger judge: no second model is on this machine) generates its JSON answer
  with an explanation and reads the judgment's label probabilities (GENERATE, ``label_probabilities``).

Stage 1 keeps a verdict when its confidence is at least ``--threshold`` (0.85 by default); the other rows
go to stage 2. ``jurist bench`` measures the cascade, then stage 2 alone over the same rows.

    flock /tmp/jurist-engine.lock python benchmarks/cascade_bench.py

Writes benchmarks/results/cascade_bench/bench.json and bench.md (the plots stay in the scratch folder).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from common import RESULTS as BENCH_RESULTS
from common import llmbar_labelled_answers

RESULTS = BENCH_RESULTS / "cascade_bench"
ENGINE = {"gpu_memory_utilization": "0.2", "enforce_eager": "true"}


def stages(folder: Path) -> list[Path]:
    """The two stage configs, as YAML files written from the built-in judge with the stage's settings."""
    from jurist.config.loading import load_judge_config

    settings = {
        "smollm2_logprobs": {"judge_params.scoring": "LOGPROBS", "judge_params.include_explanation": False},
        "smollm2_explained": {"judge_params.scoring": "GENERATE", "judge_params.label_probabilities": True},
    }
    paths = []
    for name, overrides in settings.items():
        config = load_judge_config("generic/instruction_following", overrides, name=name)
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_unset=True), sort_keys=False))
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--threshold", type=float, default=0.85)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        data = folder / "llmbar_pointwise.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in llmbar_labelled_answers(args.pairs)))
        first, last = stages(folder)
        command = [
            sys.executable, "-m", "jurist", "bench", "-i", str(data), "-o", str(folder / "bench"),
            "--cascade", str(first), "--cascade", str(last), "--threshold", str(args.threshold),
            "--rows", str(2 * args.pairs), "--cold-rows", "8",
            *[a for k, v in ENGINE.items() for a in (f"--inference_config.engine_params.{k}", str(v))],
        ]  # fmt: skip
        env = {**os.environ, "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
        print(" ".join(command), flush=True)
        subprocess.run(command, check=True, env=env)
        args.out.mkdir(parents=True, exist_ok=True)
        for name in ("bench.json", "bench.md"):
            shutil.copy(folder / "bench" / name, args.out / name)
    print((args.out / "bench.md").read_text())


if __name__ == "__main__":
    main()
