"""What every HTTP provider shares: reading Retry-After, classifying an HTTP status into
an error kind, reading an error body's message, and registering keys for redaction.

Providers differ in their SDKs and body shapes, not in what a status means: 429 is a rate
limit, 408 a timeout, 401/403 an auth error, 409 and 5xx (Anthropic's 529 "overloaded"
too) transient unless the body is plainly a request validation failure, and a 4xx is the
request's own fault, sent once: a refused response format or tool list is a capability
error, a conversation longer than the context its own kind.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import re
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from confide.llm.errors import ErrorKind, ModelError
from confide.llm.structured_output import about_response_format
from confide.redaction import MIN_SECRET_CHARS, redact, register_secret

_ABOUT_TOOLS = re.compile(r"(?i)\btools?\b|tool_choice|function")
_CONTEXT_LENGTH = re.compile(
    r"(?i)context[ _]length|context window|available context size|too many tokens"
    r"|maximum context|prompt is too long|exceeds the maximum number of tokens"
)
"""How OpenAI (`context_length_exceeded`), vLLM, llama.cpp servers, Anthropic and Gemini
say that the conversation no longer fits the model's context."""
_VALIDATION = re.compile(
    r"(?i)validation error|input should be|field required|extra inputs are not permitted"
    r"|\(\s*'body'|unprocessable|invalid request|not supported|unsupported|unrecognized"
)
SHOWN_BODY = 120
_log = logging.getLogger("confide")
_warned: set[str] = set()


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


def status_kind(status: int, message: str, with_format: bool, with_tools: bool) -> ErrorKind:
    """The kind of an HTTP error: 5xx are transient unless the body is plainly a request
    validation failure, which no retry heals; a refused response format or tool list is a
    capability error; a conversation longer than the model's context is its own kind
    (the model's limit, answered as invalid output by `generate_structured`)."""
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status in (401, 403):
        return "auth"
    if status == 409 or (status >= 500 and not _VALIDATION.search(message)):
        return "server_error"
    if with_format and about_response_format(message):
        return "capability"
    if with_tools and _ABOUT_TOOLS.search(message):
        return "capability"
    return "context_length" if _CONTEXT_LENGTH.search(message) else "bad_request"


def error_message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(body)[:SHOWN_BODY]


def register_secrets(spec: object, api_key: str, base_url: str) -> None:
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


T = TypeVar("T")


class PerLoop(Generic[T]):
    """One value per running event loop, made there on first use: an HTTP client's
    connection pool belongs to the loop it was opened on."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._values: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> T:
        """The running loop's value."""
        loop = asyncio.get_running_loop()
        value = self._values.get(loop)
        if value is None:
            value = self._values[loop] = self._make()
        return value

    def take_all(self) -> list[T]:
        """Every value made so far, forgotten here (to be closed)."""
        values = list(self._values.values())
        self._values.clear()
        return values


def redacted_error(
    model: str, api_key: str, message: str, kind: ErrorKind, **extra: Any
) -> ModelError:
    """A `ModelError` for `model` whose message never holds its `api_key`."""
    return ModelError(redact(message, [api_key]), model=model, kind=kind, **extra)
