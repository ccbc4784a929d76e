"""`anthropic/<model>`: the Anthropic Messages API through Anthropic's own SDK (extra
`anthropic`).

Key from the `api_key` option or ANTHROPIC_API_KEY (required), base URL from `base_url`
or ANTHROPIC_BASE_URL (default Anthropic's). As for `openai/`, the client makes one
attempt per call (`max_retries=0`: confide's retry wrapper is the one retry policy), the
body is read and checked here, errors are classified by `http_common` (429 a rate limit
with its `retry-after`, 529 "overloaded" and other 5xx transient, a 400 invalid request
sent once) and every message is redacted of the key.

The request, from confide's provider-neutral messages:
- leading system messages become the `system` parameter; a later system message (rare)
  becomes a user turn, as the API has no system role inside `messages`;
- an assistant turn's tool calls become `tool_use` blocks, tool results `tool_result`
  blocks of the next user turn (consecutive turns of one role are merged, as the API
  wants the results of one turn's calls together);
- prompt caching: `cache_control` breakpoints on the stable prefix, the end of the system
  prompt (which also covers the tool definitions before it) and the last block of the
  conversation, so the next call of the same seat, which appends to this conversation,
  reads all of it from the cache (option `prompt_cache`, default on);
- structured output is tool-forced JSON (the API's long-standing way to a schema): the
  schema becomes the input schema of one tool, `confide_reply`, that the model is made to
  call, and its input is the reply's text; a schema that is not an object is wrapped as
  `{"value": ...}` and unwrapped;
- extended thinking: `reasoning_effort` maps to a thinking budget (below), added on top of
  the reply's `max_tokens` so the reply keeps its budget. With thinking on, the API does
  not accept a forced tool choice, so the reply tool is offered with tool choice "auto"
  (a reply in text instead goes to the structured-output repair loop). Thinking blocks
  that precede tool calls are sent back with those calls on the next turn, as the API
  requires, from a per-model memory keyed by the call id;
- sampling: stop sequences as given. The Messages API as Anthropic's SDK 2.x defines it
  takes no temperature, top_p or seed (and gives no log probabilities), so those
  settings are not sent: an Anthropic model samples at its own defaults, and a run that
  sets them records them in its trace config but they do not reach the model.

Usage is normalized (`confide.llm.types.Usage`): the API's `input_tokens` excludes cache
reads and writes, so prompt tokens are input + cache read + cache creation; thinking
tokens are `output_tokens_details.thinking_tokens` where reported (a subset of output).
"""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic
from pydantic import BaseModel, Field, ValidationError

from confide.llm.errors import ErrorKind, ModelError, ModelSpecError
from confide.llm.providers.http_common import (
    SHOWN_BODY,
    PerLoop,
    error_message,
    parse_retry_after,
    redacted_error,
    register_secrets,
    status_kind,
)
from confide.llm.types import ChatMessage, Completion, GenerateConfig, ToolCall, Usage
from confide.redaction import Secret, redact_url

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_TOKENS = 4096
"""The reply budget when neither the call nor the `max_tokens` option sets one (the API
requires one)."""
THINKING_BUDGET: Mapping[str, int | None] = {
    "none": None,
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}
"""`reasoning_effort` -> extended-thinking budget in tokens (None: thinking off). 1024 is
the API's minimum budget; each step up roughly quadruples, then doubles, the budget, the
spacing of OpenAI's effort levels. Other values are refused before any request."""
REPLY_TOOL = "confide_reply"
_CACHE = {"type": "ephemeral"}
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
}
_ARGUMENTS = ("model", "max_tokens", "messages")
"""Body fields passed to the SDK as arguments; the rest go as `extra_body`, so the body
is exactly `request_params` whichever fields an SDK version types."""
_REMEMBERED = 4096
"""Thinking blocks kept for calls whose results may still be sent back."""


class _OutputDetails(BaseModel):
    thinking_tokens: int | None = None


class _Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    output_tokens_details: _OutputDetails | None = None

    def normalized(self) -> Usage:
        """This usage in the provider-neutral shape (input counts every input token)."""
        read = self.cache_read_input_tokens or 0
        written = self.cache_creation_input_tokens or 0
        details = self.output_tokens_details or _OutputDetails()
        return Usage(
            prompt_tokens=self.input_tokens + read + written,
            cached_prompt_tokens=read,
            cache_write_tokens=written,
            completion_tokens=self.output_tokens,
            reasoning_tokens=min(details.thinking_tokens or 0, self.output_tokens),
        )


class _Response(BaseModel):
    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: _Usage = Field(default_factory=_Usage)


def thinking_budget(effort: str | None, spec: str) -> int | None:
    """The thinking budget for `effort` (None: no thinking), or one clear error."""
    if effort is None:
        return None
    if effort not in THINKING_BUDGET:
        raise ModelSpecError(
            f"{spec}: reasoning_effort {effort!r} has no thinking budget "
            f"(one of {', '.join(THINKING_BUDGET)})"
        )
    return THINKING_BUDGET[effort]


def _object_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A tool input schema (always an object) for `schema`, and whether it was wrapped."""
    if schema.get("type") == "object":
        return schema, False
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"value": inner},
        "required": ["value"],
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, True


class AnthropicChatModel:
    """A chat model behind the Anthropic Messages API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_tokens: int | None = None,
        prompt_cache: bool = True,
    ) -> None:
        self.name = f"anthropic/{model}"
        self.model = model
        if timeout_s <= 0:
            raise ModelSpecError(f"{self.name}: timeout_s must be > 0, got {timeout_s}")
        if max_tokens is not None and max_tokens < 1:
            raise ModelSpecError(f"{self.name}: max_tokens must be >= 1, got {max_tokens}")
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.default_max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        self.prompt_cache = prompt_cache
        self._api_key = Secret(api_key)
        self._thinking: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._clients = PerLoop(self._new_client)

    def __repr__(self) -> str:
        where = redact_url(self.base_url) if self.base_url else "default"
        return f"AnthropicChatModel(name={self.name!r}, base_url={where!r})"

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self._api_key.reveal(), base_url=self.base_url, timeout=self.timeout_s,
            max_retries=0,
        )

    def _client(self) -> anthropic.AsyncAnthropic:
        """The running event loop's client."""
        return self._clients.get()

    # -- the request ---------------------------------------------------------------

    def request_params(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> dict[str, Any]:
        """The JSON body sent for a request (without the model's credentials)."""
        budget = thinking_budget(config.reasoning_effort, self.name)
        leading = 0
        while leading < len(messages) and messages[leading].role == "system":
            leading += 1
        system = "\n\n".join(m.content for m in messages[:leading] if m.content)
        reply_tokens = config.max_tokens or self.default_max_tokens
        params: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(messages[leading:]),
            "max_tokens": reply_tokens + (budget or 0),
        }
        if system:
            block: dict[str, Any] = {"type": "text", "text": system}
            if self.prompt_cache:
                block["cache_control"] = _CACHE
            params["system"] = [block]
        if self.prompt_cache and params["messages"]:
            last = params["messages"][-1]["content"][-1]
            last["cache_control"] = _CACHE
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in config.tools
        ]
        if config.response_schema is not None:
            schema, _ = _object_schema(config.response_schema)
            tools.append(
                {
                    "name": REPLY_TOOL,
                    "description": "Give your reply: call this with the reply as its input.",
                    "input_schema": schema,
                }
            )
        if tools:
            params["tools"] = tools
            forced = config.response_schema is not None and budget is None
            if forced and len(tools) == 1:
                params["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
            else:
                params["tool_choice"] = {"type": "any" if forced else "auto"}
        if budget is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if config.stop:
            params["stop_sequences"] = list(config.stop)
        return params

    def _messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """The `messages` field: one entry per run of same-role turns."""
        result: list[dict[str, Any]] = []
        for message in messages:
            role = "assistant" if message.role == "assistant" else "user"
            blocks = self._blocks(message)
            if result and result[-1]["role"] == role:
                result[-1]["content"].extend(blocks)
            else:
                result.append({"role": role, "content": blocks})
        return result

    def _blocks(self, message: ChatMessage) -> list[dict[str, Any]]:
        if message.role == "tool":
            return [
                {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id or "",
                    "content": message.content or "(empty)",
                }
            ]
        blocks: list[dict[str, Any]] = []
        if message.tool_calls:
            blocks += self._thinking.get(message.tool_calls[0].id, [])
        if message.content or not message.tool_calls:
            blocks.append({"type": "text", "text": message.content or "(empty)"})
        for call in message.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call)}
            )
        return blocks

    # -- sending and reading ---------------------------------------------------------

    def _error(self, message: str, kind: ErrorKind, **extra: Any) -> ModelError:
        return redacted_error(self.name, self._api_key.reveal(), message, kind, **extra)

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        params = self.request_params(messages, config)
        start = time.perf_counter()
        try:
            raw = await self._client().messages.with_raw_response.create(
                model=params["model"],
                max_tokens=params["max_tokens"],
                messages=params["messages"],
                extra_body={k: v for k, v in params.items() if k not in _ARGUMENTS},
            )
        except anthropic.APIError as exc:
            failure = self._failure(exc)
        else:
            return self._parse(raw.http_response.text, time.perf_counter() - start, config)
        raise failure  # outside the except block: the SDK error is not kept as context

    def _failure(self, exc: anthropic.APIError) -> ModelError:
        """Our error for an SDK error: classified, with a redacted message."""
        if isinstance(exc, anthropic.APITimeoutError):
            return self._error(f"request timed out after {self.timeout_s}s", "timeout")
        if isinstance(exc, anthropic.APIConnectionError):
            return self._error(f"cannot connect to {self.base_url}: {exc}", "connection")
        if isinstance(exc, anthropic.APIStatusError):
            status, message = exc.status_code, error_message(exc.body)
            return self._error(
                f"HTTP {status}: {message}",
                status_kind(status, message, False, False),
                status_code=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        return self._error(f"API error: {exc}", "bad_response")

    def _parse(self, body_text: str, latency: float, config: GenerateConfig) -> Completion:
        try:
            response = _Response.model_validate(json.loads(body_text))
        except json.JSONDecodeError as exc:
            problem = f"not JSON: {exc.msg}"
        except ValidationError as exc:
            problem = f"unexpected shape: {exc.error_count()} problem(s)"
        else:
            return self._completion(response, latency, config)
        raise self._error(
            f"malformed response body ({problem}): {body_text[:SHOWN_BODY]!r}", "bad_response"
        )

    def _completion(
        self, response: _Response, latency: float, config: GenerateConfig
    ) -> Completion:
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[dict[str, Any]] = []
        for block in response.content:
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind in ("thinking", "redacted_thinking"):
                thinking.append(block)
            elif kind == "tool_use" and block.get("name") == REPLY_TOOL:
                texts = [self._reply_text(block.get("input"), config)]
            elif kind == "tool_use":
                calls.append(
                    ToolCall(
                        id=str(block.get("id") or f"call-{len(calls)}"),
                        name=str(block.get("name")),
                        arguments=json.dumps(block.get("input") or {}),
                    )
                )
        if calls and thinking:
            self._remember(calls[0].id, thinking)
        finish = _FINISH.get(response.stop_reason or "", response.stop_reason)
        if finish == "tool_calls" and not calls:
            finish = "stop"  # the reply tool: a reply, not a call
        return Completion(
            model=self.name,
            text="".join(texts),
            usage=response.usage.normalized(),
            latency_s=latency,
            finish_reason=finish,
            tool_calls=calls,
            tool_mode="native" if config.tools else None,
        )

    def _reply_text(self, data: Any, config: GenerateConfig) -> str:
        """The reply tool's input as the reply's JSON text (unwrapped if it was wrapped)."""
        schema = config.response_schema or {}
        if _object_schema(schema)[1] and isinstance(data, dict):
            data = data.get("value")
        return json.dumps(data, ensure_ascii=False)

    def _remember(self, call_id: str, thinking: list[dict[str, Any]]) -> None:
        self._thinking[call_id] = thinking
        while len(self._thinking) > _REMEMBERED:
            self._thinking.popitem(last=False)

    async def aclose(self) -> None:
        """Close the HTTP clients of this model."""
        for client in self._clients.take_all():
            await client.close()


def _input(call: ToolCall) -> Any:
    """A call's arguments as the JSON object the API wants (text that is not an object,
    say a malformed call replayed back, is kept under `arguments`)."""
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        return {"arguments": call.arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def make_anthropic(model: str, **options: Any) -> AnthropicChatModel:
    """Build `anthropic/<model>` from options and environment."""
    spec = f"anthropic/{model}"
    api_key = options.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
    if not api_key:
        raise ModelError(
            "no API key: set ANTHROPIC_API_KEY or pass api_key=...", model=spec, kind="config"
        )
    base_url = options.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL")
    register_secrets(spec, str(api_key), str(base_url or ""))
    return AnthropicChatModel(
        model,
        base_url=None if base_url is None else str(base_url),
        api_key=str(api_key),
        timeout_s=float(options.get("timeout_s", DEFAULT_TIMEOUT_S)),
        max_tokens=None if options.get("max_tokens") is None else int(options["max_tokens"]),
        prompt_cache=bool(options.get("prompt_cache", True)),
    )
