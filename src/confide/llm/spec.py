"""Model specs of the form `provider/model` (the name after the first slash may itself
contain slashes, e.g. `replay/runs/a/traces/ep1.jsonl` or `openai-api/org/model`).
Providers are those of the registry (`confide.llm.registry`): builtin, registered and
plugin ones."""

from __future__ import annotations

from typing import NamedTuple

from confide.llm.errors import ModelSpecError
from confide.llm.registry import provider_names


def providers() -> tuple[str, ...]:
    """Builtin providers, then the registered and plugin ones (a plugin never replaces a
    builtin)."""
    return provider_names()


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
