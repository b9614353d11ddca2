"""Responses written by small local models to LLMBar's and MT-Bench's instructions: more kinds of response
for the graded teacher's learning curve (benchmarks/distil_labels.py).

    python benchmarks/generated_responses.py [--out /tmp/jurist-graded/generated.jsonl]

No instruction-response corpus installs from the package registries beyond ../shared/data/llmbar (LLMBar's
419 pairs and MT-Bench's 200: 1,238 responses), so more responses are written here the way preference sets
such as UltraFeedback are built: each of the 619 instructions is answered twice by Qwen2.5-Coder-0.5B-Instruct
(``jurist models fetch qwen2.5-coder-0.5b-instruct``) and twice by SmolLM2-135M-Instruct (the embedded
default), sampled (temperature 0.8, top-p 0.95, at most 384 new tokens, seed 0), through vLLM's chat
interface with each model's own template: 2,476 responses, of which 20 % of the 0.5B's and 27 % of the
135M's were cut at the token limit. On two cores the 0.5B wrote 68 tokens/s (beside other work) and the
135M 264. The 0.5B is also the study's student: its head reads its own answers among the others.

Each row is ``{"id", "set", "pair", "side", "request", "response", "preferred": None, "finish", "tokens"}``
with the instruction's pair id (so a split by pair keeps an instruction's responses on one side), vLLM's
finish reason (``length`` where the answer was cut at the token limit) and the answer's token count.
Sampling is seeded once per run; CPU and GPU kernels draw different samples, so the file written here is the
one the study's numbers belong to. Each run's answers are kept beside ``--out`` and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from distil_recipe import SMALL, response_rows, write_jsonl

# (source name, model: a catalogue name or None for the embedded default, samples, seed, most new tokens)
RUNS = (("Qwen2.5-Coder-0.5B", SMALL, 2, 0, 384), ("SmolLM2-135M", None, 2, 0, 384))


def instructions() -> list[dict[str, str]]:
    """Each labelled pair's instruction once, in the sets' order."""
    seen: dict[str, str] = {}
    for row in response_rows():
        seen.setdefault(row["pair"], row["request"])
    return [{"pair": pair, "request": request} for pair, request in seen.items()]


def generate(
    model: str | None, prompts: list[dict[str, str]], samples: int, seed: int, max_tokens: int
) -> tuple[list[list[Any]], float]:
    """Every prompt's ``samples`` sampled answers from ``model`` (a catalogue name or None) as (text,
    finish reason, tokens), with the seconds the generation took (the engine's start not counted)."""
    from vllm import LLM, SamplingParams

    from jurist.models.resolve import resolve_model

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "4")  # a size in GiB; vLLM on GPU ignores it
    llm = LLM(model=resolve_model(model).path, max_model_len=4096, seed=seed, enforce_eager=True)
    params = SamplingParams(n=samples, temperature=0.8, top_p=0.95, max_tokens=max_tokens)
    start = time.perf_counter()
    outputs = llm.chat([[{"role": "user", "content": p["request"]}] for p in prompts], params)
    seconds = time.perf_counter() - start
    answers = [[(c.text.strip(), c.finish_reason, len(c.token_ids)) for c in o.outputs] for o in outputs]
    del llm
    return answers, seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/jurist-graded/generated.jsonl"))
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    prompts = instructions()
    rows: list[dict[str, Any]] = []
    drawn: dict[str, int] = {}  # answers per prompt so far, by source
    for name, model, samples, seed, max_tokens in RUNS:
        first = drawn.get(name, 0)
        drawn[name] = first + samples
        part = args.out.with_suffix(f".{name}.seed{seed}.jsonl")
        if not part.exists():
            answers, seconds = generate(model, prompts, samples, seed, max_tokens)
            found = [
                {
                    "id": f"{prompt['pair']}:{name}:{first + k}",
                    "set": f"Generated {name}",
                    "pair": prompt["pair"],
                    "side": f"{name}:{first + k}",
                    "request": prompt["request"],
                    "response": text,
                    "preferred": None,
                    "finish": finish,
                    "tokens": tokens,
                }
                for prompt, drawn_answers in zip(prompts, answers, strict=True)
                for k, (text, finish, tokens) in enumerate(drawn_answers)
            ]
            write_jsonl(part, found)
            tokens = sum(r["tokens"] for r in found)
            print(f"{name} (seed {seed}): {len(found)} answers, {tokens} tokens in {seconds:.0f} s "
                  f"({tokens / seconds:.0f} tokens/s)")  # fmt: skip
        rows.extend(json.loads(line) for line in part.read_text(encoding="utf-8").splitlines())
    write_jsonl(args.out, rows)
    print(f"{len(rows)} responses in {args.out}")


if __name__ == "__main__":
    main()
