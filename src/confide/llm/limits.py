"""Connection limits: how many requests are in flight at once, per pool.

A pool is a provider (every model of `openai/...` shares the provider's default, its
registry row's `max_connections`) or one model that sets its own `max_connections`
(model option, or `--max-connections MODEL=N`), which then has a pool of its own. All
models that share a `ProviderLimiter` share its pools. A limit of None means unlimited.

The limit adapts to rate limits, as TCP's congestion window does (additive increase,
multiplicative decrease): a 429 halves the pool's current limit (at most once per
`COOLDOWN_S`, so a burst of 429s from one overloaded moment counts once), and every
successful call adds 1/limit, so the limit climbs back by about one per round of calls
until it reaches the configured ceiling again. The ceiling is never exceeded.

Pools are kept per event loop (asyncio primitives must not be shared between loops), in
a weak map so finished loops are forgotten.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig

COOLDOWN_S = 1.0
"""Rate limits within this many seconds of the last cut do not cut again."""


def check_limit(pool: str, limit: object) -> int | None:
    """`limit` as a connection limit for `pool` (None: unlimited), or one clear error."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ModelSpecError(f"max_connections for {pool} must be an integer >= 1, got {limit!r}")
    return limit


class _Pool:
    """One pool's adaptive limit, on one event loop (callers queue first come, first
    served)."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.window = float(ceiling)
        self.in_flight = 0
        self.peak = 0
        self._last_cut = -COOLDOWN_S
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        return max(1, int(self.window))

    async def acquire(self) -> None:
        """Take a slot, waiting in line when none is free (a woken caller is handed its
        slot by `_wake`)."""
        if self.in_flight < self.limit and not self._waiting:
            self._take()
            return
        ticket = asyncio.get_running_loop().create_future()
        self._waiting.append(ticket)
        try:
            await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self.release()  # the slot handed over just now goes to the next caller
            raise

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self.in_flight < self.limit and self._waiting:
            ticket = self._waiting.popleft()
            if not ticket.done():
                self._take()
                ticket.set_result(None)

    def succeeded(self) -> None:
        self.window = min(float(self.ceiling), self.window + 1.0 / self.window)
        self._wake()

    def rate_limited(self) -> None:
        now = time.monotonic()
        if now - self._last_cut >= COOLDOWN_S:
            self._last_cut = now
            self.window = max(1.0, self.window / 2)


class ProviderLimiter:
    """Hands out call slots per pool (see the module docstring). `limits` maps pools to
    their ceilings; pools not in it are unlimited until `set_limit` names them."""

    def __init__(self, limits: Mapping[str, int | None] | None = None) -> None:
        if limits is None:
            from confide.llm.registry import default_limits

            limits = default_limits()
        self.limits = {pool: check_limit(pool, limit) for pool, limit in limits.items()}
        self._lock = threading.Lock()
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Pool]] = (
            weakref.WeakKeyDictionary()
        )

    def set_limit(self, pool: str, limit: int | None, *, default: bool = False) -> None:
        """Set `pool`'s ceiling (with `default`, only when it has none yet)."""
        limit = check_limit(pool, limit)
        with self._lock:
            if not default or pool not in self.limits:
                self.limits[pool] = limit

    def _pool(self, pool: str) -> _Pool | None:
        limit = self.limits.get(pool)
        if limit is None:
            return None
        loop = asyncio.get_running_loop()
        with self._lock:
            pools = self._per_loop.setdefault(loop, {})
            if pool not in pools or pools[pool].ceiling != limit:
                pools[pool] = _Pool(limit)
            return pools[pool]

    def peak(self, pool: str) -> int:
        """The most calls of `pool` ever in flight at once on the running loop."""
        found = self._pool(pool)
        return 0 if found is None else found.peak

    @asynccontextmanager
    async def slot(self, pool: str) -> AsyncIterator[None]:
        """Hold one slot of `pool` for the duration of the block; a rate-limit error
        raised inside it narrows the pool, a success widens it again."""
        found = self._pool(pool)
        if found is None:
            yield
            return
        await found.acquire()
        try:
            yield
        except ModelError as exc:
            if exc.kind == "rate_limit":
                found.rate_limited()
            raise
        else:
            found.succeeded()
        finally:
            found.release()


class LimitedModel:
    """Runs each call of `inner` inside a slot of its pool."""

    def __init__(self, inner: ChatModel, limiter: ProviderLimiter, pool: str) -> None:
        self.name = inner.name
        self.inner = inner
        self.limiter = limiter
        self.pool = pool

    def __repr__(self) -> str:
        return f"LimitedModel({self.inner!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        async with self.limiter.slot(self.pool):
            return await self.inner.generate(messages, config=config)
