"""Reading conversations and splitting them into the context and the reply being judged."""

from __future__ import annotations

from typing import Any

import pytest

from jurist.conversation.transcript import (
    NO_CONTEXT,
    ConversationError,
    Turn,
    judge_values,
    read_messages,
    split_reply,
)


def test_a_chat_list_is_read_in_any_of_its_usual_shapes() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "Assistant", "content": "hello"}]
    expected = (Turn("user", "hi"), Turn("assistant", "hello"))
    assert read_messages(plain) == expected
    assert (
        read_messages('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
        == expected
    )
    assert read_messages({"messages": plain}) == expected
    parts = [{"role": "user", "content": [{"type": "text", "text": "h"}, {"type": "text", "text": "i"}]}]
    assert read_messages(parts) == (Turn("user", "hi"),)
    tool_call = [{"role": "user", "content": "x"}, {"role": "assistant", "content": None}]
    assert read_messages(tool_call)[1] == Turn("assistant", "")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "is missing or null"),
        ("hello there", "is text, not a list of messages"),
        (42, "is a int, not a list of messages"),
        ([], "is an empty list of messages"),
        (["hi"], "message 0 is a str, not an object with role and content"),
        ([{"content": "hi"}], "message 0 has no role"),
        (
            [{"role": "user", "content": "a"}, {"role": "user", "content": 3}],
            "message 1 (user) has content of",
        ),
        ([{"role": "user", "content": [{"type": "image_url"}]}], "message 0 (user) has a content part"),
    ],
)
def test_what_is_not_a_conversation_is_named(value: Any, problem: str) -> None:
    with pytest.raises(ConversationError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        read_messages(value)


def test_the_reply_is_every_message_after_the_last_user_turn() -> None:
    turns = (
        Turn("system", "be brief"),
        Turn("user", "What is two plus two?"),
        Turn("assistant", "Four."),
        Turn("user", "And three plus three?"),
        Turn("assistant", "That's"),
        Turn("assistant", "six."),
    )
    context, reply = split_reply(turns)
    assert context == turns[:4]
    assert reply == turns[4:]
    values = judge_values(turns, "answers correctly")
    assert values == {
        "context": (
            "System: be brief\nUser: What is two plus two?\nAssistant: Four.\nUser: And three plus three?"
        ),
        "reply": "Assistant: That's\nAssistant: six.",
        "criterion": "answers correctly",
    }


def test_a_bot_first_conversation_is_all_reply_after_its_system_prompt() -> None:
    turns = (Turn("system", "greet the caller"), Turn("assistant", "Hello, how can I help?"))
    values = judge_values(turns, "greets")
    assert values["context"] == "System: greet the caller"
    assert values["reply"] == "Assistant: Hello, how can I help?"
    assert judge_values(turns[1:], "greets")["context"] == NO_CONTEXT


def test_no_assistant_text_after_the_last_user_turn_is_no_reply() -> None:
    assert judge_values((Turn("user", "hi"),), "greets")["reply"] is None
    waiting = (Turn("user", "hi"), Turn("assistant", "hello"), Turn("user", "bye"), Turn("assistant", "  "))
    assert judge_values(waiting, "greets")["reply"] is None


def test_multi_line_messages_stay_inside_their_turn() -> None:
    values = judge_values((Turn("user", "list two"), Turn("assistant", "1. a\n2. b")), "lists")
    assert values["reply"] == "Assistant: 1. a\n  2. b"
