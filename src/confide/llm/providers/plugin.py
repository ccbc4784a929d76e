"""Providers from `confide.models` entry points: the entry point named `acme` makes every
`acme/<model>` spec; its object is called as `make(model, **options)` with the model name
after the slash and the run's provider options, and returns a `ChatModel`. confide wraps
it like any builtin provider (retry with backoff, cache, metering, per-seat recording)."""

from __future__ import annotations

from typing import Any

from confide import plugins
from confide.llm.errors import ModelSpecError
from confide.llm.spec import ModelSpec
from confide.llm.types import ChatModel


def make_plugin_model(spec: ModelSpec, **options: Any) -> ChatModel:
    """The plugin provider's model for `spec`, checked to be a ChatModel."""
    make = plugins.load(plugins.MODELS, spec.provider)
    if make is None or not callable(make):
        raise ModelSpecError(
            f"{spec}: the {plugins.MODELS} entry point {spec.provider!r} is not a model "
            f"factory (got {type(make).__name__})"
        )
    model = make(spec.name, **options)
    if not isinstance(model, ChatModel):
        raise ModelSpecError(
            f"{spec}: the {plugins.MODELS} plugin {spec.provider!r} returned a "
            f"{type(model).__name__}, not a ChatModel (a `name` and an async `generate`)"
        )
    return model
