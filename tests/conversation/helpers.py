"""Scripted answers of a conversation judge, shared by the conversation tests."""

from __future__ import annotations

import json

from jurist import ScriptedBackend
from jurist.records import GenerationRequest


def answer(verdict: str, reason: str = "because") -> str:
    """A well-formed answer of the built-in conversation/criterion judge."""
    return json.dumps({"explanation": reason, "judgment": verdict})


def by_criterion(verdicts: dict[str, str], *, model_id: str = "scripted") -> ScriptedBackend:
    """A backend that answers each request with the verdict of the criterion its prompt names."""

    def script(request: GenerationRequest) -> str:
        prompt = request.messages[-1].content
        criterion = prompt.rsplit("[CRITERION]\n", 1)[1].strip()
        return answer(verdicts.get(criterion, "no"), f"judged {criterion}")

    return ScriptedBackend(script, model_id=model_id)
