"""``PROBE``: a probe head (``judge_params.probe``, fitted by ``jurist probe fit``) reads the judge's labels
from the model's hidden state of the prompt LOGPROBS reads its labels after.

The head file is read once, when the judge is built, and checked against the judge's prompt, answer format
and labels; the engine is asked for the prompts' last hidden states after the head's layer (a
:class:`~jurist.records.StateRequest`; for a pooled head, the mean over its field's tokens in the row's
prompt, alone or after the last token's state), so it may load the model cut there and decode nothing; the
head turns
each state into the labels' log-probabilities, read as LOGPROBS' are. Once the engine has loaded, the head is
checked against its model (weights fingerprint and layer count), naming both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.answer.reading import Reading
from jurist.config.models import JudgeConfig
from jurist.config.types import ScoringMode
from jurist.models.probe_head import pooled_text, read_head
from jurist.records import (
    Answer,
    EngineUse,
    HiddenState,
    LabelScores,
    Request,
    StateRequest,
)
from jurist.scoring.base import Kinds, Messages, Parts, Row, Scoring


class Probe(Scoring):
    """A head's label distribution from the model's hidden state (see the module docstring)."""

    mode = ScoringMode.PROBE
    keys = ("probe",)
    capability = "hidden_states"
    reads = "the model's hidden states"
    bench_name = "probe"

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        path = config.judge_params.probe
        assert path is not None  # problem_with refuses a PROBE judge without a head
        self.path = str(Path(path).resolve())
        self.head, self.sha256 = read_head(path)
        self.arrays = self.head.arrays  # the head's arrays, built once: every answer is read through them

    @classmethod
    def problem_with(cls, config: JudgeConfig) -> str | None:
        jp = config.judge_params
        if not jp.probe:
            return "judge_params.scoring PROBE needs judge_params.probe (a head file: jurist probe fit)"
        if jp.reasoning is not None:
            return (
                "judge_params.reasoning generates text, which a probe engine cannot: drop one of reasoning "
                "and scoring PROBE"
            )
        return None

    def engine_use(self) -> EngineUse:
        return EngineUse.states(self.head.layer, self.head.pooling)

    def request(self, parts: Parts, messages: Messages, kinds: Kinds, row: Row = None) -> Request:
        labels = parts.label_request(messages)
        head = self.head
        field = head.pooled_field  # a pooled head averages that field's tokens in the row
        text = pooled_text(row, field) if field is not None and row is not None else ""
        return StateRequest(labels.messages, head.layer, labels.answer_prefix, head.pooling, text)

    def read(self, parts: Parts, answer: Answer) -> Reading:
        if not isinstance(answer, HiddenState):
            return parts.reader.read_answer(answer)
        if answer.values is None or answer.finish_reason != "stop":
            error = answer.error or "no hidden state"
            return parts.reader.read_labels(
                LabelScores(None, answer.finish_reason, answer.prompt_tokens, error)
            )
        import numpy as np

        logprobs = self.arrays.log_probabilities(np.asarray(answer.values, dtype=np.float64)[None, :])[0]
        scores = {label: float(logprobs[k]) for k, label in enumerate(self.head.labels)}
        return parts.reader.read_labels(LabelScores(scores, "stop", answer.prompt_tokens))

    def check_judge(self, name: str, prompt: str, answer: str, labels: Sequence[str]) -> None:
        self.head.check_judge(name, prompt, answer, labels)

    def check_engine(self, described: Mapping[str, Any]) -> None:
        name = str(described.get("model"))
        self.head.check_model(name, described.get("weights"), described.get("num_layers"))

    def metadata(self) -> dict[str, Any]:
        """Where the head came from: its file and sha256, layer, model, labels and fitted accuracy."""
        head = self.head
        return {
            "probe": {
                "path": self.path,
                "sha256": self.sha256,
                "layer": head.layer,
                "pooling": head.pooling,
                "pooled_field": head.pooled_field,
                "model": head.model.name,
                "weights": head.model.weights,
                "labels": head.fit.get("labels"),
                "rows": head.fit.get("rows"),
                "cross_validated_accuracy": head.accuracy,
            }
        }

    def identity(self) -> dict[str, Any]:
        return {"probe_heads": self.sha256}  # a head fitted again at the same path is another judge

    def describe(self) -> str:
        head = self.head
        accuracy = head.accuracy
        fitted = f", cross-validated accuracy {100 * accuracy:.1f} %" if accuracy is not None else ""
        feature = {"last": "", "mean": " (the mean over", "last_mean": " (the last token and the mean over"}
        pooled = f"{feature[head.pooling]} {head.pooled_field}'s tokens)" if head.pooled_field else ""
        return (
            f"probe head {self.config.judge_params.probe}: layer {head.layer}{pooled} of {head.model.name} "
            f"(weights {head.model.weights}), fitted on {head.fit.get('rows')} rows{fitted}"
        )
