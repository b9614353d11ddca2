"""Reward scoring vs generation vs LOGPROBS, on the same LLMBar rows and the same backbone, in one run.

    python benchmarks/reward_modes.py [--rows 200] [--repeats 2] [--judge generic/instruction_following]

The judge model is the embedded SmolLM2-135M-Instruct. The reward model is the same backbone with a
one-output classification head (``LlamaForSequenceClassification``, head weights random, built here from
the embedded model's weights): its rewards mean nothing, its cost is what a 135M reward model costs.

* ``generate``: the judge as configured (explanation, then verdict, under the judge's regex);
* ``logprobs``: the same judge in LOGPROBS scoring (one prefill, the verdict's label distribution);
* ``reward``: the reward model on request + response (one prefill through vLLM's pooling runner).

vLLM holds one engine per process here, so generation and LOGPROBS alternate on the judge's engine, which
is then closed, and the reward runs follow on the reward model's engine; each mode keeps its fastest
run. The prefix cache is emptied before each measurement. Results go to
``benchmarks/results/reward_modes.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, alternate, header, llmbar_pointwise_rows, make_backend, write


def build_reward_model(folder: Path) -> Path:
    """The embedded model's backbone and tokenizer with a fresh one-output score head."""
    import torch
    from transformers import AutoConfig, LlamaForSequenceClassification

    from jurist.models.default_model import default_model_path

    source = default_model_path()
    config = AutoConfig.from_pretrained(str(source))
    config.num_labels = 1
    config.architectures = ["LlamaForSequenceClassification"]
    if config.pad_token_id is None:
        config.pad_token_id = config.eos_token_id
    torch.manual_seed(0)
    model = LlamaForSequenceClassification.from_pretrained(
        str(source), config=config, dtype=torch.bfloat16
    ).eval()
    model.save_pretrained(str(folder), safe_serialization=True)
    for file in source.iterdir():
        if file.name.startswith(("tokenizer", "chat_template", "special_tokens", "vocab", "merges")):
            shutil.copy(file, folder / file.name)
    return folder


def measure_engine(
    engine: Any, backend: Any, rows: list[dict[str, str]], score_column: str
) -> dict[str, Any]:
    name = engine.judges[0].name
    backend.reset_prefix_cache()
    started = time.perf_counter()
    table = engine.run(rows)
    seconds = time.perf_counter() - started
    statuses = table[f"{name}.status"].to_pylist()
    if "ok" not in statuses:  # a broken mode must not pass for a fast one
        raise SystemExit(f"{name}: no row is ok; first error: {table[f'{name}.error'][0].as_py()}")
    scores = [s for s in table[f"{name}.{score_column}"].to_pylist() if s is not None]
    return {
        "rows": len(rows),
        "seconds": round(seconds, 2),
        "rows_per_s": round(len(rows) / seconds, 3),
        "ok": statuses.count("ok"),
        "scored": len(scores),
        "output_tokens": sum(table[f"{name}.completion_tokens"].to_pylist()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--judge", default="generic/instruction_following")
    parser.add_argument("--out", type=Path, default=RESULTS / "reward_modes.json")
    args = parser.parse_args()

    from jurist import Engine, load_judge_config

    rows = llmbar_pointwise_rows(args.rows)
    backend = make_backend(None)
    engines = {
        "generate": Engine(load_judge_config(args.judge), backend),
        "logprobs": Engine(load_judge_config(args.judge, {"judge_params.scoring": "LOGPROBS"}), backend),
    }
    for engine in engines.values():
        engine.run(rows[:2])  # warm-up
    runs, best = alternate(
        lambda mode: measure_engine(engines[mode], backend, rows, "score"),
        ["generate", "logprobs"],
        args.repeats,
    )
    judge_model = backend.model_id
    backend.close()

    with tempfile.TemporaryDirectory(prefix="jurist-reward-") as tmp:
        reward_dir = build_reward_model(Path(tmp))
        reward_backend = make_backend(str(reward_dir))
        reward_engine = Engine(
            load_judge_config(
                "reward/skywork", {"inference_config.model.model_name": str(reward_dir)}, name="reward"
            ),
            reward_backend,
        )
        reward_engine.run(rows[:2])  # warm-up
        reward_runs, reward_best = alternate(
            lambda mode: measure_engine(reward_engine, reward_backend, rows, "reward"),
            ["reward"],
            args.repeats,
        )
        reward_backend.close()

    runs.update(reward_runs)
    best.update(reward_best)
    speed = {mode: best[mode]["rows_per_s"] for mode in best}
    results = {
        **header("reward_modes"),
        "judge": args.judge,
        "judge_model": judge_model,
        "reward_model": "SmolLM2-135M backbone + random 1-output head (LlamaForSequenceClassification)",
        "runs": runs,
        **best,
        "reward_over_generate": round(speed["reward"] / speed["generate"], 2),
        "reward_over_logprobs": round(speed["reward"] / speed["logprobs"], 2),
        "logprobs_over_generate": round(speed["logprobs"] / speed["generate"], 2),
    }
    write(results, args.out)
    keys = ("generate", "logprobs", "reward", "reward_over_generate", "reward_over_logprobs")
    print(json.dumps({k: results[k] for k in keys}, indent=2))


if __name__ == "__main__":
    main()
