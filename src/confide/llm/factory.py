"""`get_model`: from a `provider/model` spec to a ready-to-use, wrapped chat model.

The stack, outermost first: metering (prices every completion, counts usage), the
response cache (only with `cache_dir`), retry on transient errors, the per-provider
concurrency limit, then the provider. The limit sits inside the retry so a request
waiting out its backoff does not hold a slot; the cache sits outside the retry so a hit
costs no attempt at all.

Options for the wrappers: `cache_dir`; `retry` (a `RetryPolicy`, or a mapping of fields
that override the provider's default policy); `sleep` (the retry wait function; tests
inject one); `meter` (a `UsageMeter` to add to; a new one otherwise, reachable as
`model.meter`); `prices` (a `PriceTable` or a path to one; the shipped table otherwise);
`limiter` (a `ProviderLimiter`; one shared per process otherwise). Every other option
goes to the provider, which rejects names it does not know. Mock and replay models retry
without backoff (there is no server to spare), though a Retry-After is still honoured.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from confide.llm.cache import CachedModel, ResponseCache
from confide.llm.errors import ModelSpecError
from confide.llm.limits import LimitedModel, ProviderLimiter
from confide.llm.pricing import PriceTable, load_price_table
from confide.llm.retry import RetryingModel, RetryPolicy
from confide.llm.spec import ModelSpec, parse_spec
from confide.llm.types import ChatModel
from confide.llm.usage import MeteredModel, UsageMeter

WRAPPER_OPTIONS = frozenset({"cache_dir", "retry", "sleep", "meter", "prices", "limiter"})
_NO_BACKOFF = RetryPolicy(base_delay_s=0.0, max_delay_s=0.0)
_SHARED_LIMITER = ProviderLimiter()


@functools.cache
def shipped_prices() -> PriceTable:
    """The price table shipped with confide (read once)."""
    return load_price_table()


def build_provider(spec: ModelSpec, **options: Any) -> ChatModel:
    """The bare provider model for `spec` (no wrappers), importing it lazily."""
    if spec.provider in ("openai", "openai-api"):
        from confide.llm.providers.openai_api import make_openai_model

        return make_openai_model(spec, **options)
    if spec.provider == "mock":
        from confide.llm.providers.mock_registry import make_mock

        return make_mock(spec.name, **options)
    if spec.provider == "local":
        from confide.llm.providers.local import make_local_model

        return make_local_model(spec.name, **options)
    if spec.provider != "replay":
        from confide.llm.providers.plugin import make_plugin_model

        return make_plugin_model(spec, **options)
    from confide.llm.providers.replay import OPTIONS, ReplayModel

    unknown = sorted(options.keys() - OPTIONS)
    if unknown:
        raise ModelSpecError(
            f"{spec}: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(OPTIONS))})"
        )
    return ReplayModel(spec.name, seat=options.get("seat"), strict=bool(options.get("strict")))


def _retry_policy(value: Any, spec: ModelSpec) -> RetryPolicy:
    """The policy given, or the provider's default with the given fields overridden."""
    if isinstance(value, RetryPolicy):
        return value
    default = _NO_BACKOFF if spec.provider in ("mock", "replay") else RetryPolicy()
    if value is None:
        return default
    if isinstance(value, Mapping):
        try:
            return RetryPolicy.model_validate({**default.model_dump(), **value})
        except ValidationError as exc:
            raise ModelSpecError(f"{spec}: invalid retry options: {exc}") from None
    raise ModelSpecError(f"{spec}: retry must be a RetryPolicy or a mapping, got {value!r}")


def _prices(value: Any) -> PriceTable:
    if value is None:
        return shipped_prices()
    if isinstance(value, PriceTable):
        return value
    if isinstance(value, str | Path):
        return load_price_table(value)
    raise ModelSpecError(f"prices must be a PriceTable or a path, got {value!r}")


def get_model(spec: str, **options: Any) -> MeteredModel:
    """A chat model for `provider/model`, with retry, concurrency limit, accounting and,
    given `cache_dir`, an on-disk response cache."""
    parsed = parse_spec(spec)
    provider_options = {k: v for k, v in options.items() if k not in WRAPPER_OPTIONS}
    meter = options.get("meter") or UsageMeter()
    model: ChatModel = build_provider(parsed, **provider_options)
    model = LimitedModel(model, options.get("limiter") or _SHARED_LIMITER, parsed.provider)
    retry_kwargs: dict[str, Any] = {"meter": meter}
    if options.get("sleep") is not None:
        retry_kwargs["sleep"] = options["sleep"]
    model = RetryingModel(model, _retry_policy(options.get("retry"), parsed), **retry_kwargs)
    if options.get("cache_dir") is not None:
        model = CachedModel(model, ResponseCache(options["cache_dir"]))
    return MeteredModel(model, meter, _prices(options.get("prices")))
