"""Result files for the evidence tests: real runs of the engine on the scripted backend.

The pointwise judge (LOGPROBS) says yes more often for longer responses; the pairwise judge prefers the
answer shown first in about two thirds of its order verdicts. Labels are written to a separate JSONL file,
one per row position, as LLMBar's are.
"""

from __future__ import annotations

import json
import math
import random
import zlib
from pathlib import Path
from typing import Any

from jurist import Engine, ScriptedBackend
from jurist.records import LabelRequest

POINT: dict[str, Any] = {
    "name": "quality",
    "judge_params": {
        "prompt_template": "Q: {request}\nA: {response}",
        "judgment_type": "BOOL",
        "scoring": "LOGPROBS",
    },
}
PAIR: dict[str, Any] = {
    "name": "pref",
    "judge_params": {
        "prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}",
        "scoring": "LOGPROBS",
    },
    "pairwise_judge_params": {},
}


def pointwise_rows(count: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        good = rng.random() < 0.6
        words = rng.randint(3, 60)
        rows.append(
            {
                "request": f"question {i}",
                "response": " ".join(["word"] * words),
                "response_tokens": words,
                "good": good,
                "group": "xy"[i % 2],
            }
        )
    return rows


def _noise(text: str) -> float:
    """A fixed pseudo-random number in [-1, 1) for a prompt."""
    return zlib.crc32(text.encode()) % 1000 / 500 - 1


def _yes_probability(request: LabelRequest) -> dict[str, float]:
    text = request.messages[-1].content.split("A: ", 1)[1]
    p_yes = 1 / (1 + math.exp(-(-1.5 + text.count("word") / 15 + 1.5 * _noise(text))))
    return {label: math.log(p_yes if label == "Yes" else 1 - p_yes) for label in request.labels}


def _first_shown(request: LabelRequest) -> dict[str, float]:
    text = request.messages[-1].content
    first, second = text.split("FIRST: ", 1)[1].split("\nSECOND: ", 1)
    p_first = 1 / (1 + math.exp(-(0.7 + (len(first) - len(second)) / 100 + _noise(text))))
    return {label: math.log(p_first if label == "A" else 1 - p_first) for label in request.labels}


def run_pointwise(tmp_path: Path, count: int = 80, labelled: int | None = None) -> tuple[Path, Path]:
    """(results file, labels file) for ``count`` pointwise rows, the first ``labelled`` of them labelled."""
    rows = pointwise_rows(count)
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "good"}) + "\n" for r in rows))
    output = tmp_path / "point.parquet"
    Engine(POINT, ScriptedBackend([], labels=_yes_probability)).run_file(source, output)
    labels = tmp_path / "labels.jsonl"
    keep = rows[: labelled if labelled is not None else count]
    labels.write_text("".join(json.dumps({"label": "yes" if r["good"] else "no"}) + "\n" for r in keep))
    return output, labels


def run_pairwise(tmp_path: Path, count: int = 60) -> tuple[Path, Path]:
    rng = random.Random(1)
    rows = [
        {
            "question": f"q{i}",
            "response_a": "a" * rng.randint(5, 200),
            "response_b": "b" * rng.randint(5, 200),
        }
        for i in range(count)
    ]
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    output = tmp_path / "pair.parquet"
    Engine(PAIR, ScriptedBackend([], labels=_first_shown)).run_file(source, output)
    labels = tmp_path / "pair_labels.jsonl"
    labels.write_text("".join(json.dumps({"label": rng.choice([1, 2])}) + "\n" for _ in rows))
    return output, labels
