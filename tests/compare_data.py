"""Result files for the comparison tests: two judges run by the engine on the scripted backend, over one
input whose rows say what each judge answers.

Each row's ``request`` carries a plan, ``A=<verdict> B=<verdict>`` (and, for LOGPROBS judges, each
judge's probability of yes: ``pA=0.83 pB=0.12``); judge A's script reads its part and judge B's its own.
A verdict ``fail`` makes the judge answer something that does not parse (status ``parse_error``). So the
tests know every verdict, every flip and every failure before the engine runs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist import Engine, ScriptedBackend
from jurist.records import GenerationRequest, LabelRequest

ANSWERS = {"yes": '{"judgment": "Yes"}', "no": '{"judgment": "No"}', "fail": "no idea"}

# the comparison tests' plan: 12 rows yes -> no, 3 no -> yes, one failure on each side, 23 alike
PLAN = (
    [("yes", "no")] * 12
    + [("no", "yes")] * 3
    + [("fail", "yes"), ("yes", "fail")]
    + [("yes", "yes")] * 14
    + [("no", "no")] * 9
)


def config(name: str, scoring: str = "GENERATE", judgment_type: str = "BOOL") -> dict[str, Any]:
    return {
        "name": name,
        "judge_params": {
            "prompt_template": "Q: {request}\nA: {response}",
            "judgment_type": judgment_type,
            "scoring": scoring,
        },
    }


def plan_rows(
    plan: Sequence[tuple[str, str]],
    probabilities: Sequence[tuple[float, float]] | None = None,
    *,
    ids: bool = True,
) -> list[dict[str, Any]]:
    """One input row per (verdict of A, verdict of B); ids ``r0``, ``r1``, ... (without ``ids``, the
    results' row ids are the row positions)."""
    rows = []
    for i, (a, b) in enumerate(plan):
        request = f"question {i} A={a} B={b}"
        if probabilities is not None:
            request += f" pA={probabilities[i][0]:.6f} pB={probabilities[i][1]:.6f}"
        row = {"request": request, "response": f"answer {i} <b>&</b>"}
        rows.append({"id": f"r{i}", **row} if ids else row)
    return rows


def write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _planned(text: str, side: str) -> str:
    found = re.search(rf"\b{side}=(\S+)", text)
    assert found, text
    return found.group(1)


def run_side(
    folder: Path,
    source: Path,
    side: str,
    *,
    names: Sequence[str] = ("quality",),
    scoring: str = "GENERATE",
    judgment_type: str = "BOOL",
    output: str | None = None,
) -> Path:
    """Judge ``source`` as judge ``side`` (A or B) plans it; GENERATE answers the planned verdict (or text
    that does not parse), LOGPROBS the planned probability of yes (``p<side>=``); INT judgments answer the
    planned number. Several ``names``: as many judges, all answering alike."""

    def generate(request: GenerationRequest) -> str:
        verdict = _planned(request.messages[-1].content, side)
        if judgment_type == "INT" and verdict != "fail":
            return json.dumps({"judgment": int(verdict)})
        return ANSWERS[verdict]

    def labels(request: LabelRequest) -> dict[str, float]:
        p_yes = float(_planned(request.messages[-1].content, f"p{side}"))
        return {label: math.log(p_yes if label == "Yes" else 1 - p_yes) for label in request.labels}

    path = folder / (output or f"{side.lower()}.parquet")
    judges = [config(name, scoring, judgment_type) for name in names]
    Engine(judges, ScriptedBackend(generate, labels=labels)).run_file(source, path)
    return path


PAIR: dict[str, Any] = {
    "name": "pref",
    "judge_params": {
        "prompt_template": "Q: {question}\nFIRST: {response_a}\nSECOND: {response_b}",
        "scoring": "LOGPROBS",
    },
    "pairwise_judge_params": {},
}


def pair_rows(plan: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """Pairwise input rows: the winner (a or b) each judge names, ids ``p0``, ``p1``, ..."""
    return [
        {"id": f"p{i}", "question": f"q{i} A={a} B={b}", "response_a": f"ra{i}", "response_b": f"rb{i}"}
        for i, (a, b) in enumerate(plan)
    ]


def run_pair_side(folder: Path, source: Path, side: str) -> Path:
    """A pairwise LOGPROBS judge that names its planned winner in both orders (probability 0.9)."""

    def labels(request: LabelRequest) -> dict[str, float]:
        text = request.messages[-1].content
        winner = _planned(text, side)
        first_is_a = text.split("FIRST: ", 1)[1].startswith("ra")
        p_first = 0.9 if (winner == "a") == first_is_a else 0.1
        return {label: math.log(p_first if label == "A" else 1 - p_first) for label in request.labels}

    path = folder / f"pair_{side.lower()}.parquet"
    Engine(PAIR, ScriptedBackend([], labels=labels)).run_file(source, path)
    return path


def write_labels(path: Path, labels: Sequence[Any], ids: Sequence[str] | None = None) -> Path:
    """A labels file: ``{"id": ..., "label": ...}`` lines (rows without a label left out), or without
    ``ids`` one ``{"label": ...}`` line per row position (null where unlabelled)."""
    lines = []
    for i, label in enumerate(labels):
        if ids is None:
            lines.append({"label": label})
        elif label is not None:
            lines.append({"id": ids[i], "label": label})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path
