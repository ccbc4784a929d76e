"""Errors of the model layer.

`ModelError` is raised when no usable reply could be obtained from a provider (network,
HTTP status, timeout, malformed response body, missing configuration). `transient` tells
the retry wrapper whether trying again can help, and `error_class` names the class every
trace records: `transient` (429, 5xx, timeouts, resets, malformed bodies: retried
with backoff), `validation` (the request itself is wrong: retrying sends the same wrong
request), `capability` (the endpoint cannot do what was asked, e.g. a response format it
does not know: the caller steps down, it never retries) and `permanent` (configuration,
credentials, a replay miss). Messages never contain API keys: every
provider passes its secrets through `redact` before building one, and errors are raised
`from None` so a chained provider exception cannot carry an echoed key into a log.
"""

from __future__ import annotations

from typing import Literal, Self

from confide.errors import ConfideError
from confide.untrusted import scrub

ErrorKind = Literal[
    "timeout",
    "connection",
    "rate_limit",
    "server_error",
    "bad_response",
    "bad_request",
    "context_length",
    "capability",
    "auth",
    "config",
    "missing_extra",
    "replay_miss",
    "script_exhausted",
    "crash",
]

TRANSIENT_KINDS: frozenset[str] = frozenset(
    {"timeout", "connection", "rate_limit", "server_error", "bad_response"}
)
ErrorClass = Literal["transient", "validation", "capability", "permanent"]
_CLASS_OF_KIND: dict[str, ErrorClass] = {
    "bad_request": "validation", "context_length": "validation", "capability": "capability"
}


class ModelError(ConfideError):
    """A model call failed.

    Attributes: `model` (spec), `kind`, `transient` (retrying may help), `status_code`
    (HTTP status if any), `retry_after_s` (server-requested wait), `attempts` (calls made
    before giving up, set by the retry wrapper).
    """

    def __init__(
        self,
        message: str,
        *,
        model: str,
        kind: ErrorKind,
        transient: bool | None = None,
        status_code: int | None = None,
        retry_after_s: float | None = None,
        attempts: int = 1,
    ) -> None:
        message = scrub(message)  # a server's error body may hold a lone surrogate
        super().__init__(message)
        self.message = message
        self.model = model
        self.kind: ErrorKind = kind
        self.transient = kind in TRANSIENT_KINDS if transient is None else transient
        self.status_code = status_code
        self.retry_after_s = retry_after_s
        self.attempts = attempts

    @property
    def error_class(self) -> ErrorClass:
        """`transient`, `validation`, `capability` or `permanent` (see the module doc)."""
        if self.transient:
            return "transient"
        return _CLASS_OF_KIND.get(self.kind, "permanent")

    def __str__(self) -> str:
        tries = f", gave up after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.model}: {self.message} ({self.error_class} error{tries})"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, kind={self.kind!r}, "
            f"class={self.error_class}, status_code={self.status_code}, "
            f"attempts={self.attempts}, message={self.message!r})"
        )

    def with_attempts(self, attempts: int) -> Self:
        """The same error (same class, so a subclass stays catchable as itself),
        annotated with how many attempts were made."""
        annotated = type(self).__new__(type(self), *self.args)
        annotated.__dict__.update(self.__dict__, attempts=attempts)
        return annotated


class ModelCrashError(ModelError):
    """The process running an embedded model died during a call or while loading the
    model for it (segfault, abort, the kernel's out-of-memory killer). `cause` names it:
    a signal name such as `SIGKILL`, or `exit code N`. Not transient: a prompt that
    crashes the model once would crash it again, so the call fails and its episode is
    recorded as an error."""

    def __init__(self, message: str, *, model: str, cause: str) -> None:
        super().__init__(message, model=model, kind="crash")
        self.cause = cause


class ModelSpecError(ConfideError):
    """A model spec, option or argument is invalid (unknown provider, bad option...)."""
