"""On-disk response cache keyed by the full request.

The key is the SHA-256 of the canonical JSON of (model spec, messages, config including
seed, schema and stop strings), so any change to the request is a miss. Entries are one
JSON file each under `<cache_dir>/<key[:2]>/<key>.json`, written to a temporary file in
the same directory and renamed, so a killed process never leaves a torn entry; an
unreadable entry is treated as a miss and rewritten. Requests that sample
(temperature > 0) without a seed are not cached: serving them from the cache would
silently turn independent samples into copies of the first one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from confide import atomic
from confide.llm.request import request_key, request_payload
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig
from confide.redaction import scrub_json_line

CACHE_SCHEMA_VERSION = 1


def is_cacheable(config: GenerateConfig) -> bool:
    """Whether a request's reply is a function of the request (greedy, or seeded)."""
    return config.temperature == 0.0 or config.seed is not None


class ResponseCache:
    """A directory of cached completions."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        """The stored completion for `key`, or None (missing or unreadable entry)."""
        try:
            entry = json.loads(self._path(key).read_text("utf-8"))
            if entry.get("schema_version") != CACHE_SCHEMA_VERSION:
                return None
            return Completion.model_validate(entry["completion"])
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            return None

    def put(self, key: str, request: dict[str, Any], completion: Completion) -> None:
        """Store `completion` atomically (the stored request without secrets; the key is a
        hash, so it reveals none)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "schema_version": CACHE_SCHEMA_VERSION,
            "key": key,
            "request": request,
            "completion": completion.model_dump(mode="json"),
        }
        with atomic.atomic_text(path) as handle:
            handle.write(scrub_json_line(json.dumps(entry, ensure_ascii=False)))


class CachedModel:
    """Serves repeated requests from a `ResponseCache`, marking hits `cached=True`."""

    def __init__(self, inner: ChatModel, cache: ResponseCache) -> None:
        self.name = inner.name
        self.inner = inner
        self.cache = cache

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, directory={str(self.cache.directory)!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        if not is_cacheable(config):
            return await self.inner.generate(messages, config=config)
        start = time.perf_counter()
        key = request_key(messages, config, self.name)
        hit = self.cache.get(key)
        if hit is not None:
            latency = time.perf_counter() - start
            return hit.model_copy(update={"cached": True, "latency_s": latency})
        completion = await self.inner.generate(messages, config=config)
        self.cache.put(key, request_payload(messages, config, self.name), completion)
        return completion
