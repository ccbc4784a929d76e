"""`google/<model>`: the Gemini API through Google's own SDK, google-genai (extra `google`).

Key from the `api_key` option, GEMINI_API_KEY or GOOGLE_API_KEY (required), base URL
from `base_url` or GOOGLE_GEMINI_BASE_URL (default Google's). As for `openai/`, the SDK
makes one attempt per call (its retry options set to one attempt: confide's retry
wrapper is the one retry policy), errors are classified by `http_common` (429
RESOURCE_EXHAUSTED a rate limit, waiting the `Retry-After` header or the error's
`RetryInfo.retryDelay`; 5xx transient; a 400 INVALID_ARGUMENT sent once) and every
message is redacted of the key.

The request, from confide's provider-neutral messages:
- leading system messages become the `system_instruction`; a later one becomes a user
  turn (the API has no system role inside `contents`);
- assistant turns are `model` turns, their tool calls `function_call` parts; a tool
  result is a `function_response` part (named after the call it answers) of the next
  user turn, consecutive turns of one role merged. Gemini 3 wants each call's thought
  signature back with it: the provider keeps the signatures it was given, per call id
  (calls without an id get one made from their content);
- structured output: the schema goes as `response_json_schema` with the JSON MIME type;
- thinking: `reasoning_effort` maps to Gemini 3's `thinking_level` (none and minimal:
  minimal, low, medium, high and xhigh: high) and, for earlier models, to a
  `thinking_budget` in tokens (none: 0, minimal 512, low 1024, medium 8192, high and
  xhigh 24576, the largest budget every 2.5 model takes); a level or budget a model does
  not take is the API's 400, sent once;
- sampling: temperature, top_p, seed, stop sequences and the reply budget
  (`max_output_tokens`) as given.

Usage is normalized (`confide.llm.types.Usage`): prompt tokens are `promptTokenCount`
(which includes the cached ones) plus `toolUsePromptTokenCount`, cached tokens
`cachedContentTokenCount` (Gemini's implicit and explicit caches), and, as the candidate
count excludes thoughts, completion tokens are candidates + `thoughtsTokenCount`, of
which the thoughts are reasoning.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from confide.llm.errors import ErrorKind, ModelError, ModelSpecError
from confide.llm.providers.http_common import (
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
THINKING_LEVEL: Mapping[str, str] = {
    "none": "minimal",
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}
THINKING_BUDGET: Mapping[str, int] = {
    "none": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 24576,
}
"""`reasoning_effort` -> Gemini 3's thinking level, and earlier models' thinking budget."""
_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "BLOCKLIST": "refusal",
    "SPII": "refusal",
}
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")
_REMEMBERED = 4096


def thinking_config(model: str, effort: str | None) -> dict[str, Any] | None:
    """The `thinking_config` for `effort` on `model` (None: the model's default), or one
    clear error for an effort with no mapping."""
    if effort is None:
        return None
    if effort not in THINKING_LEVEL:
        raise ModelSpecError(
            f"google/{model}: reasoning_effort {effort!r} has no thinking setting "
            f"(one of {', '.join(THINKING_LEVEL)})"
        )
    if model.startswith("gemini-3"):
        return {"thinking_level": THINKING_LEVEL[effort]}
    return {"thinking_budget": THINKING_BUDGET[effort]}


def retry_delay(details: Any) -> float | None:
    """Seconds from a `google.rpc.RetryInfo` entry of an error body (`"retryDelay":
    "30s"`), if any."""
    inner = details.get("error", details) if isinstance(details, dict) else None
    entries = inner.get("details") if isinstance(inner, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and str(entry.get("@type", "")).endswith("RetryInfo"):
            match = _DELAY.match(str(entry.get("retryDelay", "")))
            if match is not None:
                return float(match.group(1))
    return None


class GeminiChatModel:
    """A chat model behind the Gemini API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_tokens: int | None = None,
    ) -> None:
        self.name = f"google/{model}"
        self.model = model
        if timeout_s <= 0:
            raise ModelSpecError(f"{self.name}: timeout_s must be > 0, got {timeout_s}")
        if max_tokens is not None and max_tokens < 1:
            raise ModelSpecError(f"{self.name}: max_tokens must be >= 1, got {max_tokens}")
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.default_max_tokens = max_tokens
        self._api_key = Secret(api_key)
        self._signatures: OrderedDict[str, bytes] = OrderedDict()
        self._clients = PerLoop(self._new_client)

    def __repr__(self) -> str:
        where = redact_url(self.base_url) if self.base_url else "default"
        return f"GeminiChatModel(name={self.name!r}, base_url={where!r})"

    def _new_client(self) -> genai.Client:
        options = genai_types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.timeout_s * 1000),
            retry_options=genai_types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=self._api_key.reveal(), http_options=options)

    def _client(self) -> genai.Client:
        """The running event loop's client."""
        return self._clients.get()

    # -- the request ---------------------------------------------------------------

    def request(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The `contents` and the `config` sent for a request (SDK field names)."""
        leading = 0
        while leading < len(messages) and messages[leading].role == "system":
            leading += 1
        system = "\n\n".join(m.content for m in messages[:leading] if m.content)
        settings: dict[str, Any] = {"temperature": config.temperature}
        if system:
            settings["system_instruction"] = system
        if config.top_p is not None:
            settings["top_p"] = config.top_p
        if config.seed is not None:
            settings["seed"] = config.seed
        if config.stop:
            settings["stop_sequences"] = list(config.stop)
        budget = config.max_tokens if config.max_tokens is not None else self.default_max_tokens
        if budget is not None:
            settings["max_output_tokens"] = budget
        if (thinking := thinking_config(self.model, config.reasoning_effort)) is not None:
            settings["thinking_config"] = thinking
        if config.tools:
            settings["tools"] = [
                {
                    "function_declarations": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters_json_schema": t.parameters,
                        }
                        for t in config.tools
                    ]
                }
            ]
            settings["tool_config"] = {"function_calling_config": {"mode": "AUTO"}}
            settings["automatic_function_calling"] = {"disable": True}
        if config.response_schema is not None:
            settings["response_mime_type"] = "application/json"
            settings["response_json_schema"] = config.response_schema
        return self._contents(messages[leading:]), settings

    def _contents(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        result: list[dict[str, Any]] = []
        for message in messages:
            role = "model" if message.role == "assistant" else "user"
            parts = self._parts(message, names)
            if result and result[-1]["role"] == role:
                result[-1]["parts"].extend(parts)
            else:
                result.append({"role": role, "parts": parts})
        return result

    def _parts(self, message: ChatMessage, names: Mapping[str, str]) -> list[dict[str, Any]]:
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            return [
                {
                    "function_response": {
                        "name": names.get(call_id, "tool"),
                        "response": {"result": message.content},
                    }
                }
            ]
        parts: list[dict[str, Any]] = []
        if message.content or not message.tool_calls:
            parts.append({"text": message.content})
        for call in message.tool_calls:
            part: dict[str, Any] = {"function_call": {"name": call.name, "args": _args(call)}}
            if (signature := self._signatures.get(call.id)) is not None:
                part["thought_signature"] = signature
            parts.append(part)
        return parts

    # -- sending and reading ---------------------------------------------------------

    def _error(self, message: str, kind: ErrorKind, **extra: Any) -> ModelError:
        return redacted_error(self.name, self._api_key.reveal(), message, kind, **extra)

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        contents, settings = self.request(messages, config)
        start = time.perf_counter()
        # plain dicts in the SDK's field names, which it validates into its own types
        sent: Any = contents
        settings_sent: Any = settings
        try:
            response = await self._client().aio.models.generate_content(
                model=self.model, contents=sent, config=settings_sent
            )
        except genai_errors.APIError as exc:
            failure = self._failure(exc)
        except Exception as exc:  # the SDK's transport (httpx2) and parsing errors
            failure = self._connection_failure(exc)
        else:
            return self._completion(response, time.perf_counter() - start, config)
        raise failure  # outside the except block: the SDK error is not kept as context

    def _connection_failure(self, exc: BaseException) -> ModelError:
        name = type(exc).__name__
        if "timeout" in name.lower() or isinstance(exc, TimeoutError):
            return self._error(f"request timed out after {self.timeout_s}s", "timeout")
        if "connect" in name.lower() or isinstance(exc, OSError):
            return self._error(f"cannot connect to {self.base_url}: {exc}", "connection")
        return self._error(f"malformed response ({name}): {exc}", "bad_response")

    def _failure(self, exc: genai_errors.APIError) -> ModelError:
        """Our error for an SDK error: classified, with a redacted message."""
        status = int(exc.code or 0)
        message = str(exc.message or error_message(exc.details))
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        wait = parse_retry_after({k.lower(): v for k, v in dict(headers).items()})
        return self._error(
            f"HTTP {status}: {message}",
            status_kind(status, message, False, False) if status else "bad_response",
            status_code=status or None,
            retry_after_s=wait if wait is not None else retry_delay(exc.details),
        )

    def _completion(
        self,
        response: genai_types.GenerateContentResponse,
        latency: float,
        config: GenerateConfig,
    ) -> Completion:
        texts: list[str] = []
        calls: list[ToolCall] = []
        finish: str | None = "refusal"  # no candidate: the prompt was blocked
        if response.candidates:
            candidate = response.candidates[0]
            reason = candidate.finish_reason
            raw = str(getattr(reason, "value", reason)) if reason is not None else None
            finish = _FINISH.get(raw or "", raw.lower() if raw else None)
            parts = candidate.content.parts if candidate.content is not None else None
            for part in parts or ():
                if part.thought:
                    continue
                if part.function_call is not None:
                    calls.append(self._call(part, len(calls)))
                elif part.text:
                    texts.append(part.text)
        if calls:
            finish = "tool_calls"
        return Completion(
            model=self.name,
            text="".join(texts),
            usage=_usage(response.usage_metadata),
            latency_s=latency,
            finish_reason=finish,
            tool_calls=calls,
            tool_mode="native" if config.tools else None,
        )

    def _call(self, part: genai_types.Part, index: int) -> ToolCall:
        call = part.function_call
        assert call is not None
        arguments = json.dumps(call.args or {}, sort_keys=True)
        call_id = (
            call.id
            or "call-"
            + hashlib.sha256(
                f"{call.name}\0{arguments}\0{part.thought_signature!r}\0{index}".encode()
            ).hexdigest()[:16]
        )
        if part.thought_signature:
            self._signatures[call_id] = part.thought_signature
            while len(self._signatures) > _REMEMBERED:
                self._signatures.popitem(last=False)
        return ToolCall(id=call_id, name=str(call.name), arguments=arguments)

    async def aclose(self) -> None:
        """Close the HTTP clients of this model."""
        for client in self._clients.take_all():
            await client.aio.aclose()


def _usage(meta: genai_types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if meta is None:
        return Usage()
    thoughts = meta.thoughts_token_count or 0
    return Usage(
        prompt_tokens=(meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0),
        cached_prompt_tokens=meta.cached_content_token_count or 0,
        completion_tokens=(meta.candidates_token_count or 0) + thoughts,
        reasoning_tokens=thoughts,
    )


def _args(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        return {"arguments": call.arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def make_google(model: str, **options: Any) -> GeminiChatModel:
    """Build `google/<model>` from options and environment."""
    spec = f"google/{model}"
    api_key = (
        options.get("api_key")
        or os.environ.get("GEMINI_API_KEY")
        or os.environ.get("GOOGLE_API_KEY")
    )
    if not api_key:
        raise ModelError(
            "no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass api_key=...",
            model=spec,
            kind="config",
        )
    base_url = options.get("base_url") or os.environ.get("GOOGLE_GEMINI_BASE_URL")
    register_secrets(spec, str(api_key), str(base_url or ""))
    return GeminiChatModel(
        model,
        base_url=None if base_url is None else str(base_url),
        api_key=str(api_key),
        timeout_s=float(options.get("timeout_s", DEFAULT_TIMEOUT_S)),
        max_tokens=None if options.get("max_tokens") is None else int(options["max_tokens"]),
    )
