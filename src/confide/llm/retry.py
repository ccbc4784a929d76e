"""Retry with exponential backoff and seeded jitter on transient errors.

This wrapper is the single retry policy of confide: providers make exactly one attempt
per call (the openai client is built with `max_retries=0`). After failure number k
(1-based) the wait is `min(max_delay_s, base_delay_s * 2**(k-1))`, scaled by a factor
drawn uniformly from [1 - jitter, 1] ("equal jitter" spreads synchronized clients
apart without ever waiting much less than the backoff). A server's Retry-After is
honoured: the wait is at least that long, even when it exceeds `max_delay_s`, because
retrying earlier would only be refused again. Rate limits are retried for as long as
`rate_limit_budget_s` allows (minutes), other transient errors `max_attempts` times;
every retry is counted in the meter. Jitter draws come from a `random.Random`
seeded by the policy, so delays are reproducible; the sleep function is injectable so
tests do not wait.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from confide.llm.errors import ModelError
from confide.llm.recorder import count_retry
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig
from confide.llm.usage import UsageMeter

Sleep = Callable[[float], Awaitable[None]]


class RetryPolicy(BaseModel):
    """How many attempts to make and how long to wait between them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=5, ge=1)
    base_delay_s: float = Field(default=1.0, ge=0.0)
    max_delay_s: float = Field(default=60.0, ge=0.0)
    jitter: float = Field(default=0.5, ge=0.0, le=1.0)
    seed: int = 0
    rate_limit_budget_s: float = Field(default=600.0, ge=0.0)
    """Rate limits (429) are retried past `max_attempts` while the waits on the call stay
    within this many seconds: a real provider's per-minute limits need minutes, not the
    seconds five quick attempts take."""

    def delay(self, failures: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait after the `failures`-th consecutive failure."""
        backoff: float = min(self.max_delay_s, self.base_delay_s * 2.0 ** (failures - 1))
        backoff *= 1.0 - self.jitter * rng.random()
        return max(backoff, retry_after_s or 0.0)


class RetryingModel:
    """Retries transient `ModelError`s according to a `RetryPolicy`."""

    def __init__(
        self,
        inner: ChatModel,
        policy: RetryPolicy,
        *,
        sleep: Sleep = asyncio.sleep,
        meter: UsageMeter | None = None,
    ) -> None:
        self.name = inner.name
        self.inner = inner
        self.policy = policy
        self._sleep = sleep
        self._meter = meter
        self._rng = random.Random(policy.seed)

    def __repr__(self) -> str:
        return f"RetryingModel({self.inner!r}, max_attempts={self.policy.max_attempts})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        attempt, waited = 1, 0.0
        while True:
            try:
                return await self.inner.generate(messages, config=config)
            except ModelError as exc:
                failure = exc
            delay = self.policy.delay(attempt, failure.retry_after_s, self._rng)
            # past max_attempts, a rate limit is waited out while the budget lasts (a
            # policy without backoff, for servers that do not exist, never waits it out)
            patient = (
                failure.kind == "rate_limit"
                and delay > 0
                and waited + delay <= self.policy.rate_limit_budget_s
            )
            give_up = attempt >= self.policy.max_attempts and not patient
            if not failure.transient or give_up:
                raise failure.with_attempts(attempt)
            if self._meter is not None:
                self._meter.record_retry(self.name)
            count_retry()
            await self._sleep(delay)
            attempt, waited = attempt + 1, waited + delay
