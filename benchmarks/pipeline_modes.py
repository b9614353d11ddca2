"""The judging shapes the host-pipeline benchmarks run without a model: per scoring mode, pointwise and
pairwise, the judge, the scripted backend that answers it and the input rows.

Each mode is ``<scoring>-<kind>``: scoring ``generate`` (the model writes a JSON answer), ``logprobs`` (label
log-probabilities after one prefill) or ``probe`` (a hidden state that a probe head reads); kind
``pointwise`` (the built-in ``graded/truthfulness``, ENUM Yes/Unsure/No, one request a row) or ``pairwise``
(the built-in ``pairwise/preference``, both orders: two requests a row). The scripted backend cycles through
a few answers (distinct verdicts and probabilities), so rows differ as they would from a model; a PROBE
judge reads a head file written here for the judge's own prompt, with the hidden size of a 0.5B model
(896), and the backend answers each state request with one of a few such vectors.

Used by ``pipeline.py`` (speed and memory) and ``pipeline_identity.py`` (output identity across code
changes).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCORINGS = ("generate", "logprobs", "probe")
KINDS = ("pointwise", "pairwise")
MODES = tuple(f"{s}-{k}" for s in SCORINGS for k in KINDS)
JUDGES = {"pointwise": "graded/truthfulness", "pairwise": "pairwise/preference"}
HIDDEN_SIZE = 896  # Qwen2.5-0.5B's
HEAD_LAYER = 12  # of 24: a model cut at half its depth

POINTWISE_ANSWERS = [
    '{"explanation": "The response answers the question correctly.", "judgment": "Yes"}',
    '{"explanation": "The second claim about sunsets is wrong.", "judgment": "No"}',
    '{"explanation": "The key claim cannot be checked.", "judgment": "Unsure"}',
]
PAIRWISE_ANSWERS = [
    '{"explanation": "Response A follows the request; B drifts.", "judgment": "A"}',
    '{"explanation": "Response B is correct and shorter.", "judgment": "B"}',
    '{"explanation": "Response A is more complete.", "judgment": "A"}',
]
LABEL_LOGPROBS = {
    "pointwise": [
        {"Yes": -0.2, "Unsure": -2.5, "No": -2.1},
        {"Yes": -1.9, "Unsure": -2.2, "No": -0.4},
        {"Yes": -1.1, "Unsure": -0.9, "No": -1.6},
    ],
    "pairwise": [{"A": -0.3, "B": -1.4}, {"A": -1.2, "B": -0.5}, {"A": -0.7, "B": -0.7}],
}


def split(mode: str) -> tuple[str, str]:
    """A mode's scoring and kind (``logprobs-pairwise`` -> ``logprobs``, ``pairwise``)."""
    scoring, kind = mode.split("-")
    if scoring not in SCORINGS or kind not in KINDS:
        raise ValueError(f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
    return scoring, kind


def make_input(path: Path, rows: int, kind: str, *, faults: bool = False) -> None:
    """``rows`` JSONL rows (an instruction and responses of about 300 characters each) for a kind.
    ``faults``: every 997th line is not JSON and every 1009th row lacks its (first) response."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            if faults and i % 997 == 5:
                handle.write("{not json\n")
                continue
            request = f"Question {i}: explain why the sky looks blue during the day and red at sunset."
            response = f"Answer {i}: sunlight scatters off air molecules; " + "blue light scatters most. " * 8
            if kind == "pointwise":
                row: dict[str, Any] = {"id": i, "request": request, "response": response}
            else:
                other = f"Answer {i}: the sky reflects the sea, " + "and the sea is blue. " * 9
                row = {"id": i, "question": request, "response_a": response, "response_b": other}
            if faults and i % 1009 == 7:
                row["response" if kind == "pointwise" else "response_a"] = None
            handle.write(json.dumps(row) + "\n")


def _cycling(values: list[Any]) -> Callable[[Any], Any]:
    answers: Iterator[Any] = itertools.cycle(values)
    return lambda _request: next(answers)


def write_head(judge: Any, path: Path) -> Path:
    """A probe head for ``judge`` (its prompt, answer format and labels), random but fixed (seed 0), of the
    hidden size of a 0.5B model."""
    import numpy as np

    from jurist.models.probe_head import ProbeHead, ProbeModel

    rng = np.random.default_rng(0)
    labels = judge.parts.label_texts
    head = ProbeHead(
        model=ProbeModel(name="scripted", weights=None, num_layers=24, hidden_size=HIDDEN_SIZE),
        layer=HEAD_LAYER,
        judge=judge.name,
        prompt_fingerprint=judge.prompt_hash,
        answer_fingerprint=judge.schema_hash,
        labels=labels,
        mean=tuple(rng.normal(size=HIDDEN_SIZE).tolist()),
        scale=tuple(rng.uniform(0.5, 2, size=HIDDEN_SIZE).tolist()),
        coef=tuple(tuple((rng.normal(size=HIDDEN_SIZE) / 30).tolist()) for _ in labels),
        intercept=tuple(rng.normal(size=len(labels)).tolist()),
    )
    return head.save(path)


def judge_and_backend(mode: str, scratch: Path, *, faults: bool = False) -> tuple[Any, Any]:
    """The judge config and the scripted backend of a mode (a PROBE head is written into ``scratch``).
    ``faults``: the backend's cycle also holds answers that fail (text that does not parse, a truncated
    answer, an engine error), so that failed rows are part of what is compared."""
    import numpy as np

    from jurist import ScriptedBackend
    from jurist.config.loading import load_judge_config
    from jurist.judges.judge import Judge
    from jurist.records import Completion, HiddenState, LabelScores

    scoring, kind = split(mode)
    name = JUDGES[kind]
    overrides: dict[str, Any] = {"judge_params.scoring": scoring.upper()}
    if scoring == "probe":
        logprobs = Judge(load_judge_config(name, {"judge_params.scoring": "LOGPROBS"}))
        head = write_head(logprobs, scratch / f"{kind}-head.json")
        overrides["judge_params.probe"] = str(head)
    config = load_judge_config(name, overrides)
    answers: list[Any] = list(POINTWISE_ANSWERS if kind == "pointwise" else PAIRWISE_ANSWERS)
    labels: list[Any] = list(LABEL_LOGPROBS[kind])
    rng = np.random.default_rng(1)
    states: list[Any] = [rng.normal(size=HIDDEN_SIZE).astype(np.float32) for _ in range(3)]
    if faults:
        answers += ["I think Yes.", Completion('{"explanation": "cut', "length", 40, 12)]
        labels.append(LabelScores(None, "error", error="the engine failed"))
        states.append(HiddenState(None, "error", error="the engine failed"))
    backend = ScriptedBackend(
        answers,
        cycle=True,
        record=False,
        labels=_cycling(labels),
        states=_cycling(states),
    )
    return config, backend
