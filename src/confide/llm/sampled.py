"""`SampledModel`: a model whose requests carry fixed sampling settings.

The experiment's per-seat and per-role sampling settings (`confide.core.sampling`) win
over the configs an environment builds; this wrapper applies them to every request, so
the cache, the recorder and the provider all see the settings actually sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig


class SampledModel:
    """Overrides the `GenerateConfig` fields in `overrides` on every request."""

    def __init__(self, inner: ChatModel, overrides: Mapping[str, Any]) -> None:
        self.name = inner.name
        self.inner = inner
        self.overrides = dict(overrides)

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        return await self.inner.generate(messages, config=config.model_copy(update=self.overrides))

