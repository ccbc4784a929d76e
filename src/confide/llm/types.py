"""Data types of the chat-model layer and the one protocol every model implements.

Everything an environment needs to talk to a model is here: the request (`ChatMessage`,
`GenerateConfig`), the reply (`Completion` with `Usage`) and `ChatModel`. Providers and
wrappers (cache, retry, limits, metering, recording) all implement `ChatModel`, so they
stack in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from confide.untrusted import scrub

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel, frozen=True):
    """One turn of a chat prompt."""

    role: Role
    content: str

    @field_validator("content")
    @classmethod
    def _writable(cls, value: str) -> str:
        """Lone surrogates (say, from a non-UTF-8 command-line argument) become U+FFFD:
        a prompt must hash, cache and trace like any other text."""
        return scrub(value)


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


class Usage(BaseModel):
    """Tokens spent by one call and its price; `cost_usd` None means the price is unknown
    (never silently zero)."""

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None


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
