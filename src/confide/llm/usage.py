"""Token and cost accounting.

`MeteredModel` prices every completion from a `PriceTable` (filling `usage.cost_usd`) and
adds it to a `UsageMeter`. Cache hits keep the usage of the call that produced them (so a
re-run's trace equals the original) but are counted as `cached_calls` and add nothing to
the spend totals: the meter reports money actually spent by this process. Calls whose
model has no known price are counted in `unknown_cost_calls`, so a total with
`unknown_cost_calls > 0` is a lower bound, never a silent zero.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pydantic import BaseModel

from confide.llm.errors import ModelError
from confide.llm.pricing import PriceTable
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig


class ModelUsage(BaseModel):
    """Totals for one model (or for all models, from `UsageMeter.total`)."""

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unknown_cost_calls: int = 0

    def add(self, other: ModelUsage) -> ModelUsage:
        """Field-wise sum."""
        return ModelUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in ModelUsage.model_fields}
        )


class UsageMeter:
    """Thread- and task-safe running totals per model spec."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, ModelUsage] = {}

    def _update(self, model: str, delta: ModelUsage) -> None:
        with self._lock:
            self._by_model[model] = self._by_model.get(model, ModelUsage()).add(delta)

    def record(self, completion: Completion) -> None:
        """Count one successful call (spend only when it was not a cache hit)."""
        if completion.cached:
            self._update(completion.model, ModelUsage(calls=1, cached_calls=1))
            return
        cost = completion.usage.cost_usd
        self._update(
            completion.model,
            ModelUsage(
                calls=1,
                prompt_tokens=completion.usage.prompt_tokens,
                completion_tokens=completion.usage.completion_tokens,
                cached_prompt_tokens=completion.usage.cached_prompt_tokens,
                cache_write_tokens=completion.usage.cache_write_tokens,
                reasoning_tokens=completion.usage.reasoning_tokens,
                cost_usd=cost or 0.0,
                unknown_cost_calls=int(cost is None),
            ),
        )

    def record_failure(self, model: str) -> None:
        """Count one call that ended in an error."""
        self._update(model, ModelUsage(calls=1, failed_calls=1))

    def record_retry(self, model: str) -> None:
        """Count one retried provider attempt."""
        self._update(model, ModelUsage(retries=1))

    def add(self, model: str, usage: ModelUsage) -> None:
        """Add usage counted elsewhere (another process's meter)."""
        self._update(model, usage)

    def snapshot(self) -> dict[str, ModelUsage]:
        """A copy of the per-model totals."""
        with self._lock:
            return dict(self._by_model)

    def total(self) -> ModelUsage:
        """Totals over all models."""
        result = ModelUsage()
        for usage in self.snapshot().values():
            result = result.add(usage)
        return result


class MeteredModel:
    """Prices each completion and records it (and each failure) in a meter."""

    def __init__(self, inner: ChatModel, meter: UsageMeter, prices: PriceTable) -> None:
        self.name = inner.name
        self.inner = inner
        self.meter = meter
        self.prices = prices

    def __repr__(self) -> str:
        return f"MeteredModel({self.inner!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        try:
            completion = await self.inner.generate(messages, config=config)
        except ModelError:
            self.meter.record_failure(self.name)
            raise
        if completion.usage.cost_usd is None:
            cost = self.prices.cost(completion.model, completion.usage)
            completion = completion.model_copy(
                update={"usage": completion.usage.model_copy(update={"cost_usd": cost})}
            )
        self.meter.record(completion)
        return completion
