"""The types of a judge config: its enums (response formats, judgment types, aggregations, engines, scoring
modes) and the strict pydantic base every config section derives from.

Every enum accepts its values in any letter case (``json`` == ``JSON``), as YAML authors write them. This
module imports nothing from jurist: every other package may read these types.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""Criterion ids and template names: letters, digits and underscores, not starting with a digit."""


class _UpperEnum(str, enum.Enum):
    """A string enum that accepts its values in any letter case (``json`` == ``JSON``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            for member in cls:
                if member.value == value.strip().upper():
                    return member
        return None


class ResponseFormat(_UpperEnum):
    """How the judge writes its answer (what each format means is :mod:`jurist.answer.formats`)."""

    JSON = "JSON"
    XML = "XML"
    RAW = "RAW"


class JudgmentType(_UpperEnum):
    """The type of a judgment field."""

    BOOL = "BOOL"
    INT = "INT"
    FLOAT = "FLOAT"
    TEXT = "TEXT"
    ENUM = "ENUM"


class Aggregation(_UpperEnum):
    """How a rubric judge combines its criteria's scores into ``aggregate_score``."""

    WEIGHTED_MEAN = "WEIGHTED_MEAN"
    MIN = "MIN"
    ALL = "ALL"
    NONE = "NONE"


class InferenceEngine(_UpperEnum):
    """Which backend runs the judge model.

    ``VLLM``: vLLM's offline engine in this process. ``NATIVE``: transformers with outlines constraints.
    ``REMOTE_VLLM`` / ``OPENAI``: an OpenAI-compatible HTTP server.
    """

    VLLM = "VLLM"
    NATIVE = "NATIVE"
    REMOTE_VLLM = "REMOTE_VLLM"
    OPENAI = "OPENAI"


class ScoringMode(_UpperEnum):
    """``GENERATE``: decode the answer. ``LOGPROBS``: read label probabilities after one prefill. ``PROBE``:
    a probe head (``judge_params.probe``) reads them from the hidden state of the same prefill."""

    GENERATE = "GENERATE"
    LOGPROBS = "LOGPROBS"
    PROBE = "PROBE"

    @property
    def reads_labels(self) -> bool:
        """Whether the judge reads a label distribution after one prefill, as each mode declares it in
        :data:`READS_LABELS` (LOGPROBS and PROBE do)."""
        return READS_LABELS[self]


READS_LABELS: Mapping[ScoringMode, bool] = MappingProxyType(
    {ScoringMode.GENERATE: False, ScoringMode.LOGPROBS: True, ScoringMode.PROBE: True}
)
"""Each scoring mode's declaration: whether its judgment is a label distribution read after one prefill (the
config rules for label judgments, the judge kinds and ``jurist bench`` follow it). A new mode declares
itself here."""


class StrictModel(BaseModel):
    """A config section: unknown keys are refused, assignments are validated."""

    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, use_enum_values=False, use_attribute_docstrings=True
    )
