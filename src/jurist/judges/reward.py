"""Reward models and classifiers as judges: a sequence-classification model scores each row, no text is
generated.

The conversation scored is the optional system instruction, ``judge_params.prompt_template`` as the user
turn and ``reward_judge_params.response_template`` as the assistant turn (the model's chat template is
applied by the backend as the model expects). A reward model (one output) gives ``j.reward``, which is
also the row's score. A classifier (``reward_judge_params.labels`` names its outputs) gives each label's
probability (``j.p.<label>``, a softmax of its outputs), the most likely ``j.label``, and as ``j.reward``
and score the probability of ``positive_label`` (default: the last label). A model whose number of
outputs does not match gives the row ``backend_error`` naming both.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from jurist.config.models import RewardJudgeParams
from jurist.config.templates import Template
from jurist.judges.base import OneCallKind, Step
from jurist.judges.columns import RAW_COLUMN, Column, extra_column, field_column
from jurist.judges.outputs import JudgeOutput, Status
from jurist.judges.parts import JudgeParts
from jurist.records import Answer, Capability, ConstraintKind, Message, RewardRequest, RewardScores
from jurist.render.namespace import build_namespace


def softmax(logits: Sequence[float]) -> list[float]:
    top = max(logits)
    weights = [math.exp(v - top) for v in logits]
    total = sum(weights)
    return [w / total for w in weights]


class RewardJudge(OneCallKind):
    """A judge whose model is a sequence classifier (a reward model, or a classifier with labels)."""

    kind_name = "reward"
    parts_used = ()  # the model's output is the score: no answer format, prompt builder or reader
    section = "reward_judge_params"

    label = "reward"
    judgment_fields: tuple[str, ...] = ()

    @property
    def generates(self) -> bool:
        return False

    @property
    def needs(self) -> tuple[Capability | None, str]:
        """A reward model's scores, whatever ``judge_params.scoring`` says (it is not read)."""
        return "rewards", "reward_judge_params: a sequence classifier's scores"

    def describe(self) -> list[str]:
        """What the model scores and what comes out."""
        lines = [
            "a sequence classifier scores the conversation: "
            + ("system instruction, " if self.system is not None else "")
            + f"user turn {self.user.text!r}, assistant turn {self.response.text!r}; no text generated"
        ]
        if self.labels:
            lines.append(f"labels {list(self.labels)} (softmax); score: P({self.positive})")
        else:
            lines.append("one output: the reward, also the row's score")
        return lines

    def __init__(self, parts: JudgeParts) -> None:
        super().__init__(parts)
        assert self.config.reward_judge_params is not None
        self.params: RewardJudgeParams = self.config.reward_judge_params
        jp = self.config.judge_params
        variables = jp.template_variables
        self.system = Template(jp.system_instruction).substitute(variables) if jp.system_instruction else None
        self.user = Template(jp.prompt_template).substitute(variables)
        self.response = Template(self.params.response_template).substitute(variables)
        self.labels = tuple(self.params.labels or ())
        self.positive = self.params.positive_label or (self.labels[-1] if self.labels else None)

    @property
    def required_fields(self) -> set[str]:
        templates = [self.user, self.response, *([self.system] if self.system is not None else [])]
        return set().union(*(t.names for t in templates))

    @property
    def prompt_hash(self) -> str:
        payload = [None if self.system is None else self.system.text, self.user.text, self.response.text]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]

    @property
    def schema_hash(self) -> str:
        payload = {"reward": list(self.labels), "positive": self.positive}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def start(self, row: Mapping[str, Any], kinds: Sequence[ConstraintKind]) -> Step:
        namespace = build_namespace(row)
        messages = [
            Message("user", self.user.render(namespace)),
            Message("assistant", self.response.render(namespace)),
        ]
        if self.system is not None:
            messages.insert(0, Message("system", self.system.render(namespace)))
        return Step((RewardRequest(tuple(messages)),), self.finish)

    def finish(self, answers: Sequence[Answer]) -> JudgeOutput:
        scores = answers[0]
        if not isinstance(scores, RewardScores):
            raise TypeError(f"a reward judge reads reward scores, not {type(scores).__name__}")
        tokens: dict[str, Any] = {"prompt_tokens": scores.prompt_tokens, "completion_tokens": 0}
        if scores.finish_reason == "too_long":
            return self.failure(
                "too_long", scores.error or "the conversation exceeds the model's context", **tokens
            )
        if scores.finish_reason != "stop" or not scores.logits:
            return self.failure("backend_error", scores.error or "no score", **tokens)
        logits = list(scores.logits)
        expected = max(len(self.labels), 1)
        if len(logits) != expected:
            named = (
                f"reward_judge_params.labels names {len(self.labels)}"
                if self.labels
                else "no labels are named"
            )
            error = f"the model gives {len(logits)} outputs, but {named} (name one label per output)"
            return self.failure("backend_error", error, **tokens)
        if not self.labels:
            reward = float(logits[0])
            return JudgeOutput(
                "ok", {}, {}, None, reward, raw=json.dumps(logits), extras={"reward": reward}, **tokens
            )
        probs = dict(zip(self.labels, softmax(logits), strict=True))
        top = max(probs, key=lambda label: probs[label])
        assert self.positive is not None
        extras = {"reward": probs[self.positive], **{f"p.{label}": p for label, p in probs.items()}}
        raw = json.dumps(logits)
        return JudgeOutput(
            "ok", {"label": top}, {}, None, probs[self.positive], raw=raw, extras=extras, **tokens
        )

    def failure(self, status: Status, error: str, **tokens: Any) -> JudgeOutput:
        if status == "target_error":
            error = f"the target errored: {error}"
        return JudgeOutput(status, {}, {}, error=error, **tokens)

    @cached_property
    def value_columns(self) -> tuple[Column, ...]:
        columns = [extra_column("reward")]
        if self.labels:
            columns.append(field_column("label", "string"))
            columns += [extra_column(f"p.{label}") for label in self.labels]
        columns.append(RAW_COLUMN)
        return tuple(columns)
