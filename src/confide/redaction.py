"""Secrets never reach the disk: the one place that removes them from text and data.

Two kinds of secret are removed everywhere text is written (traces, CSVs, the experiment
YAML, the report, cache entries, log lines), and from every provider error:

- the configured secrets (API keys, URL passwords), replaced exactly. Providers register
  them with `register_secret` when they are built. A secret shorter than
  `MIN_SECRET_CHARS` is not registered: replacing a one-character key would rewrite every
  occurrence of that letter in every message (`CONFIDE_OPENAI_API_KEY=x` turned
  "text" into "te***t"). `register_secret` returns False for such a key, and the provider
  warns once;
- URL credentials, `scheme://user:password@host`, whoever wrote them.

Provider error messages additionally lose anything that looks like a bearer token or an
OpenAI-style key (`redact`), because servers echo (partial) keys back in error bodies.
That heuristic is not applied to transcripts: "the bearer of bad news" is not a secret.
Log records of the `confide` logger are scrubbed by a filter installed on import.
Mappings (experiment files, model options) lose the values of fields named like a secret
(`api_key`, `password`, `secret`, `access_token`...) whatever their length.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
MIN_SECRET_CHARS = 8
"""Shorter values cannot be told apart from ordinary text, so they are not replaced."""
_MIN_PARTIAL = 8
_KEY_LIKE = re.compile(r"(?i)(bearer\s+)\S+|\b(sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@\"'\\<>]+@")
_SECRET_FIELD = re.compile(
    r"(?i)^(\w*_)?(api[_-]?key|password|passwd|secret|access_token|auth_token|authorization)$"
)

_lock = threading.Lock()
_secrets: set[str] = set()
_sorted: list[str] = []
"""The secrets longest first (no partial leftovers), kept sorted at registration: every
trace line is checked against them."""
_escaped: frozenset[str] = frozenset()
"""Each secret as it appears inside a JSON string (raw and ASCII-escaped)."""


def register_secret(value: str | None) -> bool:
    """Remember `value` as a secret to remove from everything written; False when it is
    too short to remove safely (it is then not remembered)."""
    if not value:
        return True
    if len(value) < MIN_SECRET_CHARS:
        return False
    with _lock:
        _secrets.add(value)
        _refresh()
    return True


def forget_secret(value: str) -> None:
    """Stop removing `value` (tests that register throwaway secrets)."""
    with _lock:
        _secrets.discard(value)
        _refresh()


def _refresh() -> None:
    """Rebuild the lookups derived from `_secrets` (the caller holds the lock)."""
    global _sorted, _escaped
    _sorted = sorted(_secrets, key=len, reverse=True)
    _escaped = frozenset(
        json.dumps(s, ensure_ascii=a)[1:-1] for s in _secrets for a in (False, True)
    )


def _known() -> list[str]:
    return _sorted  # replaced, never mutated, under the lock: a consistent snapshot


def _replace(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, MASK)
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)


def scrub(text: str) -> str:
    """`text` without any registered secret or URL credential."""
    return _replace(text, _known())


def scrub_data(value: Any) -> Any:
    """A copy of JSON-like `value` with every string scrubbed and every field named like
    a secret masked."""
    secrets = _known()

    def walk(item: Any, field: str = "") -> Any:
        if isinstance(item, str):
            return MASK if item and _SECRET_FIELD.search(field) else _replace(item, secrets)
        if isinstance(item, dict):
            return {k: walk(v, str(k)) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    return walk(value)


def scrub_json_line(line: str) -> str:
    """One JSON document (a trace line, a cache entry) without secrets. Scrubbing works
    on the parsed data, never on the escaped text, so the result is always valid JSON;
    lines with nothing to remove (nearly all) are returned as they are."""
    escaped = _escaped
    has_url = "@" in line and "://" in line and _URL_USERINFO.search(line) is not None
    if not has_url and not any(s in line for s in escaped):
        return line
    return json.dumps(scrub_data(json.loads(line)), ensure_ascii=False)


def scrub_json_lines(lines: bytes) -> bytes:
    """UTF-8 JSON documents, one a line (a batch of trace lines), each through
    `scrub_json_line`. The whole batch is checked first, and nearly always passes as it
    is: JSON text has no raw line break, so a secret or a URL credential found in no line
    is found in no batch either, and one call replaces one per line."""
    escaped = _escaped
    if not escaped and b"://" not in lines:
        return lines
    text = lines.decode()
    has_url = "@" in text and "://" in text and _URL_USERINFO.search(text) is not None
    if not has_url and not any(s in text for s in escaped):
        return lines
    return "\n".join(scrub_json_line(line) for line in text.split("\n")).encode()


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """A provider error message made safe: `secrets` (and every 8+ character prefix or
    suffix of long ones), every registered secret, URL credentials and key-like tokens
    replaced by `***`."""
    for secret in secrets:
        if not secret or len(secret) < MIN_SECRET_CHARS:
            continue
        text = text.replace(secret, MASK)
        if len(secret) >= 2 * _MIN_PARTIAL:
            text = text.replace(secret[:_MIN_PARTIAL], MASK).replace(secret[-_MIN_PARTIAL:], MASK)
    return _KEY_LIKE.sub(lambda m: (m.group(1) or "") + MASK, scrub(text))


def redact_url(url: str) -> str:
    """A URL with any user:password part masked, for reprs and messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{MASK}@{host}"))


class ScrubFilter(logging.Filter):
    """Scrubs every record of the `confide` logger before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub(record.getMessage()), None
        return True


logging.getLogger("confide").addFilter(ScrubFilter())


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
