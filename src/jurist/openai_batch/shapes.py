"""OpenAI's batch file lines as pydantic models: what an input line holds, what an output line holds.

Input line: ``{"custom_id", "method": "POST", "url", "body"}``; output line: ``{"id", "custom_id",
"response": {"status_code", "request_id", "body"} | null, "error": {"code", "message"} | null}``. The
request bodies jurist serves are chat completions (:class:`ChatBody`) and embeddings
(:class:`EmbeddingBody`); their answers are :class:`ChatCompletion` and :class:`EmbeddingList`. Bodies
accept fields jurist does not read (OpenAI adds them over time: ``user``, ``metadata``, ``store``...); the
ones that would change the answer and that jurist cannot honour are refused by
:mod:`jurist.openai_batch.requests`, naming the field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CHAT_URL = "/v1/chat/completions"
EMBEDDINGS_URL = "/v1/embeddings"


class _Open(BaseModel):
    """A shape that keeps fields it does not name (OpenAI's bodies grow)."""

    model_config = ConfigDict(extra="allow")


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------------------- input
class InputLine(_Closed):
    """One request line of a batch input file."""

    custom_id: str = Field(min_length=1)
    method: Literal["POST"]
    url: str
    body: dict[str, Any]


class ContentPart(_Open):
    type: str
    text: str | None = None


class ChatMessage(_Open):
    role: str
    content: str | list[ContentPart] | None = None


class JsonSchemaFormat(_Open):
    name: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Closed):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


class ChatBody(_Open):
    """The body of a ``/v1/chat/completions`` request (the fields jurist reads)."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    n: int = Field(default=1, ge=1)
    frequency_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)
    presence_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)
    response_format: ResponseFormat | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    stream: bool = False
    continue_final_message: bool = False
    add_generation_prompt: bool = True


class EmbeddingBody(_Open):
    """The body of a ``/v1/embeddings`` request."""

    model: str | None = None
    input: str | list[str] = Field(min_length=1)
    encoding_format: Literal["float"] = "float"


# ------------------------------------------------------------------------------------------ output
class Usage(_Closed):
    prompt_tokens: int
    completion_tokens: int = 0
    total_tokens: int
    prompt_tokens_details: dict[str, int] | None = None


class TopLogprob(_Closed):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(_Closed):
    token: str
    logprob: float
    bytes: list[int] | None
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(_Closed):
    content: list[TokenLogprob] | None
    refusal: list[TokenLogprob] | None = None


class AssistantMessage(_Closed):
    role: Literal["assistant"]
    content: str | None
    refusal: str | None = None


class Choice(_Closed):
    index: int
    message: AssistantMessage
    logprobs: ChoiceLogprobs | None
    finish_reason: Literal["stop", "length", "content_filter", "tool_calls"]


class ChatCompletion(_Closed):
    """The body of a chat completion, as OpenAI returns it."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    system_fingerprint: str | None = None


class Embedding(_Closed):
    object: Literal["embedding"]
    index: int
    embedding: list[float]


class EmbeddingList(_Closed):
    """The body of an embeddings answer."""

    object: Literal["list"]
    data: list[Embedding]
    model: str
    usage: Usage


class Response(_Closed):
    status_code: int
    request_id: str
    body: dict[str, Any]


class LineError(_Closed):
    """OpenAI's error object: a machine-readable ``code`` and a message for people."""

    code: str
    message: str


class OutputLine(_Closed):
    """One line of a batch output file: a response, or an error."""

    id: str
    custom_id: str | None
    response: Response | None
    error: LineError | None
