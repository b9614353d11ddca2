"""What each RAG step asks, and the prompt version.

Every step of a row is sent as two messages:

1. ``system``: the config's system instruction (the same for every step and row of a judge; the built-in
   RAG judges share one, so their rows share it in a prefix cache across metrics too);
2. ``user``: the row's *case* (the config's ``prompt_template``: contexts first, then the question, the
   answer, the reference), then the step's task, then the exact shape of its answer.

The case is byte-identical in every step of a row, so a step's prompt reuses the previous step's prefix in
the cache; the contexts, usually the longest part, come first so that the metrics that show them share
them too. :data:`PROMPT_VERSION` changes whenever a task's wording does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Literal

PROMPT_VERSION = "jurist-rag-1"
NONE_GIVEN = "(none given)"

Source = Literal["answer", "reference"]
Check = Literal["faithfulness", "recall", "answer_vs_reference", "reference_vs_answer"]

SOURCES: dict[Source, str] = {"answer": "the answer", "reference": "the reference answer"}

CHECKS: dict[Check, tuple[str, str]] = {
    "faithfulness": (
        "Claims made by the answer",
        "for each numbered claim, decide whether the contexts above support it: Yes if the contexts state "
        "it or it follows directly from them; No if they contradict it or do not contain it, even when it "
        "is true. Use only the contexts, not your own knowledge.",
    ),
    "recall": (
        "Statements of the reference answer",
        "for each numbered statement, decide whether it can be attributed to the contexts above: Yes if "
        "the contexts contain this information; No otherwise. Use only the contexts, not your own "
        "knowledge.",
    ),
    "answer_vs_reference": (
        "Statements of the answer",
        "for each numbered statement, decide whether the reference answer above supports it: Yes if the "
        "reference states it or implies it; No if the reference contradicts it or does not contain it.",
    ),
    "reference_vs_answer": (
        "Statements of the reference answer",
        "for each numbered statement, decide whether the answer above also states it, in any words: Yes if "
        "it does; No if the answer leaves it out or contradicts it.",
    ),
}


def numbered_contexts(texts: Sequence[str]) -> str:
    """Contexts as the case shows them: ``[1] text``, a blank line between them."""
    if not texts:
        return NONE_GIVEN
    return "\n\n".join(f"[{number}] {text}" for number, text in enumerate(texts, 1))


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{number}. {item}" for number, item in enumerate(items, 1))


def extract_task(source: Source, max_items: int) -> str:
    """Break the answer (or the reference answer) into statements."""
    what = SOURCES[source]
    return (
        f"Task: list the factual statements that {what} above makes, at most {max_items}. Each statement "
        "is one short, self-contained claim that can be understood on its own (name what pronouns refer "
        "to). Leave out questions, opinions, hedges and filler. If it makes no factual statement (for "
        "example, it only says that it does not know), give an empty list."
    )


def verify_task(check: Check, statements: Sequence[str]) -> str:
    """Check each statement against the case (the contexts, the reference or the answer)."""
    title, task = CHECKS[check]
    return f"{title}:\n{_numbered(statements)}\n\nTask: {task}"


def precision_task(count: int, with_reference: bool) -> str:
    """Decide, context by context, whether it helps answer the question."""
    given = " and the reference answer" if with_reference else ""
    return (
        f"Task: for each numbered context above (1 to {count}), decide whether it is useful for answering "
        f"the question{given}: Yes if it holds information the answer needs; No if it is off topic or "
        "does not help."
    )


def relevance_task() -> str:
    """Rate how directly the answer addresses the question, 1 to 5."""
    return (
        "Task: rate how directly the answer addresses the question, from 1 to 5. 5: it answers exactly "
        "what was asked, completely and without digressions. 3: it partly answers it, or mixes in "
        "unrelated content. 1: it does not address the question at all. Rate relevance only, not "
        "correctness."
    )


def criteria_task(criteria: str, scale: int) -> str:
    """Rate the answer against the caller's criteria, 1 to ``scale``."""
    return (
        f"Criteria: {criteria.strip()}\n\nTask: rate how well the answer meets the criteria, from 1 (not "
        f"at all) to {scale} (fully)."
    )


def user_message(case: str, task: str, instructions: str) -> str:
    """The user turn of a step: the case, the task, the answer's shape."""
    return f"{case.rstrip()}\n\n{task}\n\n{instructions}"


def tasks_fingerprint() -> str:
    """A short hash of every task's wording (with placeholder arguments) and the prompt version."""
    sample = ["<statement>"]
    texts = [
        PROMPT_VERSION,
        *(extract_task(source, 1) for source in SOURCES),
        *(verify_task(check, sample) for check in CHECKS),
        precision_task(1, True),
        precision_task(1, False),
        relevance_task(),
        criteria_task("<criteria>", 5),
        user_message("<case>", "<task>", "<shape>"),
        numbered_contexts(sample),
    ]
    return hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]
