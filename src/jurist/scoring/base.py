"""What a scoring mode is: how a judge gets its answer from the model and how the answer is read.

A judge's ``judge_params.scoring`` names its mode; the mode object (one subclass of :class:`Scoring` per
mode, listed in :data:`jurist.scoring.MODES`) owns everything that differs between modes:

* its config check (:meth:`Scoring.problem_with`) and the ``judge_params`` keys only it reads (``keys``: set
  under another mode, they are refused, naming the mode that reads them);
* the engine capability it needs (``capability``, checked against the engine table before any model loads)
  and what it asks of the engine it runs on (:meth:`Scoring.engine_use`);
* its request for a rendered prompt (:meth:`Scoring.request`) and the reading of the answer
  (:meth:`Scoring.read`), which every judge kind calls through its parts;
* what it adds to a run's provenance (:meth:`Scoring.metadata`, :meth:`Scoring.identity`), its checks of the
  judge and of the loaded engine, and its line in ``jurist validate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from jurist.answer.reading import AnswerReader, Reading
from jurist.config.models import JudgeConfig
from jurist.config.types import ScoringMode
from jurist.records import (
    Answer,
    Capability,
    ConstraintKind,
    EngineUse,
    GenerationRequest,
    LabelRequest,
    Message,
    Request,
)

Messages = tuple[Message, ...]
Kinds = Sequence[ConstraintKind]
Row = Mapping[str, Any] | None
"""The input row a prompt was rendered from, where the judge kind passes it (None: not given)."""


class Parts(Protocol):
    """What a mode uses of a judge's parts (:class:`jurist.judges.parts.JudgeParts`)."""

    @property
    def reader(self) -> AnswerReader: ...

    def generation_request(
        self, messages: tuple[Message, ...], kinds: Sequence[ConstraintKind] = ..., sample: int = ...
    ) -> GenerationRequest: ...

    def label_request(self, messages: tuple[Message, ...]) -> LabelRequest: ...


class Scoring:
    """One scoring mode of one judge (see the module docstring); built once per judge from its config."""

    mode: ClassVar[ScoringMode]
    keys: ClassVar[tuple[str, ...]] = ()
    """``judge_params`` keys only this mode reads."""
    capability: ClassVar[Capability | None] = None
    """What the engine must be able to do besides generating (None: generation only)."""
    reads: ClassVar[str] = "the model's answer"
    """What the mode reads, in words, for messages."""
    bench_name: ClassVar[str]
    """The mode as ``jurist bench --modes`` names it."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config

    @classmethod
    def problem_with(cls, config: JudgeConfig) -> str | None:
        """What is wrong with a config in this mode (None: nothing)."""
        return None

    @property
    def reads_labels(self) -> bool:
        """Whether the judgment comes from a label distribution read after one prefill (as the mode declares
        it: :data:`jurist.config.types.READS_LABELS`)."""
        return self.mode.reads_labels

    @property
    def generates(self) -> bool:
        """Whether its requests decode text (what an engine kept full streams)."""
        return self.capability is None

    def engine_use(self) -> EngineUse:
        """What the judge asks of its engine besides generation."""
        return EngineUse(label_scores=self.config.judge_params.label_probabilities)

    def request(self, parts: Parts, messages: Messages, kinds: Kinds, row: Row = None) -> Request:
        """The request for a prompt rendered from ``row``."""
        return parts.generation_request(messages, kinds)

    def read(self, parts: Parts, answer: Answer) -> Reading:
        """An answer to :meth:`request`, read."""
        return parts.reader.read_answer(answer)

    def check_judge(self, name: str, prompt: str, answer: str, labels: Sequence[str]) -> None:
        """Refuse a judge this mode cannot serve (its prompt and answer fingerprints, its labels)."""

    def check_engine(self, described: Mapping[str, Any]) -> None:
        """Refuse the engine the judge's requests went to, once it has loaded (``described``: its
        :func:`~jurist.backends.base.describe`)."""

    def metadata(self) -> dict[str, Any]:
        """What the judge's entry in the run metadata records of the mode beyond its name."""
        return {}

    def identity(self) -> dict[str, Any]:
        """What decides the judge's results besides its config (part of a run's fingerprint)."""
        return {}

    def describe(self) -> str | None:
        """A line for ``jurist validate`` (None: nothing beyond the mode's name)."""
        return None
