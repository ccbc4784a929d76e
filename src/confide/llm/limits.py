"""Per-provider concurrency limits.

All models of one provider that share a `ProviderLimiter` share one semaphore, so a run
that seats five `openai/...` agents still keeps at most `limits["openai"]` requests in
flight. Semaphores are kept per event loop (an asyncio semaphore must not be used from
two loops), in a weak map so finished loops are forgotten. A limit of None means
unlimited. The local provider defaults to 1: llama.cpp runs one generation at a time
anyway and queueing here keeps latencies honest.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

from confide.llm.errors import ModelSpecError
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig

DEFAULT_LIMITS: Mapping[str, int | None] = {
    "openai": 16,
    "openai-api": 8,
    "local": 1,
    "mock": None,
    "replay": None,
}


class ProviderLimiter:
    """Hands out concurrency slots per provider."""

    def __init__(self, limits: Mapping[str, int | None] = DEFAULT_LIMITS) -> None:
        for provider, limit in limits.items():
            if limit is not None and limit < 1:
                raise ModelSpecError(
                    f"concurrency limit for provider {provider!r} must be >= 1, got {limit}"
                )
        self.limits = dict(limits)
        self._lock = threading.Lock()
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    def _semaphore(self, provider: str) -> asyncio.Semaphore | None:
        limit = self.limits.get(provider)
        if limit is None:
            return None
        loop = asyncio.get_running_loop()
        with self._lock:
            semaphores = self._per_loop.setdefault(loop, {})
            if provider not in semaphores:
                semaphores[provider] = asyncio.Semaphore(limit)
            return semaphores[provider]

    @asynccontextmanager
    async def slot(self, provider: str) -> AsyncIterator[None]:
        """Hold one slot of `provider` for the duration of the block."""
        semaphore = self._semaphore(provider)
        if semaphore is None:
            yield
            return
        async with semaphore:
            yield


class LimitedModel:
    """Runs each call of `inner` inside a slot of its provider."""

    def __init__(self, inner: ChatModel, limiter: ProviderLimiter, provider: str) -> None:
        self.name = inner.name
        self.inner = inner
        self.limiter = limiter
        self.provider = provider

    def __repr__(self) -> str:
        return f"LimitedModel({self.inner!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        async with self.limiter.slot(self.provider):
            return await self.inner.generate(messages, config=config)
