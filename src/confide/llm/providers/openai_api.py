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
clear transient `bad_response` error. Errors are classified (issue 20): 4xx bodies, and
5xx bodies that are plainly request validation (llama.cpp's server answers a pydantic
validation failure with HTTP 500), are `validation` errors and never retried; a refusal
that names the response format is a `capability` error. A response schema is sent in the
strongest structured-output mode the endpoint accepts, learned once per model instance
(one per spec per run) or forced with the `structured_output` option; see
`confide.llm.structured_output`. OpenAI itself is known to take `json_schema`.
OpenAI's reasoning models (o1/o3/o4, gpt-5 except gpt-5-chat) accept only their default
temperature and top_p while they reason, so neither is sent to them unless the request's
`reasoning_effort` is "none" (incognita.md section 5 runs its simulators so, at
temperature 0); `reasoning_effort` is sent as such to OpenAI and to compatible servers
(which may ignore it). OpenAI takes `max_completion_tokens`, while compatible servers get
the older, more widely supported `max_tokens`.

Keys are held in a `Secret` and registered with `confide.redaction`, and every error
message is redacted, so a key never shows up in a repr, a log or a trace even when a
server echoes it. A key too short to redact safely is not redacted, with a warning.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import openai
from pydantic import BaseModel, Field, ValidationError

from confide.llm.errors import ErrorKind, ModelError, ModelSpecError
from confide.llm.spec import ModelSpec
from confide.llm.structured_output import (
    MODES,
    PROBE_CONFIG,
    PROBE_MESSAGES,
    StructuredOutput,
    about_response_format,
    response_format,
    schema_in_prompt,
)
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage
from confide.redaction import MIN_SECRET_CHARS, Secret, redact, redact_url, register_secret

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPTIONS = frozenset({"base_url", "api_key", "timeout_s", "structured_output", "max_tokens"})
_VALIDATION = re.compile(
    r"(?i)validation error|input should be|field required|extra inputs are not permitted"
    r"|\(\s*'body'|unprocessable|invalid request|not supported|unsupported|unrecognized"
)
_log = logging.getLogger("confide")
_warned: set[str] = set()
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


def _status_kind(status: int, message: str, with_format: bool) -> ErrorKind:
    """The kind of an HTTP error: 5xx are transient unless the body is plainly a request
    validation failure, which no retry heals."""
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status in (401, 403):
        return "auth"
    if status == 409 or (status >= 500 and not _VALIDATION.search(message)):
        return "server_error"
    return "capability" if with_format and about_response_format(message) else "bad_request"


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
        structured_output: StructuredOutput | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ModelSpecError(f"{spec}: max_tokens must be >= 1, got {max_tokens}")
        if timeout_s <= 0:
            raise ModelSpecError(f"{spec}: timeout_s must be > 0, got {timeout_s}")
        if structured_output is not None and structured_output not in MODES:
            raise ModelSpecError(
                f"{spec}: option structured_output must be one of {', '.join(MODES)}, "
                f"got {structured_output!r}"
            )
        self.name = str(spec)
        self.spec = spec
        self.base_url = base_url
        self.timeout_s = timeout_s
        # the model option `max_tokens` caps replies whose caller sets no budget (a small
        # local model can otherwise fill its whole context inside one JSON string)
        self.default_max_tokens = max_tokens
        self.forced: StructuredOutput | None = structured_output
        known: StructuredOutput | None = "json_schema" if spec.provider == "openai" else None
        self._learned = known
        self._api_key = Secret(api_key)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
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

    @property
    def structured_output(self) -> StructuredOutput | None:
        """The mode a response schema is sent in: forced, learned, or None (not yet known)."""
        return self.forced or self._learned

    def request_params(
        self,
        messages: Sequence[ChatMessage],
        config: GenerateConfig,
        mode: StructuredOutput = "json_schema",
    ) -> dict[str, Any]:
        """The JSON body sent for a request in structured-output `mode` (without the
        model's credentials)."""
        schema = config.response_schema
        if schema is not None and mode == "text":
            messages = schema_in_prompt(messages, schema)
        params: dict[str, Any] = {
            "model": self.spec.name,
            "messages": [m.model_dump(mode="json") for m in messages],
        }
        if not fixed_temperature(self.spec) or config.reasoning_effort == "none":
            params["temperature"] = config.temperature
            if config.top_p is not None:
                params["top_p"] = config.top_p
        if config.reasoning_effort is not None:
            params["reasoning_effort"] = config.reasoning_effort
        budget = config.max_tokens if config.max_tokens is not None else self.default_max_tokens
        if budget is not None:
            key = "max_completion_tokens" if self.spec.provider == "openai" else "max_tokens"
            params[key] = budget
        if config.seed is not None:
            params["seed"] = config.seed
        if config.stop:
            params["stop"] = list(config.stop)
        if schema is not None and (fmt := response_format(mode, schema)) is not None:
            params["response_format"] = fmt
        return params

    def _error(self, message: str, kind: ErrorKind, **extra: Any) -> ModelError:
        safe = redact(message, [self._api_key.reveal()])
        return ModelError(safe, model=self.name, kind=kind, **extra)

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        return self._locks.setdefault(loop, asyncio.Lock())

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        if config.response_schema is None or self.forced is not None:
            return await self._send(self.request_params(messages, config, self.forced or "text"))
        if self._learned is not None:
            return await self._stepping_down(messages, config)
        async with self._lock():  # concurrent first calls: one negotiation, not one each
            return await self._stepping_down(messages, config)

    async def _stepping_down(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> Completion:
        """Send in the learned mode (the strongest if none yet); on a capability error,
        learn the next weaker mode and send again."""
        while True:
            mode = self._learned or MODES[0]
            try:
                completion = await self._send(self.request_params(messages, config, mode))
            except ModelError as exc:
                if exc.kind != "capability" or mode == MODES[-1]:
                    raise
                self._learned = MODES[MODES.index(mode) + 1]
                continue
            self._learned = mode
            return completion

    async def negotiate(self) -> StructuredOutput:
        """The structured-output mode, learned now with one small request if needed (one
        for all concurrent callers). The probe is not metered: it is no model output."""
        if self.structured_output is None:
            async with self._lock():
                if self.structured_output is None:
                    await self._stepping_down(PROBE_MESSAGES, PROBE_CONFIG)
        mode = self.structured_output
        assert mode is not None  # a successful schema call always settles it
        return mode

    async def _send(self, params: dict[str, Any]) -> Completion:
        start = time.perf_counter()
        try:
            raw = await self._client().chat.completions.with_raw_response.create(**params)
        except openai.APIError as exc:
            failure = self._failure(exc, "response_format" in params)
        else:
            return self._parse(raw.http_response.text, time.perf_counter() - start)
        # Raised outside the except block, so the SDK exception (which may hold an echoed
        # key in its body) is not even kept as __context__.
        raise failure

    def _failure(self, exc: openai.APIError, with_format: bool) -> ModelError:
        """Our error for an SDK error: classified, with a redacted message."""
        if isinstance(exc, openai.APITimeoutError):
            return self._error(f"request timed out after {self.timeout_s}s", "timeout")
        if isinstance(exc, openai.APIConnectionError):
            return self._error(f"cannot connect to {self.base_url}: {exc}", "connection")
        if isinstance(exc, openai.APIStatusError):
            status, message = exc.status_code, _error_message(exc.body)
            return self._error(
                f"HTTP {status}: {message}",
                _status_kind(status, message, with_format),
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
    _register_secrets(spec, str(api_key), str(base_url))
    return OpenAIChatModel(
        spec,
        base_url=str(base_url),
        api_key=str(api_key),
        timeout_s=float(options.get("timeout_s", 60.0)),
        structured_output=options.get("structured_output"),
        max_tokens=None if options.get("max_tokens") is None else int(options["max_tokens"]),
    )


def _register_secrets(spec: ModelSpec, api_key: str, base_url: str) -> None:
    """Register the key and any URL password for redaction; warn once (per key) when one
    is too short to redact without rewriting ordinary text. The keyless default "EMPTY"
    is no secret."""
    password = urlsplit(base_url).password
    for what, value in (("API key", api_key), ("base URL password", password)):
        if value is None or value == "EMPTY" or register_secret(value):
            continue
        if value not in _warned:
            _warned.add(value)
            _log.warning(
                "%s: the %s is %d character(s) long; keys shorter than %d characters are not "
                "redacted from traces and errors (redacting would rewrite ordinary text)",
                spec,
                what,
                len(value),
                MIN_SECRET_CHARS,
            )
