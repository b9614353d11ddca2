"""A conversation as the judge sees it: messages read from any chat list, split at the last user turn, and
rendered as the three values of a conversation judge's prompt.

* :func:`read_messages` reads a chat list (a list of ``{"role", "content"}`` mappings, the same as JSON
  text, or ``{"messages": [...]}``) into :class:`Turn` objects, or raises :class:`ConversationError` saying
  what is wrong (the message's position and the missing or mistyped key).
* :func:`judge_values` splits the turns: the **reply** being judged is every message after the last user
  turn (the assistant's segments, each its own message); the **context** is everything up to that user
  turn. In a bot-first conversation (no user turn) the reply starts at the first assistant message. It
  returns the row a conversation judge renders: ``{"context": ..., "reply": ..., "criterion": ...}``;
  ``reply`` is None when there is no assistant text after the last user turn (nothing to judge yet: the
  engine then reports the row as ``missing_input``, naming the field ``reply``).

Rendering: one line per message, ``Role: text`` (continuation lines indented by two spaces), so segments
of one streamed reply stay visibly separate, exactly as they were received.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NO_CONTEXT = "(none: the assistant speaks first)"
ROLE_NAMES = {
    "user": "User",
    "assistant": "Assistant",
    "system": "System",
    "developer": "System",
    "tool": "Tool",
}


class ConversationError(ValueError):
    """A value is not a conversation (the message says why, naming the message's position)."""


@dataclass(frozen=True)
class Turn:
    """One message of a conversation: ``role`` (lowercase) and its text."""

    role: str
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def _text(content: Any, where: str) -> str:
    """A message's text: a string, null (no text: an assistant's tool call), or OpenAI's content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        texts = []
        for part in content:
            text = part.get("text") if isinstance(part, Mapping) else part if isinstance(part, str) else None
            if not isinstance(text, str):
                raise ConversationError(f"{where} has a content part that is not text")
            texts.append(text)
        return "".join(texts)
    raise ConversationError(f"{where} has content of type {type(content).__name__}, not text")


def read_messages(value: Any) -> tuple[Turn, ...]:
    """The turns of a chat list (see the module's docstring); :class:`ConversationError` if it is not one."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ConversationError("is text, not a list of messages") from None
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if value is None:
        raise ConversationError("is missing or null")
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise ConversationError(f"is a {type(value).__name__}, not a list of messages")
    if not value:
        raise ConversationError("is an empty list of messages")
    turns = []
    for index, message in enumerate(value):
        where = f"message {index}"
        if not isinstance(message, Mapping):
            raise ConversationError(
                f"{where} is a {type(message).__name__}, not an object with role and content"
            )
        role = message.get("role")
        if not isinstance(role, str) or not role.strip():
            raise ConversationError(f"{where} has no role")
        turns.append(Turn(role.strip().lower(), _text(message.get("content"), f"{where} ({role})")))
    return tuple(turns)


def split_reply(turns: Sequence[Turn]) -> tuple[tuple[Turn, ...], tuple[Turn, ...]]:
    """(context, reply): the reply is every message after the last user turn (without a user turn: from the
    first assistant message on); the context is the messages before it."""
    users = [i for i, turn in enumerate(turns) if turn.role == "user"]
    if users:
        start = users[-1] + 1
    else:
        start = next((i for i, turn in enumerate(turns) if turn.role == "assistant"), len(turns))
    return tuple(turns[:start]), tuple(turns[start:])


def render_turns(turns: Sequence[Turn]) -> str:
    """One line per message with text, ``Role: text``; continuation lines indented by two spaces."""
    lines = []
    for turn in turns:
        if not turn.content.strip():
            continue
        name = ROLE_NAMES.get(turn.role, turn.role.title())
        lines.append(f"{name}: " + turn.content.strip().replace("\n", "\n  "))
    return "\n".join(lines)


def judge_values(turns: Sequence[Turn], criterion: str) -> dict[str, str | None]:
    """The row a conversation judge renders: ``context``, ``reply`` (None: no assistant text after the last
    user turn) and ``criterion``."""
    context, reply = split_reply(turns)
    has_reply = any(turn.role == "assistant" and turn.content.strip() for turn in reply)
    return {
        "context": render_turns(context) or NO_CONTEXT,
        "reply": render_turns(reply) if has_reply else None,
        "criterion": criterion,
    }
