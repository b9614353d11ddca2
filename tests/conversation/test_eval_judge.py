"""EvalJudge with pipecat's documented behaviour, on a scripted backend that records what it was sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import answer, by_criterion

from jurist import BackendError, ConfigError, EvalJudge, InferenceConfig, JudgeVerdict, ScriptedBackend
from jurist.conversation.cache import CacheStats, VerdictCache
from jurist.conversation.transcript import NO_CONTEXT

CAPABILITIES = "describes the bot's capabilities"


def ask(judge: EvalJudge, criterion: str) -> JudgeVerdict:
    return asyncio.run(judge.evaluate(criterion))


def prompt_of(backend: ScriptedBackend, index: int = -1) -> str:
    return backend.requests[index].messages[-1].content


def test_the_seeds_example_passes(tmp_path: Path) -> None:
    backend = ScriptedBackend([answer("yes", "It lists what the bot can do.")])
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can answer questions, set reminders, and look things up.")
    verdict = ask(judge, CAPABILITIES)
    assert verdict == JudgeVerdict(
        "yes", "It lists what the bot can do.", answer("yes", "It lists what the bot can do.")
    )
    assert verdict.passed
    system = backend.requests[0].messages[0]
    assert system.role == "system" and '"continue"' in system.content


def test_each_segment_is_its_own_assistant_message_and_the_judge_sees_them_all() -> None:
    backend = ScriptedBackend([answer("yes")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("What can you help me with?")
    for segment in ("I can answer questions,", "set reminders,", "and look things up."):
        judge.add_assistant_message(segment)
    assert judge.messages == [
        {"role": "user", "content": "What can you help me with?"},
        {"role": "assistant", "content": "I can answer questions,"},
        {"role": "assistant", "content": "set reminders,"},
        {"role": "assistant", "content": "and look things up."},
    ]
    ask(judge, CAPABILITIES)
    assert (
        "[REPLY BEING JUDGED]\nAssistant: I can answer questions,\nAssistant: set reminders,\n"
        "Assistant: and look things up.\n" in prompt_of(backend)
    )


def test_none_and_empty_text_are_ignored() -> None:
    judge = EvalJudge(ScriptedBackend([]), cache=None)
    judge.add_user_message("Hi")
    for ignored in (None, "", "   "):
        judge.add_user_message(ignored)
        judge.add_assistant_message(ignored)
    assert judge.messages == [{"role": "user", "content": "Hi"}]
    with pytest.raises(TypeError, match="not a int"):
        judge.add_assistant_message(3)  # type: ignore[arg-type]


def test_a_bot_first_turn_is_judged_without_a_user_message() -> None:
    backend = ScriptedBackend([answer("yes")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message(None)  # the bot speaks first
    judge.add_assistant_message("Hello! I'm your travel assistant.")
    assert ask(judge, "greets the caller").passed
    assert prompt_of(backend).startswith(f"[CONVERSATION SO FAR]\n{NO_CONTEXT}\n\n[REPLY BEING JUDGED]\n")


def test_earlier_turns_are_the_context_of_a_terse_reply() -> None:
    backend = ScriptedBackend([answer("yes")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("What is two plus two?")
    judge.add_assistant_message("That's for")
    ask(judge, "gives the correct answer")
    prompt = prompt_of(backend)
    assert "[CONVERSATION SO FAR]\nUser: What is two plus two?\n" in prompt
    assert "[REPLY BEING JUDGED]\nAssistant: That's for\n" in prompt
    assert prompt.endswith("[CRITERION]\ngives the correct answer\n")


def test_only_the_reply_after_the_last_user_turn_is_judged() -> None:
    backend = ScriptedBackend([answer("no")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("What is two plus two?")
    judge.add_assistant_message("Four.")
    judge.add_user_message("And three plus three?")
    judge.add_assistant_message("Seven.")
    ask(judge, "gives the correct answer")
    context, reply = prompt_of(backend).split("[REPLY BEING JUDGED]")
    assert "Assistant: Four." in context and "And three plus three?" in context
    assert "Assistant: Seven." in reply and "Four." not in reply


@pytest.mark.parametrize(("said", "passed"), [("yes", True), ("no", False), ("continue", False)])
def test_passed_only_on_a_definite_yes(said: str, passed: bool) -> None:
    judge = EvalJudge(ScriptedBackend([answer(said, "one sentence")]), cache=None)
    judge.add_user_message("Book me a table.")
    judge.add_assistant_message("Sure, let me check.")
    verdict = ask(judge, "confirms the booking")
    assert (verdict.verdict, verdict.reason, verdict.status, verdict.passed) == (
        said,
        "one sentence",
        "ok",
        passed,
    )
    assert verdict.ok


def test_continue_for_an_interim_reply_then_yes_once_more_text_arrives(tmp_path: Path) -> None:
    backend = ScriptedBackend(
        lambda r: answer("yes" if "booked for 8 pm" in r.messages[-1].content else "continue")
    )
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("Book me a table for two tonight.")
    judge.add_assistant_message("Sure, let me check what's available.")
    first = ask(judge, "confirms a booking time")
    assert first.verdict == "continue" and not first.passed
    judge.add_assistant_message("You're booked for 8 pm.")
    assert ask(judge, "confirms a booking time").passed  # a new conversation: judged again
    assert backend.calls == [1, 1]


def test_the_judges_answer_is_never_written_back() -> None:
    backend = ScriptedBackend([answer("yes", "FIRST ANSWER"), answer("no", "second")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    before = judge.messages
    ask(judge, CAPABILITIES)
    assert judge.messages == before
    ask(judge, "is polite")
    assert all("FIRST ANSWER" not in m.content for m in backend.requests[1].messages)


def test_a_second_evaluation_is_a_counted_cache_hit_and_no_model_call(tmp_path: Path) -> None:
    backend = ScriptedBackend([answer("yes")])
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    first = ask(judge, CAPABILITIES)
    assert judge.cache_stats == CacheStats(hits=0, misses=1, stored=1)
    again = ask(judge, CAPABILITIES)
    assert again == first
    assert backend.calls == [1]  # the scripted answers would have run out on a second call
    assert judge.cache_stats == CacheStats(hits=1, misses=1, stored=1)
    assert judge.model_calls == 1


def test_the_cache_persists_across_two_judges(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.sqlite3"
    for number in range(2):
        backend = ScriptedBackend([answer("yes", "from the first judge")] if number == 0 else [])
        judge = EvalJudge(backend, cache=path)
        judge.add_user_message("What can you help me with?")
        judge.add_assistant_message("I can set reminders.")
        verdict = ask(judge, CAPABILITIES)
        assert verdict.reason == "from the first judge"
        assert backend.calls == ([1] if number == 0 else [])
    assert judge.cache_stats == CacheStats(hits=1, misses=0, stored=0)


def test_the_cache_is_scoped_by_criterion_conversation_and_model(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "v.sqlite3")
    backend = by_criterion({CAPABILITIES: "yes", "is rude": "no"})
    judge = EvalJudge(backend, cache=cache)
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    assert ask(judge, CAPABILITIES).verdict == "yes"
    assert ask(judge, "is rude").verdict == "no"  # another criterion: a miss
    judge.add_assistant_message("And look things up.")
    assert ask(judge, CAPABILITIES).verdict == "yes"  # another conversation: a miss
    assert backend.calls == [1, 1, 1]
    other_model = by_criterion({CAPABILITIES: "no"}, model_id="another-model")
    second = EvalJudge(other_model, cache=cache)
    second.add_user_message("What can you help me with?")
    second.add_assistant_message("I can set reminders.")
    assert ask(second, CAPABILITIES).verdict == "no"  # another model: never the first model's verdict
    shorter = EvalJudge(by_criterion({CAPABILITIES: "no"}), cache=cache, max_tokens=64)
    shorter.add_user_message("What can you help me with?")
    shorter.add_assistant_message("I can set reminders.")
    assert ask(shorter, CAPABILITIES).verdict == "no"  # other generation settings: a miss too
    assert cache.stats.hits == 0 and cache.stats.misses == 5


def test_an_unreadable_answer_is_asked_again_once_and_not_cached(tmp_path: Path) -> None:
    backend = ScriptedBackend(["I think it is fine", answer("yes")])
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    verdict = ask(judge, CAPABILITIES)
    assert verdict.passed and verdict.failure is None  # the second answer was read
    assert backend.calls == [1, 1]
    assert judge.cache is not None and judge.cache_stats.stored == 1


def test_a_judgment_that_fails_twice_is_a_no_with_its_failure_and_is_not_cached(tmp_path: Path) -> None:
    backend = ScriptedBackend(["I think it is fine", "still no JSON", answer("yes")])
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    verdict = ask(judge, CAPABILITIES)
    assert (verdict.verdict, verdict.status, verdict.raw_response) == ("no", "parse_error", "still no JSON")
    assert not verdict.passed and not verdict.ok
    assert verdict.failure and verdict.reason == f"judge call failed: {verdict.failure}"
    assert backend.calls == [1, 1]
    assert ask(judge, CAPABILITIES).passed  # asked again, not served from the cache
    assert backend.calls == [1, 1, 1]


def test_a_conversation_without_a_reply_is_still_judged_by_the_model() -> None:
    backend = ScriptedBackend([answer("continue"), answer("no")])
    judge = EvalJudge(backend, cache=None)
    assert ask(judge, CAPABILITIES).verdict == "continue"
    judge.add_user_message("What can you help me with?")
    assert ask(judge, CAPABILITIES).verdict == "no"
    assert backend.calls == [1, 1]
    assert "[REPLY BEING JUDGED]\n(no reply yet)\n" in prompt_of(backend)


def test_close_can_be_awaited_and_used_as_an_async_context() -> None:
    async def run() -> None:
        judge = EvalJudge(ScriptedBackend([]), cache=None)
        await judge.close()
        async with EvalJudge(ScriptedBackend([]), cache=None) as other:
            assert other.messages == []

    asyncio.run(run())
    EvalJudge(ScriptedBackend([]), cache=None).close()  # and without await


def test_a_tool_call_is_kept_but_not_judged_as_the_reply() -> None:
    backend = ScriptedBackend([answer("yes")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("Book a table at six.")
    judge.add_tool_call('book({"time": "6pm"})')
    judge.add_assistant_message("Booked for six.")
    assert judge.messages[1] == {"role": "tool", "content": 'book({"time": "6pm"})'}
    assert ask(judge, "confirms the time").passed
    assert "book(" not in prompt_of(backend)


def test_a_function_call_is_judged_by_name_and_arguments() -> None:
    backend = ScriptedBackend([answer("yes"), answer("no")])
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("Book a table at six.")
    verdict = asyncio.run(judge.evaluate_call("book", {"time": "6pm", "people": 2}, "books for six"))
    assert verdict.passed
    assert '[REPLY BEING JUDGED]\nFunction call: book({"people": 2, "time": "6pm"})\n' in prompt_of(backend)
    assert "User: Book a table at six." in prompt_of(backend)
    assert asyncio.run(judge.evaluate_call("book", None, "books for six")).verdict == "no"


def test_judging_a_whole_run_names_the_eval_kind() -> None:
    judge = EvalJudge(ScriptedBackend([]), cache=None)
    with pytest.raises(NotImplementedError, match=r"evaluate_run .*'run' eval kind"):
        asyncio.run(judge.evaluate_run({"polite": "is polite"}, "books a table"))


def test_several_criteria_go_to_the_model_in_one_call(tmp_path: Path) -> None:
    backend = by_criterion({"is polite": "yes", "is short": "no"})
    judge = EvalJudge(backend, cache=tmp_path / "v.sqlite3")
    judge.add_user_message("Hi")
    judge.add_assistant_message("Hello, how may I help you today?")
    verdicts = asyncio.run(judge.evaluate_all(["is polite", "is short", "is polite"]))
    assert [v.verdict for v in verdicts] == ["yes", "no", "yes"]
    assert backend.calls == [3]
    assert judge.evaluate_sync("is short").verdict == "no"  # cached
    assert backend.calls == [3]


def test_concurrent_evaluations_on_one_judge_are_serialized() -> None:
    backend = by_criterion({f"criterion {i}": "yes" if i % 2 else "no" for i in range(6)})
    judge = EvalJudge(backend, cache=None)
    judge.add_user_message("Hi")
    judge.add_assistant_message("Hello.")

    async def all_at_once() -> list[JudgeVerdict]:
        return list(await asyncio.gather(*(judge.evaluate(f"criterion {i}") for i in range(6))))

    verdicts = asyncio.run(all_at_once())
    assert [v.verdict for v in verdicts] == ["no", "yes", "no", "yes", "no", "yes"]
    assert sorted(backend.calls) == [1] * 6


def test_max_tokens_caps_the_answer() -> None:
    backend = ScriptedBackend([answer("yes")], cycle=True)
    judge = EvalJudge(backend, cache=None)
    unbounded = EvalJudge(backend, cache=None, max_tokens=None)
    for each in (judge, unbounded):
        each.add_user_message("Hi")
        each.add_assistant_message("Hello.")
        ask(each, "greets")
    assert backend.requests[0].max_tokens == 200
    assert backend.requests[1].max_tokens == unbounded.judge.spec.max_tokens() > 200
    regex = backend.requests[0].constraint.regex if backend.requests[0].constraint else ""
    assert '"continue"|"yes"|"no"' in regex
    with pytest.raises(ValueError, match="max_tokens"):
        EvalJudge(backend, max_tokens=0)


def test_the_default_cache_is_created_on_first_use_under_the_cache_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path / "cache"))
    judge = EvalJudge(ScriptedBackend([answer("yes")]))
    assert judge.cache is not None and judge.cache.path == tmp_path / "cache" / "verdicts.sqlite3"
    assert not (tmp_path / "cache").exists()
    judge.add_user_message("Hi")
    judge.add_assistant_message("Hello.")
    ask(judge, "greets")
    assert len(VerdictCache(tmp_path / "cache" / "verdicts.sqlite3")) == 1


def test_a_config_makes_a_backend_only_when_the_first_verdict_is_asked() -> None:
    config = InferenceConfig.model_validate(
        {
            "engine": "REMOTE_VLLM",
            "model": {"model_name": "judge-model"},
            "remote_params": {"api_url": "http://127.0.0.1:9/v1", "timeout_s": 2},
        }
    )
    judge = EvalJudge(config, cache=None)  # nothing listens there, and nothing connects yet
    assert judge.model_id == "judge-model"
    judge.add_user_message("Hi")
    judge.add_assistant_message("Hello.")
    with pytest.raises(BackendError, match="cannot reach the server"):
        ask(judge, "greets")


def test_a_judge_config_that_is_not_a_conversation_judge_is_refused() -> None:
    with pytest.raises(ConfigError, match="also reads request, response"):
        EvalJudge(ScriptedBackend([]), judge="generic/safety", cache=None)
