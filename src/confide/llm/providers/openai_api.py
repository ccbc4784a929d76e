"""OpenAI and OpenAI-compatible chat endpoints, through the openai SDK's async client.

`openai/<model>` talks to the OpenAI API: key from the `api_key` option or
OPENAI_API_KEY (required), base URL from `base_url` or OPENAI_BASE_URL (default
https://api.openai.com/v1). `openai-api/<name>` talks to any OpenAI-compatible server
(vLLM, Ollama, llama.cpp server, OpenRouter...): base URL from `base_url` or
CONFIDE_OPENAI_API_BASE_URL (required), key from `api_key` or CONFIDE_OPENAI_API_KEY
(default "EMPTY", for keyless local servers). The OpenAI key is deliberately not used as
a fallback for other endpoints, so it is never sent to a third party by accident.

The client is built with `max_retries=0`: confide's retry wrapper is the one retry
policy. `timeout_s` (default 60) bounds each request. Response bodies are parsed and
checked here rather than trusted to the SDK's lenient parsing, so a malformed body is a
clear transient `bad_response` error. A response schema is sent as a `json_schema`
response format (non-strict, since pydantic schemas do not meet strict mode's rules);
`schema_mode="json_object"` or `"none"` serves endpoints that do not support it.
OpenAI's reasoning models (o1/o3/o4, gpt-5 except gpt-5-chat) accept only their default
temperature, so none is sent to them; OpenAI takes `max_completion_tokens`, while
compatible servers get the older, more widely supported `max_tokens`.

Keys are held in a `Secret`, and every error message is redacted, so a key never shows
up in a repr, a log or a trace even when a server echoes it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import openai
from pydantic import BaseModel, Field, ValidationError

from confide.llm.errors import ErrorKind, ModelError, ModelSpecError
from confide.llm.redact import Secret, redact, redact_url
from confide.llm.spec import ModelSpec
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage

SchemaMode = Literal["json_schema", "json_object", "none"]
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPTIONS = frozenset({"base_url", "api_key", "timeout_s", "schema_mode"})
_FIXED_TEMPERATURE_PREFIXES = ("o1", "o3", "o4", "gpt-5")
_SHOWN_BODY = 120


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Response(BaseModel):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


def fixed_temperature(spec: ModelSpec) -> bool:
    """Whether the model rejects any temperature but its default."""
    return (
        spec.provider == "openai"
        and spec.name.startswith(_FIXED_TEMPERATURE_PREFIXES)
        and not spec.name.startswith("gpt-5-chat")
    )


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _status_kind(status: int) -> ErrorKind:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status == 409 or status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth"
    return "bad_request"


def _error_message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(body)[:_SHOWN_BODY]


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        base_url: str,
        api_key: str,
        timeout_s: float = 60.0,
        schema_mode: SchemaMode = "json_schema",
    ) -> None:
        if timeout_s <= 0:
            raise ModelSpecError(f"{spec}: timeout_s must be > 0, got {timeout_s}")
        if schema_mode not in ("json_schema", "json_object", "none"):
            raise ModelSpecError(
                f"{spec}: schema_mode must be json_schema, json_object or none, got {schema_mode!r}"
            )
        self.name = str(spec)
        self.spec = spec
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.schema_mode = schema_mode
        self._api_key = Secret(api_key)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"OpenAIChatModel(name={self.name!r}, base_url={redact_url(self.base_url)!r})"

    def _client(self) -> openai.AsyncOpenAI:
        """One client per event loop (an HTTP connection pool belongs to its loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=self._api_key.reveal(),
                base_url=self.base_url,
                timeout=self.timeout_s,
                max_retries=0,
            )
            self._clients[loop] = client
        return client

    def request_params(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> dict[str, Any]:
        """The JSON body sent for a request (without the model's credentials)."""
        params: dict[str, Any] = {
            "model": self.spec.name,
            "messages": [m.model_dump(mode="json") for m in messages],
        }
        if not fixed_temperature(self.spec):
            params["temperature"] = config.temperature
        if config.max_tokens is not None:
            key = "max_completion_tokens" if self.spec.provider == "openai" else "max_tokens"
            params[key] = config.max_tokens
        if config.seed is not None:
            params["seed"] = config.seed
        if config.stop:
            params["stop"] = list(config.stop)
        if config.response_schema is not None and self.schema_mode == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": str(config.response_schema.get("title", "response"))[:64],
                    "schema": config.response_schema,
                    "strict": False,
                },
            }
        elif config.response_schema is not None and self.schema_mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params

    def _error(self, message: str, kind: ErrorKind, **extra: Any) -> ModelError:
        safe = redact(message, [self._api_key.reveal()])
        return ModelError(safe, model=self.name, kind=kind, **extra)

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        params = self.request_params(messages, config)
        start = time.perf_counter()
        try:
            raw = await self._client().chat.completions.with_raw_response.create(**params)
        except openai.APIError as exc:
            failure = self._failure(exc)
        else:
            return self._parse(raw.http_response.text, time.perf_counter() - start)
        # Raised outside the except block, so the SDK exception (which may hold an echoed
        # key in its body) is not even kept as __context__.
        raise failure

    def _failure(self, exc: openai.APIError) -> ModelError:
        """Our error for an SDK error: classified, with a redacted message."""
        if isinstance(exc, openai.APITimeoutError):
            return self._error(f"request timed out after {self.timeout_s}s", "timeout")
        if isinstance(exc, openai.APIConnectionError):
            return self._error(f"cannot connect to {self.base_url}: {exc}", "connection")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            return self._error(
                f"HTTP {status}: {_error_message(exc.body)}",
                _status_kind(status),
                status_code=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        return self._error(f"API error: {exc.message}", "bad_response")

    def _parse(self, body_text: str, latency: float) -> Completion:
        try:
            response = _Response.model_validate(json.loads(body_text))
        except json.JSONDecodeError as exc:
            problem = f"not JSON: {exc.msg}"
        except ValidationError as exc:
            problem = f"unexpected shape: {exc.error_count()} problem(s)"
        else:
            return self._completion(response, latency)
        raise self._error(
            f"malformed response body ({problem}): {body_text[:_SHOWN_BODY]!r}", "bad_response"
        )

    def _completion(self, response: _Response, latency: float) -> Completion:
        choice = response.choices[0]
        usage = response.usage or _Usage()
        refused = choice.message.content is None and choice.message.refusal is not None
        return Completion(
            model=self.name,
            text=choice.message.content or "",
            usage=Usage(
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            ),
            latency_s=latency,
            finish_reason="refusal" if refused else choice.finish_reason,
        )

    async def aclose(self) -> None:
        """Close the HTTP clients of this model."""
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.close()


def make_openai_model(spec: ModelSpec, **options: Any) -> OpenAIChatModel:
    """Build an `openai/...` or `openai-api/...` model from options and environment."""
    unknown = sorted(options.keys() - OPTIONS)
    if unknown:
        raise ModelSpecError(
            f"{spec}: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(OPTIONS))})"
        )
    if spec.provider == "openai":
        api_key = options.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            raise ModelError(
                "no API key: set OPENAI_API_KEY or pass api_key=...", model=str(spec), kind="config"
            )
        base_url = (
            options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL
        )
    else:
        base_url = options.get("base_url") or os.environ.get("CONFIDE_OPENAI_API_BASE_URL")
        if not base_url:
            raise ModelError(
                "no endpoint: set CONFIDE_OPENAI_API_BASE_URL or pass base_url=... "
                "(e.g. http://127.0.0.1:8000/v1)",
                model=str(spec),
                kind="config",
            )
        api_key = options.get("api_key") or os.environ.get("CONFIDE_OPENAI_API_KEY") or "EMPTY"
    return OpenAIChatModel(
        spec,
        base_url=str(base_url),
        api_key=str(api_key),
        timeout_s=float(options.get("timeout_s", 60.0)),
        schema_mode=options.get("schema_mode", "json_schema"),
    )
