"""Removing secrets from text before it reaches an error message, a log or a trace.

Besides the exact secrets a provider knows about, anything that looks like a bearer
token or an OpenAI-style key is masked, because servers sometimes echo a (partial) key
back in their error bodies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
_KEY_LIKE = re.compile(r"(?i)(bearer\s+)\S+|\b(sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")
_MIN_PARTIAL = 8


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every secret, every 8+ character prefix or suffix of one, and every
    key-like token replaced by `***`."""
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, MASK)
        if len(secret) >= 2 * _MIN_PARTIAL:
            text = text.replace(secret[:_MIN_PARTIAL], MASK).replace(secret[-_MIN_PARTIAL:], MASK)
    return _KEY_LIKE.sub(lambda m: (m.group(1) or "") + MASK, text)


def redact_url(url: str) -> str:
    """A URL with any user:password part masked, for reprs and messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{MASK}@{host}"))


class Secret:
    """A string that does not show itself in reprs, str() or f-strings."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the one place that must send it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__
