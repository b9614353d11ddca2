"""A deterministic RAG judge model for tests: the answers the RAG metrics' steps expect, from the prompt
alone (shared by the RAG tests and the batch-file rounds test)."""

from __future__ import annotations

import json
import re


def answer(prompt: str) -> str:
    """A deterministic judge: statements are the sentences of the text asked about; a statement (or
    context) is supported when it shares a word of 5+ letters with the material it is checked against."""
    case, _, task = prompt.partition("\n\nTask: ")
    if task.startswith("list the factual statements"):
        source = "[Reference answer]" if "the reference answer above" in task else "[Answer]"
        text = case.split(f"{source}\n")[1].split("\n\n[")[0]
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s", text) if len(s.strip()) > 15]
        return json.dumps({"statements": sentences[:12]})
    if task.startswith("rate"):
        return json.dumps({"reason": "plain", "score": 1 + len(case) % 5})
    count = int(re.search(r"from 1 to (\d+), in order", prompt).group(1))  # type: ignore[union-attr]
    words = set(re.findall(r"[a-z]{5,}", case.lower()))
    items = re.findall(r"^\d+\. (.*)$", prompt, re.M) or re.findall(r"^\[\d+\] (.*)$", case, re.M)
    labels = [
        "Yes" if words & set(re.findall(r"[a-z]{5,}", item.lower())) else "No" for item in items[:count]
    ]
    return json.dumps(
        {"verdicts": [{"index": i, "reason": "r", "verdict": v} for i, v in enumerate(labels, 1)]}
    )
