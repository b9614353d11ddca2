"""A scripted ``fn(prompt, system)`` for the RAG tests: it answers each step from what the prompt asks.

``Model(statements=..., verdicts=..., rating=...)`` answers an extraction with the statements given for
the source it is asked about, a verification with the verdicts given for that check (a list of Yes/No, or
a whole answer text), and a rating with the rating given; ``calls`` records every (prompt, system).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jurist.judges.rag.prompts import CHECKS

EXTRACT = re.compile(r"Task: list the factual statements that (the answer|the reference answer) above makes")


def check_of(prompt: str) -> str | None:
    """Which verification a prompt asks for (faithfulness, recall, ...; ``precision`` for contexts)."""
    if "Task: for each numbered context above" in prompt:
        return "precision"
    for check, (_title, task) in CHECKS.items():
        if f"Task: {task}" in prompt:
            return check
    return None


def statements_json(items: Sequence[str]) -> str:
    return json.dumps({"statements": list(items)})


def verdicts_json(labels: Sequence[str], indices: Sequence[int] | None = None) -> str:
    numbers = indices if indices is not None else range(1, len(labels) + 1)
    return json.dumps(
        {
            "verdicts": [
                {"index": i, "reason": "checked", "verdict": v} for i, v in zip(numbers, labels, strict=True)
            ]
        }
    )


@dataclass
class Model:
    """Answers every step; unknown prompts raise (a test that sends one is wrong)."""

    statements: dict[str, list[str]] = field(default_factory=dict)  # "answer" / "reference" -> statements
    verdicts: dict[str, Any] = field(default_factory=dict)  # check -> labels, or a whole answer text
    rating: Any = 4  # an int, or a whole answer text
    calls: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, prompt: str, system: str) -> str:
        self.calls.append((prompt, system))
        extract = EXTRACT.search(prompt)
        if extract is not None:
            source = "answer" if extract.group(1) == "the answer" else "reference"
            return statements_json(self.statements.get(source, []))
        check = check_of(prompt)
        if check is not None:
            given = self.verdicts[check]
            return given if isinstance(given, str) else verdicts_json(given)
        if "Task: rate" in prompt:
            return (
                self.rating
                if isinstance(self.rating, str)
                else json.dumps({"reason": "ok", "score": self.rating})
            )
        raise AssertionError(f"unexpected prompt: {prompt[-300:]}")
