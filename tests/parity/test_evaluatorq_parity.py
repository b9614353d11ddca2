"""Differential tests: evaluatorq 1.82's own jury (``llm_jury``, ``llm_jury_pairwise``) and jurist's
``jury/*`` built-ins, driven through one fake OpenAI-compatible model, must send byte-identical prompts
(system and user messages) and reach the same verdicts; where jurist differs on purpose, the difference is
asserted here.

evaluatorq fetches a model catalogue from the network on its first judge call: the fetch is blocked (it fails
at once, which evaluatorq tolerates with a warning).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

evaluatorq = pytest.importorskip("evaluatorq", reason="evaluatorq is not installed: jurist[parity]")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_server import ChatServer, chat_server, completion  # noqa: E402
from jurist import Engine, load_judge_config  # noqa: E402

EVQ_MODEL, JURIST_MODEL = "evaluatorq-fake", "jurist-fake"
CRITERIA = "The response answers the question correctly."

USER = {"role": "user", "content": "What is the capital of France?"}
TOOL_CALL = {"id": "call_1", "name": "search", "arguments": {"q": "capital of France"}, "result": "Paris"}
DATA: dict[str, dict[str, Any]] = {
    "plain": {"inputs": {"messages": [USER]}, "expected_output": "Paris", "output": "Paris."},
    "multi_turn": {
        "inputs": {
            "messages": [
                {"role": "system", "content": "Be brief."},
                USER,
                {"role": "assistant", "content": "Paris."},
                {"role": "user", "content": "And of Italy?"},
            ]
        },
        "expected_output": "Rome",
        "output": "Rome.",
    },
    "content_parts": {
        "inputs": {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Capital?"}, "of France"]}]
        },
        "expected_output": "Paris",
        "output": "Paris.",
    },
    "image_part": {
        "inputs": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "https://example.org/eiffel.png"}},
                        {"type": "text", "text": "Which city is this?"},
                    ],
                }
            ]
        },
        "expected_output": "Paris",
        "output": "Paris.",
    },
    "null_content_and_tool_calls": {
        "inputs": {
            "messages": [
                USER,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "f"}}],
                },
                {"role": "tool", "content": "Paris", "tool_call_id": "c"},
            ]
        },
        "expected_output": "Paris",
        "output": "Paris.",
    },
    "input_text": {"inputs": {"input": "Capital of France?"}, "expected_output": "Paris", "output": "Paris."},
    "inputs_object": {
        "inputs": {"country": "France", "ask": "capital"},
        "expected_output": "Paris",
        "output": "Paris",
    },
    "non_ascii": {
        "inputs": {"messages": [{"role": "user", "content": "Où est la tour Eiffel ? 東京?"}]},
        "expected_output": "À Paris",
        "output": "À Paris — près de la Seine.",
    },
    "dict_expected": {
        "inputs": {"messages": [USER]},
        "expected_output": {"city": "Paris", "confidence": 0.9, "tags": ["capital"]},
        "output": "Paris.",
    },
    "no_expected": {"inputs": {"messages": [USER]}, "expected_output": None, "output": "Paris."},
    "number_expected": {"inputs": {"messages": [USER]}, "expected_output": 42, "output": "42"},
    "null_output": {"inputs": {"messages": [USER]}, "expected_output": "Paris", "output": None},
    "tool_call_only": {
        "inputs": {"messages": [USER]},
        "expected_output": "Paris",
        "output": {"response": "", "tool_calls": [TOOL_CALL]},
    },
    "static_output": {
        "inputs": {"messages": [USER]},
        "expected_output": "Paris",
        "output": {"response": "It is Paris.", "tool_calls": [TOOL_CALL]},
    },
    "string_arguments": {
        "inputs": {"messages": [USER]},
        "expected_output": "Paris",
        "output": {
            "response": "Paris.",
            "tool_calls": [
                {"id": "c2", "function": {"name": "lookup", "arguments": '{"city": "Paris", "n": 1}'}}
            ],
        },
    },
    "empty_messages": {"inputs": {"messages": []}, "expected_output": "Paris", "output": "Paris."},
    "open_responses": {
        "inputs": {"messages": [USER]},
        "expected_output": "Paris",
        "output": {
            "object": "response",
            "id": "resp_1",
            "created_at": 0,
            "model": "agent",
            "status": "completed",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "Look it up."}],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_9",
                    "name": "search",
                    "arguments": '{"q": "capital of France"}',
                    "status": "completed",
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
                },
            ],
        },
    },
    "number_output": {"inputs": {"messages": [USER]}, "expected_output": "2", "output": 2},
}


def agent_response() -> Any:
    """An agent's live response object: reasoning, a tool call with its result, the answer."""
    from evaluatorq.contracts import AgentResponse, ReasoningOutputItem, TextOutputItem, ToolCallOutputItem

    call = ToolCallOutputItem(
        id="fc_2", call_id="call_2", name="search", arguments='{"q": "France"}', result="Paris"
    )
    return AgentResponse(
        output=[
            ReasoningOutputItem(text="Search first."),
            call,
            TextOutputItem(text="Paris.", annotations=[]),
        ]
    )


DATA["agent_response"] = {
    "inputs": {"messages": [USER]},
    "expected_output": "Paris",
    "output": agent_response(),
}

CUSTOM = {
    "log": (
        "Q: {{log.input}}\nA: {{log.output}}\nRef: {{log.reference}} / {{log.expected_output}}\n{{criteria}}"
    ),
    "tools": "Calls:\n{{output.tools_called}}\nCriteria: {{criteria}}",
    "transcript": "Transcript:\n{{output.messages}}\n{{criteria}}",
    "indexed": (
        "First: {{input.all_messages[0].content}}\nLast role: {{input.all_messages[-1].role}}\n{{criteria}}"
    ),
    "log_messages": "{{log.messages}}\n{{criteria}}",
    "empties": "[{{input.system_instructions}}|{{output.error}}]\n{{criteria}}",
    "arguments": "{{output.tools_called[0].arguments}}\n{{output.tools_called[0].name}}\n{{criteria}}",
    "spaced": "{{ output.response }} vs {{ input.expected_output }}\n{{criteria}}",
    "bare_object": "{{input}} / {{output.response}}\n{{criteria}}",
}
CUSTOM_DATA = "static_output"  # the case the custom prompts are rendered on

POINTWISE = (
    [(name, None) for name in DATA]
    + [(CUSTOM_DATA, prompt) for prompt in CUSTOM]
    + [
        ("multi_turn", "indexed"),
        ("content_parts", "log"),
        ("tool_call_only", "transcript"),
        ("string_arguments", "arguments"),
        ("open_responses", "transcript"),
        ("open_responses", "tools"),
        ("agent_response", "transcript"),
        ("agent_response", "tools"),
        ("non_ascii", "log_messages"),
    ]
)


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The one fake model: evaluatorq's verdict object to evaluatorq, jurist's to jurist. A pairwise judge
    names whichever response holds GOOD (A when neither does: a judge with a position bias)."""
    user = body["messages"][-1]["content"]
    pairwise = "# Response A" in user
    if pairwise:
        b_text = user.split("# Response B", 1)[1]
        value: Any = "B" if "GOOD" in b_text and "GOOD" not in user.split("# Response B", 1)[0] else "A"
    else:
        value = "not good" not in user
    key = "value" if body["model"] == EVQ_MODEL else "judgment"
    return 200, completion(json.dumps({"explanation": "Checked.", key: value}))


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with chat_server(answer) as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """evaluatorq's model-catalogue fetch fails at once instead of reaching the network."""
    from evaluatorq.common import model_catalogue

    async def offline(*args: Any, **kwargs: Any) -> object:
        import httpx

        raise httpx.ConnectError("network blocked in tests")

    monkeypatch.setattr(model_catalogue, "_fetch_catalogue_payload", offline)


def client(server: ChatServer) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=server.url, api_key="test", max_retries=0)


def sent(server: ChatServer, model: str, since: int) -> list[list[tuple[str, str]]]:
    return [
        [(m["role"], m["content"]) for m in body["messages"]]
        for body in server.bodies[since:]
        if body.get("model") == model
    ]


def jurist_config(server: ChatServer, builtin: str, overrides: dict[str, Any]) -> Any:
    return load_judge_config(
        builtin,
        {
            "inference_config.engine": "OPENAI",
            "inference_config.model.model_name": JURIST_MODEL,
            "inference_config.remote_params.api_url": server.url,
            "inference_config.remote_params.api_key_env": "JURIST_PARITY_KEY",
            "inference_config.remote_params.num_workers": 1,
            **overrides,
        },
    )


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_PARITY_KEY", "test")


# ------------------------------------------------------------------------------------------- pointwise


def run_evaluatorq(server: ChatServer, case: dict[str, Any], prompt: str | None) -> Any:
    from evaluatorq import DataPoint, llm_jury

    evaluator = llm_jury(
        name="jury", criteria=CRITERIA, prompt=prompt, model=EVQ_MODEL, client=client(server)
    )
    data = DataPoint(inputs=case["inputs"], expected_output=case["expected_output"])
    return asyncio.run(evaluator["scorer"]({"data": data, "output": case["output"]}))


def run_jurist(server: ChatServer, case: dict[str, Any], prompt: str | None) -> Any:
    overrides: dict[str, Any] = {"judge_params.template_variables.criteria": CRITERIA}
    if prompt is not None:
        overrides["judge_params.prompt_template"] = prompt
    config = jurist_config(server, "jury/pointwise", overrides)
    output = case["output"]
    if hasattr(output, "model_dump"):  # a live evaluatorq object: the row holds its dump
        output = output.model_dump(mode="json", exclude_none=True)
    return Engine([config]).run([{**case, "output": output}])


@pytest.mark.parametrize(("data", "prompt"), POINTWISE, ids=[f"{d}-{p or 'default'}" for d, p in POINTWISE])
def test_pointwise_prompts_are_byte_identical(server: ChatServer, data: str, prompt: str | None) -> None:
    case = DATA[data]
    template = None if prompt is None else CUSTOM[prompt]
    start = len(server.bodies)
    result = run_evaluatorq(server, case, template)
    theirs = sent(server, EVQ_MODEL, start)
    start = len(server.bodies)
    table = run_jurist(server, case, template)
    ours = sent(server, JURIST_MODEL, start)
    assert len(theirs) == 1 and ours == theirs
    assert table["pointwise.status"][0].as_py() == "ok"
    assert table["pointwise.judgment"][0].as_py() is result.value is True


# -------------------------------------------------------------------------------------------- pairwise

SIDES: dict[str, tuple[Any, Any]] = {
    "texts": ("Paris is the capital. GOOD", "Lyon."),
    "b_better": ("Lyon.", "Paris. GOOD"),
    "non_ascii": ("À Paris. GOOD", "Près de Lyon."),
    "objects": ({"response": "Paris. GOOD", "tool_calls": [TOOL_CALL]}, {"response": "Lyon."}),
    "tool_only_side": ({"response": "", "tool_calls": [TOOL_CALL]}, "Lyon. GOOD"),
    "position_bias": ("Paris.", "Lyon."),  # neither is GOOD: the fake judge always says A
}
PAIR_PROMPTS = {
    "tools": (
        "# Criteria\n{{criteria}}\n# Q\n{{question}}\n# Response A\n{{response_a.output.response}}\n"
        "{{response_a.output.tools_called}}\n# Response B\n{{response_b.output.response}}\n"
        "{{response_b.output.messages}}\n"
    ),
}
PAIRWISE = [(name, None) for name in SIDES] + [("objects", "tools"), ("tool_only_side", "tools")]
WINNERS = {"A": "a", "B": "b", "tie": "tie", "inconclusive": "inconclusive"}


def compare_evaluatorq(server: ChatServer, a: Any, b: Any, prompt: str | None) -> Any:
    from evaluatorq import llm_jury_pairwise

    jury = llm_jury_pairwise(model=EVQ_MODEL, criteria=CRITERIA, prompt=prompt, client=client(server))
    return asyncio.run(jury.compare(question="Capital of France?", response_a=a, response_b=b))


@pytest.mark.parametrize(("sides", "prompt"), PAIRWISE, ids=[f"{s}-{p or 'default'}" for s, p in PAIRWISE])
def test_pairwise_prompts_and_winners_agree(server: ChatServer, sides: str, prompt: str | None) -> None:
    a, b = SIDES[sides]
    template = None if prompt is None else PAIR_PROMPTS[prompt]
    start = len(server.bodies)
    result = compare_evaluatorq(server, a, b, template)
    theirs = sent(server, EVQ_MODEL, start)
    overrides: dict[str, Any] = {"judge_params.template_variables.criteria": CRITERIA}
    if template is not None:
        overrides["judge_params.prompt_template"] = template
    start = len(server.bodies)
    row = {"question": "Capital of France?", "response_a": a, "response_b": b}
    table = Engine([jurist_config(server, "jury/pairwise", overrides)]).run([row])
    ours = sent(server, JURIST_MODEL, start)
    assert sorted(ours) == sorted(theirs) and len(ours) == 2  # both orders, byte for byte
    assert table["pairwise.winner"][0].as_py() == WINNERS[result.winner]


def test_a_position_inconsistent_pair_is_inconclusive_in_both(server: ChatServer) -> None:
    result = compare_evaluatorq(server, *SIDES["position_bias"], None)
    row = {"question": "Capital of France?", "response_a": "Paris.", "response_b": "Lyon."}
    config = jurist_config(server, "jury/pairwise", {"judge_params.template_variables.criteria": CRITERIA})
    table = Engine([config]).run([row])
    assert result.winner == "inconclusive"
    assert table["pairwise.winner"][0].as_py() == "inconclusive"
    assert table["pairwise.position_consistent"][0].as_py() is False


# ---------------------------------------------------------------------------- differences kept on purpose


def test_an_absent_path_is_missing_input_in_jurist_and_literal_in_evaluatorq(server: ChatServer) -> None:
    """evaluatorq sends ``{{input.city}}`` as literal text when the path is absent; jurist does not send a
    prompt it could not fill: the row is ``missing_input``, naming the path."""
    case = DATA["plain"]
    start = len(server.bodies)
    run_evaluatorq(server, case, "City: {{input.city}}\n{{criteria}}")
    assert "City: {{input.city}}" in sent(server, EVQ_MODEL, start)[0][1][1]
    table = run_jurist(server, case, "City: {{input.city}}\n{{criteria}}")
    assert table["pointwise.status"][0].as_py() == "missing_input"
    assert "input.city" in table["pointwise.error"][0].as_py()


def test_an_errored_target_is_not_judged_by_either(server: ChatServer) -> None:
    case = {**DATA["plain"], "output": {"response": "", "error": "timeout"}}
    start = len(server.bodies)
    result = run_evaluatorq(server, case, None)
    table = run_jurist(server, case, None)
    assert sent(server, EVQ_MODEL, start) == [] and sent(server, JURIST_MODEL, start) == []
    assert result.value == "inconclusive"
    assert table["pointwise.status"][0].as_py() == "target_error"


# ------------------------------------------------------------------- jurist.llm_jury in evaluatorq's runner


def test_jurist_llm_jury_runs_in_evaluatorqs_own_runner(server: ChatServer) -> None:
    """evaluatorq's ``evaluatorq()`` runner calls jurist's scorer like its own; the model is local (here the
    fake model through jurist's OpenAI backend), the prompt evaluatorq's."""
    from evaluatorq import DataPoint, job
    from evaluatorq import evaluatorq as run

    import jurist
    from jurist.backends.remote.openai import OpenAIBackend

    backend = OpenAIBackend(jurist_config(server, "jury/pointwise", {}).inference_config)
    evaluator = jurist.llm_jury(name="correct", criteria=CRITERIA, client=backend)

    @job("answer")
    async def answer_job(data: DataPoint, row: int) -> str:
        return "Paris." if row == 0 else "It is not good: Lyon."

    data = [DataPoint(inputs={"messages": [USER]}, expected_output="Paris")] * 2
    start = len(server.bodies)
    results = asyncio.run(
        run(
            "parity",
            data=data,
            jobs=[answer_job],
            evaluators=[evaluator],
            print_results=False,
            _send_results=False,
        )
    )
    scores = [r.job_results[0].evaluator_scores[0].score for r in results]
    assert [s.value for s in scores] == [True, False]
    ours = sent(server, JURIST_MODEL, start)
    assert len(ours) == 2 and "# Output\nParis.\n" in ours[0][1][1]


def test_jurist_llm_jury_pairwise_compares_like_evaluatorq(server: ChatServer) -> None:
    import jurist
    from jurist.backends.remote.openai import OpenAIBackend

    backend = OpenAIBackend(jurist_config(server, "jury/pairwise", {}).inference_config)
    jury = jurist.llm_jury_pairwise(criteria=CRITERIA, client=backend)
    for sides in ("texts", "b_better", "position_bias"):
        a, b = SIDES[sides]
        start = len(server.bodies)
        ours = asyncio.run(jury.compare(question="Capital of France?", response_a=a, response_b=b))
        our_prompts = sent(server, JURIST_MODEL, start)
        start = len(server.bodies)
        theirs = compare_evaluatorq(server, a, b, None)
        assert ours.winner == theirs.winner
        assert sorted(our_prompts) == sorted(sent(server, EVQ_MODEL, start))


def test_what_jurist_llm_jury_does_not_implement_is_named() -> None:
    import jurist

    with pytest.raises(NotImplementedError, match="preset="):
        jurist.llm_jury(name="j", criteria="c", preset="Balanced Trio")
    with pytest.raises(NotImplementedError, match="panel of 2 judges"):
        jurist.llm_jury(name="j", criteria="c", judges=["a", "b"])
    with pytest.raises(NotImplementedError, match="swap=False"):
        jurist.llm_jury_pairwise(swap=False)
    with pytest.raises(ValueError, match="criteria, prompt"):
        jurist.llm_jury(name="j")
