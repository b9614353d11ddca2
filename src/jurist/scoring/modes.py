"""The scoring modes that read the model's own output: GENERATE (decode the answer under its constraint)
and LOGPROBS (read the label distribution after one prefill)."""

from __future__ import annotations

from jurist.answer.reading import Reading
from jurist.config.types import ScoringMode
from jurist.records import (
    Answer,
    EngineUse,
    LabelScores,
    Request,
)
from jurist.scoring.base import Kinds, Messages, Parts, Row, Scoring


class Generate(Scoring):
    """``GENERATE``: the model writes the answer, held to the judge's output constraint; with
    ``label_probabilities`` the label fields' distributions come from the generated tokens' log-probabilities
    (the output projection in float32 where the engine can)."""

    mode = ScoringMode.GENERATE
    bench_name = "generation"


class Logprobs(Scoring):
    """``LOGPROBS``: one prefill of the prompt and the answer's start, then the probability of each label
    (BOOL, ENUM and INT judgments, pairwise judges); the output projection runs in float32, so that label
    probabilities do not move in bfloat16's steps."""

    mode = ScoringMode.LOGPROBS
    capability = "label_scores"
    reads = "label probabilities after one prefill"
    bench_name = "logprobs"

    def engine_use(self) -> EngineUse:
        return EngineUse(label_scores=True)

    def request(self, parts: Parts, messages: Messages, kinds: Kinds, row: Row = None) -> Request:
        return parts.label_request(messages)

    def read(self, parts: Parts, answer: Answer) -> Reading:
        if isinstance(answer, LabelScores):
            return parts.reader.read_labels(answer)
        return parts.reader.read_answer(answer)
