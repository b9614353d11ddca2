"""The engine kept full: a streaming backend answers out of order, across chunks, and the results come back
in input order, equal to a chunked run's; a request that breaks a batch fails alone."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from jurist import Engine, ScriptedBackend
from jurist.backends.base import RequestFeed
from jurist.backends.scripted import ScriptedStreamingBackend
from jurist.judges.base import Step
from jurist.judges.judge import Judge
from jurist.judges.outputs import JudgeOutput
from jurist.records import Answer, Completion, GenerationRequest

JUDGE = {"name": "j", "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True}}
PAIR = {
    "name": "p",
    "judge_params": {"prompt_template": "{question}\nA: {response_a}\nB: {response_b}"},
    "pairwise_judge_params": {},
}


def answer(request: GenerationRequest) -> str:
    text = request.messages[-1].content
    return json.dumps({"explanation": text[-12:], "judgment": "Yes" if len(text) % 2 else "No"})


def pair_answer(request: GenerationRequest) -> str:
    return json.dumps(
        {"judgment": "A" if "first" in request.messages[-1].content.split("A: ")[1][:8] else "B"}
    )


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"question": "q" * (i % 7 + 1) + str(i), "response_a": "first", "response_b": "second"}
        for i in range(n)
    ]


@pytest.mark.parametrize(("size", "window", "open_chunks"), [(1, 3, 1), (7, 5, 2), (10, 64, 4), (50, 2, 3)])
def test_streaming_equals_the_chunked_run(size: int, window: int, open_chunks: int) -> None:
    chunked = Engine(
        [JUDGE, PAIR],
        ScriptedBackend(lambda r: answer(r) if "Q:" in r.messages[-1].content else pair_answer(r)),
        chunk_size=size,
    ).run(rows(43))
    streaming_backend = ScriptedStreamingBackend(
        lambda r: answer(r) if "Q:" in r.messages[-1].content else pair_answer(r),
        window=window,
        stream_seed=size,
    )
    streamed = Engine([JUDGE, PAIR], streaming_backend, chunk_size=size, max_open_chunks=open_chunks).run(
        rows(43)
    )
    assert streamed.equals(chunked)
    assert streamed["row_id"].to_pylist() == [str(i) for i in range(43)]
    assert max(streaming_backend.calls) <= window


def test_the_feed_keeps_the_engine_full_across_chunks() -> None:
    backend = ScriptedStreamingBackend(answer, window=8)
    Engine(JUDGE, backend, chunk_size=5, max_open_chunks=4).run(rows(30))
    # calls of 8 requests span chunk boundaries: the engine never waits for a chunk to finish
    assert backend.calls[:3] == [8, 8, 8]


class Poisoned(ScriptedStreamingBackend):
    """Raises for any batch that holds a poisoned question (as vLLM did for one bad request)."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        if any("poison" in r.messages[-1].content for r in requests):
            raise RuntimeError("CPU Generator does not use offset")
        return super().generate(requests)


@pytest.mark.parametrize("streaming", [True, False])
def test_one_bad_request_fails_alone(streaming: bool) -> None:
    data = rows(20)
    data[7]["question"] = "poison"
    data[13]["question"] = "poison again"
    backend = Poisoned(answer, window=16) if streaming else ScriptedBackend(answer)
    if not streaming:
        plain = backend

        def generate(requests: Sequence[GenerationRequest]) -> list[Completion]:
            if any("poison" in r.messages[-1].content for r in requests):
                raise RuntimeError("CPU Generator does not use offset")
            return ScriptedBackend.generate(plain, requests)

        plain.generate = generate  # type: ignore[method-assign]
    table = Engine(JUDGE, backend, chunk_size=8).run(data)
    statuses = table["j.status"].to_pylist()
    assert [i for i, s in enumerate(statuses) if s != "ok"] == [7, 13]
    assert "CPU Generator does not use offset" in table["j.error"][7].as_py()
    assert table.num_rows == 20


@pytest.mark.parametrize(("n", "open_chunks"), [(30, 4), (40, 2), (8, 1)])
def test_a_failure_after_the_last_chunk_opened_still_finishes(n: int, open_chunks: int) -> None:
    # the stream fails once every chunk is open; the retried stream then only finds the input's end
    data = rows(n)
    data[-2]["question"] = "poison"
    table = Engine(JUDGE, Poisoned(answer, window=64), chunk_size=8, max_open_chunks=open_chunks).run(data)
    statuses = table["j.status"].to_pylist()
    assert [i for i, s in enumerate(statuses) if s != "ok"] == [n - 2]
    assert table.num_rows == n


def test_steps_that_need_a_second_round_come_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = Judge.from_config(JUDGE)
    kind = judge.kind
    first_start = kind.start

    def start(row: Mapping[str, Any], kinds: Sequence[Any]) -> Step:
        step = first_start(row, kinds)

        def again(answers: Sequence[Answer]) -> JudgeOutput | Step:
            if int(row["question"][-1]) % 3 == 0:  # some rows need a second call
                return Step(step.requests, step.finish)
            return step.finish(answers)

        return Step(step.requests, again)

    monkeypatch.setattr(kind, "start", start)
    backend = ScriptedStreamingBackend(answer, window=4)
    table = Engine(judge, backend, chunk_size=3).run(rows(20))
    assert table["j.status"].to_pylist() == ["ok"] * 20
    second_round = sum(1 for i in range(20) if i % 10 % 3 == 0)
    assert len(backend.requests) == 20 + second_round


class Broken:
    """A stream that breaks after its first answers: the engine answers the rest in batches."""

    model_id = "broken"
    constraint_kinds = ("regex",)

    def __init__(self) -> None:
        self.streams = 0
        self.sent: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        self.sent += requests
        return [Completion(answer(r)) for r in requests]

    def stream(self, feed: RequestFeed) -> Iterator[tuple[int, Completion]]:
        self.streams += 1
        taken = feed.take(5)
        yield taken[0][0], Completion(answer(taken[0][1]))
        raise RuntimeError("engine died")

    def close(self) -> None:
        pass


def test_a_stream_that_fails_is_finished_in_batches() -> None:
    backend = Broken()
    table = Engine(JUDGE, backend, chunk_size=4).run(rows(12))  # type: ignore[arg-type]
    assert table["j.status"].to_pylist() == ["ok"] * 12
    assert backend.streams >= 2  # the stream was started again after each failure
