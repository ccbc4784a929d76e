"""Model specs of the form `provider/model` (the name after the first slash may itself
contain slashes, e.g. `replay/runs/a/traces/ep1.jsonl` or `openai-api/org/model`)."""

from __future__ import annotations

from typing import NamedTuple

from confide.llm.errors import ModelSpecError

PROVIDERS: tuple[str, ...] = ("openai", "openai-api", "mock", "local", "replay")


class ModelSpec(NamedTuple):
    """A parsed spec: `provider` is one of `PROVIDERS`, `name` is provider-specific."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_spec(spec: str) -> ModelSpec:
    """Split and check a `provider/model` spec."""
    provider, sep, name = spec.strip().partition("/")
    if not sep or not name:
        raise ModelSpecError(
            f"model spec {spec!r} must have the form provider/model "
            f"(providers: {', '.join(PROVIDERS)})"
        )
    if provider not in PROVIDERS:
        raise ModelSpecError(
            f"model spec {spec!r}: unknown provider {provider!r} "
            f"(known providers: {', '.join(PROVIDERS)})"
        )
    return ModelSpec(provider, name)
