"""Scripted cascade stages over LLMBar-style rows, for the cascade tests (and their kill -9 job).

A stage answers pairwise LOGPROBS label requests (and, for a stage that thinks first, its reasoning
requests). For every row (keyed by its two responses) it draws, from
a seeded hash, a confidence ``c`` in [0.5, 1) and whether it is right, with probability ``accuracy(c)``;
it then gives the side it picks probability ``c`` in both orders, so its verdict is order-consistent and
its order-averaged confidence is ``c``. ``truth`` maps a response text to whether it is the better one.
Each request is appended to ``log`` (one JSON line: stage model, row key, order), across processes.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from jurist.backends.scripted import ScriptedBackend
from jurist.config.inference import InferenceConfig
from jurist.records import GenerationRequest, LabelRequest, LabelScores

PROMPT = "[User request]\n{question}\n\n[Response A]\n{response_a}\n\n[Response B]\n{response_b}"


def stage_config(model: str, name: str = "pref") -> dict[str, object]:
    return {
        "name": name,
        "judge_params": {"prompt_template": PROMPT, "scoring": "LOGPROBS", "response_format": "JSON"},
        "pairwise_judge_params": {"allow_tie": False},
        "inference_config": {"model": {"model_name": model}},
    }


def _uniform(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def row_key(first: str, second: str) -> str:
    """A row's key in the request log: its two responses, in either order."""
    return hashlib.sha256("\x1f".join(sorted((first, second))).encode()).hexdigest()[:16]


def shown(request: LabelRequest | GenerationRequest) -> tuple[str, str]:
    text = request.messages[-1].content
    first = text.split("[Response A]\n", 1)[1].split("\n\n[Response B]\n", 1)[0]
    second = text.split("\n\n[Response B]\n", 1)[1]
    return first, second


class Stage:
    """One scripted stage: ``accuracy`` maps a confidence to the chance of a right verdict."""

    def __init__(
        self,
        model: str,
        truth: Mapping[str, bool],
        accuracy: Callable[[float], float],
        log: Path | None = None,
        block_on_call: int | None = None,
        marker: Path | None = None,
        stop_on_call: int | None = None,
    ) -> None:
        self.model, self.truth, self.accuracy, self.log = model, truth, accuracy, log
        self.block_on_call, self.marker, self.stop_on_call = block_on_call, marker, stop_on_call
        self.calls = 0
        self.answer_prefixes: list[str] = []  # each label request's, in the order scored

    def scores(self, request: LabelRequest) -> LabelScores:
        self.answer_prefixes.append(request.answer_prefix)
        first, second = shown(request)
        key = row_key(first, second)
        confidence = 0.5 + 0.5 * _uniform(self.model, key, "confidence")
        right = _uniform(self.model, key, "right") < self.accuracy(confidence)
        first_better = self.truth[first]
        picks_first = first_better if right else not first_better
        p_first = confidence if picks_first else 1.0 - confidence
        if self.log is not None:
            order = "ab" if first < second else "ba"
            with self.log.open("a", encoding="utf-8") as stream:
                stream.write(
                    json.dumps({"model": self.model, "row": key, "order": order, "first": first[:40]}) + "\n"
                )
        labels = dict(zip(request.labels, (math.log(p_first), math.log(1.0 - p_first)), strict=True))
        return LabelScores(labels, "stop", prompt_tokens=len(request.messages[-1].content) // 4)

    def backend(self) -> ScriptedBackend:
        stage = self

        class Blocking(ScriptedBackend):
            def score_labels(self, requests):  # type: ignore[no-untyped-def]
                stage.calls += 1
                if stage.stop_on_call is not None and stage.calls >= stage.stop_on_call:
                    raise KeyboardInterrupt  # as Ctrl-C: the run stops, its committed chunks kept
                if stage.block_on_call is not None and stage.calls >= stage.block_on_call:
                    if stage.marker is not None:
                        stage.marker.write_text("blocked")
                    time.sleep(600)
                return super().score_labels(requests)

        return Blocking(self.thought, model_id=self.model, labels=self.scores)

    def thought(self, request: GenerationRequest) -> str:
        """A stage with a reasoning phase writes one line about the pair, then ends its think block."""
        first, second = shown(request)
        return f"{self.model} weighs {row_key(first, second)}</think>"


def factory(stages: Mapping[str, Stage]) -> Callable[[InferenceConfig], ScriptedBackend]:
    return lambda config: stages[config.model.model_name or ""].backend()


def truth_of(rows: list[dict[str, object]]) -> dict[str, bool]:
    """LLMBar rows -> response text -> whether it is the better one (label 1: output_1)."""
    out: dict[str, bool] = {}
    for row in rows:
        better = int(str(row["label"])) == 1
        out[str(row["output_1"])] = better
        out[str(row["output_2"])] = not better
    return out
