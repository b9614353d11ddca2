"""Chat prompts for local engines: a tokenizer's chat template over jurist's messages, and token helpers.

:class:`ChatRenderer` applies a Hugging Face tokenizer's chat template with a generation prompt and the
model config's ``chat_template_kwargs`` (Qwen3's ``enable_thinking``, for one). A template that rejects the
``system`` role (Gemma's, for one) gets the system text folded into the first user turn; the renderer
notices this once and folds from then on. :meth:`ChatRenderer.prompt` puts the start of the assistant's
turn after the generation prompt, without writing a think marker twice where the template's generation
prompt already opens the think block (DeepSeek-R1's distills, Qwen3's Thinking-2507 models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.config.reasoning import THINK_STARTS
from jurist.records import Message


class ChatRenderer:
    """Renders chat messages to prompt text with a tokenizer's chat template; ``template_kwargs`` go to the
    template as its variables (``chat_template_kwargs``)."""

    def __init__(self, tokenizer: Any, template_kwargs: Mapping[str, Any] | None = None) -> None:
        self._tokenizer = tokenizer
        self._kwargs = dict(template_kwargs or {})
        self._fold_system = False

    def text(self, messages: Sequence[Message], *, generation_prompt: bool = True) -> str:
        """The prompt text of ``messages``, ending with the assistant turn's opening (``generation_prompt``;
        off for a conversation that ends with the assistant's answer, as a reward model scores it)."""
        dicts = [m.as_dict() for m in messages]
        if self._fold_system:
            dicts = fold_system(dicts)
        try:
            text = self._tokenizer.apply_chat_template(
                dicts, add_generation_prompt=generation_prompt, tokenize=False, **self._kwargs
            )
        except Exception:
            if self._fold_system or not dicts or dicts[0]["role"] != "system":
                raise
            self._fold_system = True  # e.g. Gemma's template: "System role not supported"
            text = self._tokenizer.apply_chat_template(
                fold_system(dicts), add_generation_prompt=generation_prompt, tokenize=False, **self._kwargs
            )
        return str(text)

    def prompt(self, messages: Sequence[Message], start: str = "") -> str:
        """The prompt text of ``messages`` with a generation prompt, then ``start``: what the assistant's
        turn is given to begin with (a thinking judge's reasoning, an answer prefix); see :func:`join`."""
        return join(self.text(messages), start)


def join(chat: str, start: str) -> str:
    """``chat`` (a prompt ending with the assistant turn's opening) followed by ``start``, but for a think
    marker (:data:`~jurist.config.reasoning.THINK_STARTS`) that ``start`` begins with and the template's
    generation prompt already ends with: that one is not written twice, and the template's own whitespace
    after it stays."""
    for marker in THINK_STARTS:
        if start.startswith(marker) and chat.rstrip().endswith(marker):
            return chat + start[len(marker) :]
    return chat + start


def fold_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Merge a leading system message into the first user message (for templates without a system role)."""
    if not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], [dict(m) for m in messages[1:]]
    for message in rest:
        if message["role"] == "user":
            message["content"] = f"{system}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def clean_text(text: str) -> str:
    """Text safe for Arrow and JSON: lone surrogates (from split multi-byte tokens) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of token sequences."""
    if not sequences:
        return 0
    shortest = min(len(s) for s in sequences)
    for position in range(shortest):
        token = sequences[0][position]
        if any(s[position] != token for s in sequences[1:]):
            return position
    return shortest
