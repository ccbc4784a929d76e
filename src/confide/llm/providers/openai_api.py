"""OpenAI and OpenAI-compatible chat endpoints, through the openai SDK's async client.

`openai/<model>` talks to the OpenAI API: key from the `api_key` option or
OPENAI_API_KEY (required), base URL from `base_url` or OPENAI_BASE_URL (default
https://api.openai.com/v1). `openai-api/<name>` talks to any OpenAI-compatible server
(vLLM, Ollama, llama.cpp server, OpenRouter...): base URL from `base_url` or
CONFIDE_OPENAI_API_BASE_URL (required), key from `api_key` or CONFIDE_OPENAI_API_KEY
(default "EMPTY", for keyless local servers). The OpenAI key is deliberately not used as
a fallback for other endpoints, so it is never sent to a third party by accident.

The client is built with `max_retries=0`: confide's retry wrapper is the one retry
policy. `timeout_s` (default 600, the SDK's own) bounds each request: a self-hosted server
on a CPU can take minutes for one long prompt, and a single-slot server (llama.cpp) goes on
computing a request whose client timed out, so a short timeout re-sends the work behind
itself and every retry times out too. Response bodies are parsed and
checked here rather than trusted to the SDK's lenient parsing, so a malformed body is a
clear transient `bad_response` error. Errors are classified: 4xx bodies, and
5xx bodies that are plainly request validation (llama.cpp's server answers a pydantic
validation failure with HTTP 500), are `validation` errors and never retried; a refusal
that names the response format is a `capability` error. A response schema is sent in the
strongest structured-output mode the endpoint accepts, learned once per model instance
(one per spec per run) or forced with the `structured_output` option; see
`confide.llm.structured_output`. OpenAI itself is known to take `json_schema`.
Tools (`config.tools`) go as OpenAI function definitions with tool choice "auto" where the
endpoint has function calling (OpenAI itself; others are probed once per model instance
with a request asking for a call, or forced with the `tool_calls` option, "native" or
"text"); elsewhere they are described in the prompt and the reply's JSON read back as a
call (`confide.llm.tools`), and each completion records which in `tool_mode`. Asked-for
`logprobs` are requested and recorded; an endpoint that refuses them is asked again
without, once, and never again.
OpenAI's reasoning models (o1/o3/o4, gpt-5 except gpt-5-chat) accept only their default
temperature and top_p while they reason, so neither is sent to them unless the request's
`reasoning_effort` is "none" (the Incognita paper, section 5 runs its simulators so, at
temperature 0); `reasoning_effort` is sent as such to OpenAI and to compatible servers
(which may ignore it). OpenAI takes `max_completion_tokens`, while compatible servers get
the older, more widely supported `max_tokens`.

Keys are held in a `Secret` and registered with `confide.redaction`, and every error
message is redacted, so a key never shows up in a repr, a log or a trace even when a
server echoes it. A key too short to redact safely is not redacted, with a warning.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from collections.abc import Sequence
from typing import Any

import openai
from pydantic import BaseModel, Field, ValidationError

from confide.llm.errors import ErrorKind, ModelError, ModelSpecError
from confide.llm.presets import get_preset
from confide.llm.providers.http_common import (
    SHOWN_BODY,
    PerLoop,
    error_message,
    parse_retry_after,
    redacted_error,
    register_secrets,
    status_kind,
)
from confide.llm.spec import ModelSpec
from confide.llm.structured_output import (
    MODES,
    PROBE_CONFIG,
    PROBE_MESSAGES,
    StructuredOutput,
    response_format,
    schema_in_prompt,
)
from confide.llm.tools import (
    PROBE_TOOL,
    TOOL_PROBE_MESSAGES,
    openai_message,
    openai_tool_calls,
    openai_tools,
    text_call_schema,
    tools_in_prompt,
    with_text_calls,
)
from confide.llm.types import (
    ChatMessage,
    Completion,
    GenerateConfig,
    ToolMode,
    Usage,
    read_logprobs,
)
from confide.redaction import Secret, redact_url

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOOL_MODES: tuple[ToolMode, ...] = ("native", "text")
DEFAULT_TIMEOUT_S = 600.0
"""Seconds a request may take (the openai SDK's default), see the module docstring."""
_FIXED_TEMPERATURE_PREFIXES = ("o1", "o3", "o4", "gpt-5")


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None
    logprobs: dict[str, Any] | None = None


class _PromptDetails(BaseModel):
    cached_tokens: int | None = None


class _CompletionDetails(BaseModel):
    reasoning_tokens: int | None = None


class _Usage(BaseModel):
    """OpenAI's usage object; llama.cpp's server and vLLM send the same fields where they
    count them, and null details are read as zero."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None

    def normalized(self) -> Usage:
        """This usage in the provider-neutral shape."""
        prompt = self.prompt_tokens_details or _PromptDetails()
        completion = self.completion_tokens_details or _CompletionDetails()
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached_prompt_tokens=prompt.cached_tokens or 0,
            reasoning_tokens=completion.reasoning_tokens or 0,
        )


class _Timings(BaseModel):
    """llama.cpp's server adds `timings` to each reply; `cache_n` counts the prompt tokens
    it took from its prompt cache (reported where `prompt_tokens_details` is not)."""

    cache_n: int | None = None


class _Response(BaseModel):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None
    timings: _Timings | None = None

    def normalized_usage(self) -> Usage:
        """The reply's usage, with llama.cpp's cache count where the usage has none."""
        usage = (self.usage or _Usage()).normalized()
        cache_n = self.timings.cache_n if self.timings is not None else None
        if usage.cached_prompt_tokens == 0 and cache_n:
            return usage.model_copy(
                update={"cached_prompt_tokens": min(cache_n, usage.prompt_tokens)}
            )
        return usage


def fixed_temperature(spec: ModelSpec) -> bool:
    """Whether the model rejects any temperature but its default."""
    return (
        spec.provider == "openai"
        and spec.name.startswith(_FIXED_TEMPERATURE_PREFIXES)
        and not spec.name.startswith("gpt-5-chat")
    )


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        base_url: str,
        api_key: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        structured_output: StructuredOutput | None = None,
        max_tokens: int | None = None,
        tool_calls: ToolMode | None = None,
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
        if tool_calls is not None and tool_calls not in TOOL_MODES:
            raise ModelSpecError(
                f"{spec}: option tool_calls must be one of {', '.join(TOOL_MODES)}, "
                f"got {tool_calls!r}"
            )
        self.name = str(spec)
        self.spec = spec
        # OpenAI itself has function calling; other endpoints are probed once
        self.tool_mode: ToolMode | None = tool_calls or (
            "native" if spec.provider == "openai" else None
        )
        self.base_url = base_url
        self.timeout_s = timeout_s
        # the model option `max_tokens` caps replies whose caller sets no budget (a small
        # local model can otherwise fill its whole context inside one JSON string)
        self.default_max_tokens = max_tokens
        self.forced: StructuredOutput | None = structured_output
        known: StructuredOutput | None = "json_schema" if spec.provider == "openai" else None
        self._learned = known
        self.logprobs_ok = True
        """False once the endpoint refused `logprobs` (e.g. reasoning models): later
        requests go without, as a measurement extra must not fail a call."""
        self._api_key = Secret(api_key)
        self._clients = PerLoop(self._new_client)
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"OpenAIChatModel(name={self.name!r}, base_url={redact_url(self.base_url)!r})"

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self._api_key.reveal(), base_url=self.base_url, timeout=self.timeout_s,
            max_retries=0,
        )

    def _client(self) -> openai.AsyncOpenAI:
        """The running event loop's client."""
        return self._clients.get()

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
            "messages": [openai_message(m) for m in messages],
        }
        if config.tools:
            params["tools"] = openai_tools(config.tools)
            params["tool_choice"] = "auto"
        if config.logprobs and self.logprobs_ok:
            params["logprobs"] = True
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
        return redacted_error(self.name, self._api_key.reveal(), message, kind, **extra)

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        return self._locks.setdefault(loop, asyncio.Lock())

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        if not config.tools:
            return await self._generate(messages, config)
        if await self._tool_mode() == "native":
            completion = await self._generate(messages, config)
            return completion.model_copy(update={"tool_mode": "native"})
        text_config = config.model_copy(update={
            "tools": (),
            "response_schema": None if config.response_schema is None
            else text_call_schema(config.tools, config.response_schema),
        })
        completion = await self._generate(tools_in_prompt(messages, config.tools), text_config)
        return with_text_calls(completion, config.tools)

    async def _tool_mode(self) -> ToolMode:
        """Native function calling or the text fallback: forced, known, or learned once
        per model instance from one probe asking for a call (an endpoint that refuses
        the tool list, or ignores it, gets the fallback)."""
        if self.tool_mode is None:
            async with self._lock():
                if self.tool_mode is None:
                    self.tool_mode = await self._probe_tools()
        return self.tool_mode

    async def _probe_tools(self) -> ToolMode:
        config = GenerateConfig(max_tokens=64, tools=(PROBE_TOOL,))
        try:
            reply = await self._send(self.request_params(TOOL_PROBE_MESSAGES, config, "text"))
        except ModelError as exc:
            if exc.kind in ("capability", "bad_request"):
                return "text"
            raise
        return "native" if reply.tool_calls else "text"

    async def _generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
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
        try:
            return await self._send_once(params)
        except ModelError as exc:
            refused = exc.kind in ("bad_request", "capability") and "logprob" in str(exc).lower()
            if "logprobs" not in params or not refused:
                raise
        self.logprobs_ok = False
        return await self._send_once({k: v for k, v in params.items() if k != "logprobs"})

    async def _send_once(self, params: dict[str, Any]) -> Completion:
        start = time.perf_counter()
        try:
            # the body goes as `extra_body`, which the SDK sends as is: its own recursive
            # transform of typed arguments cost ~9 ms a request (tool schemas), which at
            # 64 requests in flight was the run's bottleneck (bench/connections.py)
            raw = await self._client().chat.completions.with_raw_response.create(
                model=params["model"],
                messages=[],
                extra_body={k: v for k, v in params.items() if k != "model"},
            )
        except openai.APIError as exc:
            failure = self._failure(exc, "response_format" in params, "tools" in params)
        else:
            return self._parse(raw.http_response.text, time.perf_counter() - start)
        # Raised outside the except block, so the SDK exception (which may hold an echoed
        # key in its body) is not even kept as __context__.
        raise failure

    def _failure(self, exc: openai.APIError, with_format: bool, with_tools: bool) -> ModelError:
        """Our error for an SDK error: classified, with a redacted message."""
        if isinstance(exc, openai.APITimeoutError):
            return self._error(f"request timed out after {self.timeout_s}s", "timeout")
        if isinstance(exc, openai.APIConnectionError):
            return self._error(f"cannot connect to {self.base_url}: {exc}", "connection")
        if isinstance(exc, openai.APIStatusError):
            status, message = exc.status_code, error_message(exc.body)
            return self._error(
                f"HTTP {status}: {message}",
                status_kind(status, message, with_format, with_tools),
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
            f"malformed response body ({problem}): {body_text[:SHOWN_BODY]!r}", "bad_response"
        )

    def _completion(self, response: _Response, latency: float) -> Completion:
        choice = response.choices[0]
        refused = choice.message.content is None and choice.message.refusal is not None
        return Completion(
            model=self.name,
            text=choice.message.content or "",
            usage=response.normalized_usage(),
            latency_s=latency,
            finish_reason="refusal" if refused else choice.finish_reason,
            tool_calls=openai_tool_calls(choice.message.tool_calls),
            logprobs=read_logprobs(choice.logprobs),
        )

    async def aclose(self) -> None:
        """Close the HTTP clients of this model."""
        for client in self._clients.take_all():
            await client.close()


def make_openai_model(spec: ModelSpec, **options: Any) -> OpenAIChatModel:
    """Build an `openai/...` or `openai-api/...` model from options and environment (the
    registry rows check the option names)."""
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
    register_secrets(spec, str(api_key), str(base_url))
    return OpenAIChatModel(
        spec,
        base_url=str(base_url),
        api_key=str(api_key),
        timeout_s=float(options.get("timeout_s", DEFAULT_TIMEOUT_S)),
        structured_output=options.get("structured_output"),
        max_tokens=None if options.get("max_tokens") is None else int(options["max_tokens"]),
        tool_calls=options.get("tool_calls"),
    )

def make_openai(model: str, **options: Any) -> OpenAIChatModel:
    """The `openai` provider's factory."""
    return make_openai_model(ModelSpec("openai", model), **options)


def make_openai_compatible(model: str, **options: Any) -> OpenAIChatModel:
    """The `openai-api` provider's factory (with the option `preset`, a known service's
    settings fill the options left unset: `confide.llm.presets`)."""
    spec = ModelSpec("openai-api", model)
    if "preset" in options:
        options = with_preset(spec, options)
    return make_openai_model(spec, **options)


def with_preset(spec: ModelSpec, options: dict[str, Any]) -> dict[str, Any]:
    """`options` without `preset`, its service's settings filling the ones left unset;
    a hosted service's key variable must be set (or `api_key` given)."""
    options = dict(options)
    name = options.pop("preset")
    preset = get_preset(name, str(spec))
    fills = {
        "base_url": preset.base_url,
        "structured_output": preset.structured_output,
        "tool_calls": preset.tool_calls,
    }
    for field, value in fills.items():
        if options.get(field) is None and value is not None:
            options[field] = value
    if options.get("api_key") is None:
        key = os.environ.get(preset.key_variable)
        if key:
            options["api_key"] = key
        elif preset.key_required:
            raise ModelError(
                f"no API key: set {preset.key_variable} (preset {name}) or pass api_key=...",
                model=str(spec),
                kind="config",
            )
    return options
