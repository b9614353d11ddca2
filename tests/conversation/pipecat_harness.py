"""pipecat's own harness driving judges, for whichever pipecat-ai release is importable (1.7 or 1.14).

Run as a script (``python pipecat_harness.py``), it prints one JSON object: per scenario, the harness's
outcome (``pass``, or ``fail: <reason>``). The harness is pipecat's: 1.7's ``EvalSession`` matching an
``llm_response`` expectation with ``eval:``, 1.14's ``ExpectationMatcher`` (and its function-call path).
The bot's reply arrives as events on the harness's own queue; the judge is jurist's ``EvalJudge`` on a
scripted backend, or pipecat's ``EvalJudge`` on a jurist backend through ``JuristLLMService``.

nltk's downloader is blocked before pipecat is imported (pipecat 1.7 asks it for data on import).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
from typing import Any

try:
    import nltk
except ImportError:  # pipecat 1.14 does not use nltk
    pass
else:
    nltk.download = lambda *args, **kwargs: False  # no network in tests

from jurist import EvalJudge, ScriptedBackend
from jurist.conversation.pipecat import JuristLLMService

VERSION = importlib.metadata.version("pipecat-ai")
MODERN = not VERSION.startswith("1.7.")
CRITERION = "describes the bot's capabilities"
QUESTION = "What can you help me with?"


def answer(verdict: str) -> str:
    return json.dumps({"explanation": f"the judge says {verdict}", "judgment": verdict})


# scenario -> (the reply's segments, the scripted answers of jurist's judge)
JURIST_SCENARIOS: dict[str, tuple[list[str], list[str]]] = {
    "passing": (["I can answer questions and set reminders."], [answer("yes")]),
    "failing": (["I like sunny weather."], [answer("no")]),
    "continue_then_pass": (["Let me check.", "I can answer questions."], [answer("continue"), answer("yes")]),
    "failed_judgment": (["I can answer questions."], ["no JSON here", "still none"]),
    "failed_once_then_yes": (["I can answer questions."], ["no JSON here", answer("yes")]),
}


async def run_expectation(
    judge: Any, segments: list[str], *, event: str = "llm_response", **extra: Any
) -> str:
    """One ``eval:`` expectation through the release's own matching code; ``pass`` or ``fail: reason``."""
    if MODERN:
        from pipecat.evals.events import EvalEventStream
        from pipecat.evals.matcher import ExpectationMatcher
        from pipecat.evals.results import EvalTrace
        from pipecat.evals.script import EvalExpectation, EvalFunctionCall

        trace = EvalTrace()
        trace.start()
        stream = EvalEventStream(bot_audio=False, trace=trace)
        matcher = ExpectationMatcher(stream=stream, judge=judge, trace=trace)
        matcher.reset_turn()
        if event == "function_call":
            expectation = EvalExpectation(
                event=event, eval=CRITERION, calls=[EvalFunctionCall(name=extra["name"])]
            )
            await stream.append({"type": "function_call", "name": extra["name"], "args": extra["args"]})
        else:
            expectation = EvalExpectation(event=event, eval=CRITERION)
            for text in segments:
                await stream.append({"type": event, "text": text})
        failure = await matcher.match(expectation, time.monotonic(), 3000, 0, 0)
    else:
        from pipecat.evals.harness import EvalSession
        from pipecat.evals.scenario import EvalExpectation, EvalScenario, EvalTurn

        expectation = EvalExpectation(event=event, eval=CRITERION)
        scenario = EvalScenario(name="jurist", turns=[EvalTurn(user=QUESTION, expect=[expectation])])
        session = EvalSession(scenario, "ws://unused", judge=judge)
        for text in segments:
            await session._queue.put({"type": event, "text": text})
        failure = await session._match_and_verify(expectation, time.monotonic(), 3000, 0, 0)
    return "pass" if failure is None else f"fail: {failure.reason}"


async def jurist_scenarios() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (segments, answers) in JURIST_SCENARIOS.items():
        backend = ScriptedBackend(answers)
        judge = EvalJudge(backend, cache=None)
        judge.add_user_message(QUESTION)
        outcome = await run_expectation(judge, segments)
        await judge.close()  # pipecat 1.14's session awaits it
        out[name] = {"outcome": outcome, "model_calls": len(backend.calls)}
    if MODERN:
        for name, verdict in (("call_passing", "yes"), ("call_failing", "no"), ("call_failed", None)):
            script = [answer(verdict)] if verdict else ["garbage", "garbage"]
            judge = EvalJudge(ScriptedBackend(script), cache=None)
            judge.add_user_message("Book a table at six.")
            outcome = await run_expectation(
                judge, [], event="function_call", name="book", args={"time": "6pm"}
            )
            out[name] = {"outcome": outcome}
    return out


def classifier_answer(choice: str) -> str:
    others = [o for o in ("yes", "no", "continue") if o != choice]
    probabilities = {choice: 0.9, others[0]: 0.05, others[1]: 0.05}
    return json.dumps({"verdict": {"choice": choice, "probabilities": probabilities}})


async def pipecat_judge_scenarios() -> dict[str, Any]:
    """pipecat's own EvalJudge, its model a jurist backend (a scripted one here)."""
    from pipecat.evals.judge import EvalJudge as PipecatJudge

    out: dict[str, Any] = {}
    for name, verdict in (("own_judge_passing", "yes"), ("own_judge_failing", "no")):
        if MODERN:
            from pipecat.classifiers.llm.classifier import LLMClassifier

            backend = ScriptedBackend([classifier_answer(verdict)])
            judge = PipecatJudge(LLMClassifier(llm=JuristLLMService(backend)))  # type: ignore[arg-type]
        else:
            backend = ScriptedBackend([json.dumps({"verdict": verdict, "reason": "scripted"})])
            judge = PipecatJudge(JuristLLMService(backend))  # type: ignore[arg-type]
        judge.add_user_message(QUESTION)
        outcome = await run_expectation(judge, ["I can answer questions."])
        if MODERN:
            await judge.close()
        sent = backend.requests[0].messages if backend.requests else ()
        out[name] = {
            "outcome": outcome,
            "system": sent[0].content[:60] if sent else "",
            "asked": [m.role for m in sent],
        }
    return out


async def main() -> None:
    results = {"version": VERSION, **await jurist_scenarios(), **await pipecat_judge_scenarios()}
    print(json.dumps(results))


if __name__ == "__main__":
    from loguru import logger

    logger.remove()  # pipecat logs through loguru to stderr; the JSON on stdout is the result
    logger.add(sys.stderr, level="WARNING")
    asyncio.run(main())
