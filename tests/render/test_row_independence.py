"""A row's prompt never depends on the rows judged with it.

Every case is judged alone, in shuffled batches and in chunks of every size, from rows in memory, a JSONL
file and a JSON array file; the prompts sent for it (and its status) must be byte-identical each time.
The cases are the ones Arrow unifies across rows when they share a table: OpenAI content parts beside
plain messages, tool calls with different argument keys, messages with and without ``tool_calls``, dict /
list / text ``expected_output``, an integer beside a float, nested nulls.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.judges.judge import Judge
from jurist.records import GenerationRequest

USER = {"role": "user", "content": "What is the weather in Paris?"}
CASES: list[dict[str, Any]] = [
    {"messages": [USER], "response": "Sunny."},
    {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
        "response": "Sunny.",
    },
    {
        "messages": [
            USER,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "function": {"name": "weather", "arguments": {"city": "Paris"}}}],
            },
            {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        ],
        "response": "It is sunny.",
    },
    {
        "messages": [USER],
        "output": {
            "response": "Sunny.",
            "tools_called": [{"name": "weather", "arguments": {"city": "Paris"}}],
        },
    },
    {
        "messages": [USER],
        "output": {
            "response": "Found it.",
            "tools_called": [{"name": "search", "arguments": {"q": "paris weather", "limit": 3}}],
        },
    },
    {"messages": [USER], "response": "Sunny.", "expected_output": {"answer": "sunny", "confidence": 0.9}},
    {"messages": [USER], "response": "Sunny.", "expected_output": "sunny"},
    {"messages": [USER], "response": "Sunny.", "expected_output": ["sunny", "warm"]},
    {"messages": [USER], "response": "Sunny.", "score": 1},
    {"messages": [USER], "response": "Sunny.", "score": 1.5},
    {"input": "Weather in Paris?", "output": "Sunny."},
    {"input": {"question": "Weather?", "city": "Paris"}, "response": "Sunny."},
    {"messages": [{"role": "user", "content": "Hi", "name": None}], "response": "Hello."},
    {
        "messages": [USER],
        "response": "Sunny.",
        "output_messages": [
            {"type": "reasoning", "summary": "look it up"},
            {"role": "assistant", "content": "Sunny."},
        ],
    },
    {"messages": [], "response": "Sunny."},
    {"response": "Sunny."},
    {"messages": [USER], "response": "Sunny.", "metadata": {"tags": ["a"], "extra": {"deep": None}}},
]

PROMPTS = {
    "messages": "{{input.all_messages}} | {{log.input}}",
    "tools": "{{output.tools_called}} | {{output.messages}}",
    "expected": "{{input.expected_output}} | {expected_output}",
    "plain": "{messages} | {response}",
    "score": "{score} / {{input.city}}",
    "meta": "{metadata} {{metadata.tags.0}}",
}
ANSWER = '{"explanation": "e", "judgment": "Yes"}'


def judges() -> list[Judge]:
    built_in = load_judge_config("jury/pointwise")
    out = [
        Judge(
            load_judge_config(
                "jury/pointwise",
                {"judge_params.prompt_template": "Row {row_id}\n" + built_in.judge_params.prompt_template},
            )
        )
    ]
    for name, prompt in PROMPTS.items():
        config = {"name": name, "judge_params": {"prompt_template": "Row {row_id}\n" + prompt}}
        out.append(Judge(load_judge_config(config)))
    return out


Prompts = dict[str, tuple[str, tuple[str, ...]]]  # row id -> (statuses, prompts sent)


def judged(data: Any, chunk_size: int) -> Prompts:
    """Each row's statuses and the prompts sent for it."""
    sent: dict[str, list[str]] = {}

    def answer(request: GenerationRequest) -> str:
        user = request.messages[-1].content
        row_id = user.split("\n", 1)[0].removeprefix("Row ")
        sent.setdefault(row_id, []).append(json.dumps([m.as_dict() for m in request.messages]))
        return ANSWER

    all_judges = judges()
    table = Engine(all_judges, ScriptedBackend(answer), chunk_size=chunk_size).run(data)
    out: Prompts = {}
    for index, row_id in enumerate(table["row_id"].to_pylist()):
        statuses = "/".join(
            f"{j.name}:{table[f'{j.name}.status'][index].as_py()}:{table[f'{j.name}.error'][index].as_py()}"
            for j in all_judges
        )
        out[str(row_id)] = (statuses, tuple(sent.get(str(row_id), ())))
    return out


KEYS = dict.fromkeys(key for case in CASES for key in case)


def rows(order: list[int]) -> list[dict[str, Any]]:
    """The cases, each with every top-level column (null where it has none, so that a case alone has the
    columns the judges read); nested values are left as they are."""
    return [{"row_id": f"case{i}", **dict.fromkeys(KEYS), **CASES[i]} for i in order]


@pytest.fixture(scope="module")
def alone() -> Prompts:
    out: Prompts = {}
    for i in range(len(CASES)):
        out.update(judged(rows([i]), 1))
    return out


def test_the_cases_reach_the_model(alone: Prompts) -> None:
    """The cases are judged (not refused) where they hold what the prompt reads."""
    assert all(prompts for _, prompts in alone.values())
    assert "Weather in Paris?" in alone["case1"][1][0]  # content parts
    assert '"limit"' not in "".join(alone["case3"][1])  # a sibling's argument keys never appear
    assert '"tool_calls": null' not in "".join(alone["case0"][1])


@pytest.mark.parametrize("chunk_size", range(1, len(CASES) + 1))
def test_chunks_of_every_size_render_as_alone(alone: Prompts, chunk_size: int) -> None:
    assert judged(rows(list(range(len(CASES)))), chunk_size) == alone


@pytest.mark.parametrize("seed", range(6))
def test_shuffled_batches_render_as_alone(alone: Prompts, seed: int) -> None:
    order = list(range(len(CASES)))
    random.Random(seed).shuffle(order)
    size = random.Random(seed).randint(2, len(CASES))
    subset = order[:size]
    got = judged(rows(subset), random.Random(seed + 100).randint(1, size))
    assert got == {f"case{i}": alone[f"case{i}"] for i in subset}


@pytest.mark.parametrize("kind", ["jsonl", "json"])
@pytest.mark.parametrize("chunk_size", [1, 5, len(CASES)])
def test_files_render_as_alone(alone: Prompts, tmp_path: Path, kind: str, chunk_size: int) -> None:
    order = list(range(len(CASES)))
    random.Random(7).shuffle(order)
    path = tmp_path / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows(order)), encoding="utf-8")
    else:
        path.write_text(json.dumps(rows(order)), encoding="utf-8")
    assert judged(str(path), chunk_size) == alone


def test_the_output_table_still_carries_unified_columns() -> None:
    """What a judge sees is the row as given; the carried output columns are one Arrow type per column."""
    table = Engine(judges()[1:2], ScriptedBackend([ANSWER], cycle=True)).run(rows(list(range(len(CASES)))))
    assert table.num_rows == len(CASES)
    assert table.column("score").to_pylist()[8:10] == [1.0, 1.5]
