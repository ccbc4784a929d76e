"""Model specs of the form `provider/model` (the name after the first slash may itself
contain slashes, e.g. `replay/runs/a/traces/ep1.jsonl` or `openai-api/org/model`).
Providers are the builtin `PROVIDERS` and those of `confide.models` entry points."""

from __future__ import annotations

from typing import NamedTuple

from confide import plugins
from confide.llm.errors import ModelSpecError

PROVIDERS: tuple[str, ...] = ("openai", "openai-api", "mock", "local", "replay")


def providers() -> tuple[str, ...]:
    """Builtin providers, then the plugin providers (a plugin never replaces a builtin)."""
    extra = sorted(set(plugins.plugins(plugins.MODELS)) - set(PROVIDERS))
    return (*PROVIDERS, *extra)


class ModelSpec(NamedTuple):
    """A parsed spec: `provider` is one of `providers()`, `name` is provider-specific."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_spec(spec: str) -> ModelSpec:
    """Split and check a `provider/model` spec."""
    provider, sep, name = spec.strip().partition("/")
    known = providers()
    if not sep or not name:
        raise ModelSpecError(
            f"model spec {spec!r} must have the form provider/model "
            f"(providers: {', '.join(known)})"
        )
    if provider not in known:
        raise ModelSpecError(
            f"model spec {spec!r}: unknown provider {provider!r} "
            f"(known providers: {', '.join(known)})"
        )
    return ModelSpec(provider, name)
