"""Data types of the chat-model layer and the one protocol every model implements.

Everything an environment needs to talk to a model is here: the request (`ChatMessage`,
`GenerateConfig`), the reply (`Completion` with `Usage`) and `ChatModel`. Providers and
wrappers (cache, retry, limits, metering, recording) all implement `ChatModel`, so they
stack in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from confide.untrusted import scrub

Role = Literal["system", "user", "assistant", "tool"]
ToolMode = Literal["native", "text", "grammar"]
"""How a request's tools reached the model: the endpoint's function calling ("native"),
described in the prompt and parsed from JSON in the reply ("text", the fallback for
endpoints without tool support), or in the prompt with decoding constrained to a call
or a reply by a llama.cpp grammar ("grammar", `local/`)."""


def _compact(handler: SerializerFunctionWrapHandler, value: Any, *optional: str) -> Any:
    """The model's dump without the `optional` fields left empty, so a request that does
    not use a field added later (sampling settings, tools) dumps, hashes, caches and traces
    exactly as before that field existed."""
    data = handler(value)
    for key in optional:
        if key in data and not data[key]:
            del data[key]
    return data


class ToolSpec(BaseModel, frozen=True):
    """A tool offered to the model: its name, what it does, and the JSON schema of its
    arguments object (OpenAI's function-calling `function` object)."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class ToolCall(BaseModel, frozen=True):
    """One call the model made: `arguments` is the JSON text it wrote (unparsed, as
    OpenAI returns it, so a malformed call is the caller's invalid output, not a crash)."""

    id: str
    name: str
    arguments: str = "{}"


class TokenLogprob(BaseModel, frozen=True):
    """One reply token and its log probability."""

    token: str
    logprob: float


def read_logprobs(raw: Any) -> list[TokenLogprob] | None:
    """The tokens of an OpenAI-shaped `choice.logprobs` ({"content": [{"token",
    "logprob"}, ...]}); None when absent or of another shape."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return None
    return [
        TokenLogprob(token=str(t["token"]), logprob=float(t["logprob"]))
        for t in content
        if isinstance(t, dict) and "token" in t and isinstance(t.get("logprob"), int | float)
    ]


class ChatMessage(BaseModel, frozen=True):
    """One turn of a chat prompt: an assistant turn may carry the tool calls it made, and
    a "tool" turn is the result of the call `tool_call_id`."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @field_validator("content")
    @classmethod
    def _writable(cls, value: str) -> str:
        """Lone surrogates (say, from a non-UTF-8 command-line argument) become U+FFFD:
        a prompt must hash, cache and trace like any other text."""
        return scrub(value)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _compact(handler, self, "tool_calls", "tool_call_id")


class GenerateConfig(BaseModel, frozen=True):
    """Decoding parameters of one request.

    `response_schema` is a JSON schema the reply should satisfy: providers that support it
    constrain decoding to it (OpenAI `json_schema` response format, llama.cpp grammars),
    the mock `json` model answers with an instance of it, others ignore it. `max_tokens`,
    `top_p` and `reasoning_effort` None mean the provider's default; a provider without
    reasoning effort ignores it (`llm.providers.openai_api` sends it to OpenAI).
    """

    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    reasoning_effort: str | None = None
    response_schema: dict[str, Any] | None = None
    stop: tuple[str, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    """Tools the model may call instead of answering in text (tool choice "auto")."""
    logprobs: bool = False
    """Ask for each reply token's log probability where the endpoint gives them
    (OpenAI-compatible servers, `local/`); others answer without."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _compact(handler, self, "top_p", "reasoning_effort", "tools", "logprobs")


class Usage(BaseModel):
    """Tokens spent by one call and its price; `cost_usd` None means the price is unknown
    (never silently zero).

    One normalized shape for every provider, so a price applies the same way to all:
    `prompt_tokens` counts every input token, of which `cached_prompt_tokens` were read
    from the provider's prompt cache and `cache_write_tokens` were written to it (the
    rest are uncached input); `completion_tokens` counts every output token, of which
    `reasoning_tokens` were hidden reasoning. A provider whose API counts these apart
    (Anthropic's `input_tokens` excludes cache reads and writes, Gemini's candidate count
    excludes thoughts) is summed into this shape by its adapter.
    """

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cached_prompt_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Zero cache and reasoning counts are left out, so traces of providers that
        report none keep their earlier bytes."""
        return _compact(
            handler, self, "cached_prompt_tokens", "cache_write_tokens", "reasoning_tokens"
        )


class ReplyCut(BaseModel, frozen=True):
    """What a reply over the size limit was before it was cut (`llm.recorder.bounded`):
    its size in characters (text, tool-call names and arguments) and the SHA-256 of that
    content, so the stored head can be told apart from the whole."""

    chars: int = Field(ge=0)
    sha256: str


class Completion(BaseModel):
    """A model reply. `cached` is True when it came from the on-disk cache rather than a
    provider call; `finish_reason` is "stop", "length" (cut off by max_tokens) or a
    provider-specific value.

    A lone surrogate in `text` (a server escaping half of a UTF-16 pair, `"\\ud800"`) is
    replaced by U+FFFD here, where every provider's reply enters confide, so the trace and
    cache writers can always encode a reply; `parse_reply` treats U+FFFD as invalid
    output."""

    model: str
    text: str

    usage: Usage = Field(default_factory=Usage)
    latency_s: float = Field(default=0.0, ge=0.0)
    cached: bool = False
    finish_reason: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_mode: ToolMode | None = None
    """Set when the request offered tools: how they reached the model (see `ToolMode`);
    "text" records the fallback to JSON in text in the trace."""
    logprobs: list[TokenLogprob] | None = None
    """The reply's tokens with their log probabilities, when asked for and given."""
    cut: ReplyCut | None = None
    """Set when the reply was over the size limit: `text` then holds only its head, and
    the reply is invalid output (`llm.structured`)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _compact(handler, self, "tool_calls", "tool_mode", "logprobs", "cut")

    @field_validator("text")
    @classmethod
    def _writable(cls, value: str) -> str:
        return scrub(value)


@runtime_checkable
class ChatModel(Protocol):
    """An async chat model named `provider/model`."""

    name: str

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        """Answer `messages`; raise `ModelError` when no reply could be obtained."""
        ...
