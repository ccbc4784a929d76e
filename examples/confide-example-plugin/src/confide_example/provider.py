"""A model provider: `example/parrot` answers with the last line of the last message,
prefixed `parrot: `. confide wraps it like its own providers (retry, cache, metering, the
per-seat record in the trace). The provider is one registry row, `PROVIDER`, which the
`confide.models` entry point names: the same kind of row as confide's own providers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from confide.llm import ChatMessage, Completion, GenerateConfig, ModelSpecError, Provider, Usage


class ParrotModel:
    """A ChatModel: a `name` and an async `generate`."""

    def __init__(self, name: str) -> None:
        self.name = f"example/{name}"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        last = messages[-1].content.strip().splitlines() if messages else []
        text = f"parrot: {last[-1] if last else '...'}"
        words = sum(len(m.content.split()) for m in messages)
        return Completion(
            model=self.name,
            text=text,
            usage=Usage(prompt_tokens=words, completion_tokens=len(text.split())),
            finish_reason="stop",
        )


def make_model(name: str, **options: Any) -> ParrotModel:
    """The provider factory: `example/<name>` -> a model; only `parrot` exists."""
    if name != "parrot":
        raise ModelSpecError(f"example/{name}: unknown model (the example provider has parrot)")
    return ParrotModel(name)


PROVIDER = Provider(
    name="example",
    factory=make_model,
    about="the example plugin's parrot",
    max_connections=4,
    options={},  # none: the registry refuses any option by name
)
