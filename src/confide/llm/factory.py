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
`limiter` (a `ProviderLimiter`; one shared per process otherwise); `max_connections`
(requests of this model in flight at once, in a pool of its own; otherwise the model
shares its provider's pool at the registry row's default). Every other option goes to the
provider, whose registry row rejects names it does not know. Providers whose row says
`backoff=False` (mock, replay) retry without backoff (there is no server to spare),
though a Retry-After is still honoured.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from confide.llm.cache import CachedModel, ResponseCache
from confide.llm.errors import ModelSpecError
from confide.llm.limits import LimitedModel, ProviderLimiter, check_limit
from confide.llm.pricing import PriceTable, load_price_table
from confide.llm.registry import Provider, get_provider
from confide.llm.retry import RetryingModel, RetryPolicy
from confide.llm.spec import ModelSpec, parse_spec
from confide.llm.types import ChatModel
from confide.llm.usage import MeteredModel, UsageMeter

WRAPPER_OPTIONS = frozenset(
    {"cache_dir", "retry", "sleep", "meter", "prices", "limiter", "max_connections"}
)
_NO_BACKOFF = RetryPolicy(base_delay_s=0.0, max_delay_s=0.0)
_SHARED_LIMITER = ProviderLimiter()


@functools.cache
def shipped_prices() -> PriceTable:
    """The price table shipped with confide (read once)."""
    return load_price_table()


def provider_row(spec: ModelSpec) -> Provider:
    """The registry row of `spec`'s provider."""
    row = get_provider(spec.provider)
    if row is None:  # parse_spec already checked the name; the plugin vanished since
        raise ModelSpecError(f"{spec}: unknown provider {spec.provider!r}")
    return row


def build_provider(spec: ModelSpec, **options: Any) -> ChatModel:
    """The bare provider model for `spec` (no wrappers), built by its registry row."""
    return provider_row(spec).build(spec.name, options)


def _retry_policy(value: Any, spec: ModelSpec) -> RetryPolicy:
    """The policy given, or the provider's default with the given fields overridden."""
    if isinstance(value, RetryPolicy):
        return value
    default = RetryPolicy() if provider_row(spec).backoff else _NO_BACKOFF
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


def _limited(model: ChatModel, spec: ModelSpec, options: Mapping[str, Any]) -> LimitedModel:
    """`model` in its connection pool: its own with `max_connections`, else its
    provider's (at the row's default limit)."""
    limiter = options.get("limiter")
    if limiter is None:
        limiter = _SHARED_LIMITER
    elif not isinstance(limiter, ProviderLimiter):
        raise ModelSpecError(
            f"{spec}: option limiter must be a ProviderLimiter, got {limiter!r} "
            "(to cap requests in flight, set max_connections: N)"
        )
    if options.get("max_connections") is not None:
        limiter.set_limit(str(spec), check_limit(str(spec), options["max_connections"]))
        return LimitedModel(model, limiter, str(spec))
    limiter.set_limit(spec.provider, provider_row(spec).max_connections, default=True)
    return LimitedModel(model, limiter, spec.provider)


def get_model(spec: str, **options: Any) -> MeteredModel:
    """A chat model for `provider/model`, with retry, connection limit, accounting and,
    given `cache_dir`, an on-disk response cache."""
    parsed = parse_spec(spec)
    provider_options = {k: v for k, v in options.items() if k not in WRAPPER_OPTIONS}
    meter = options.get("meter") or UsageMeter()
    model: ChatModel = build_provider(parsed, **provider_options)
    model = _limited(model, parsed, options)
    retry_kwargs: dict[str, Any] = {"meter": meter}
    if options.get("sleep") is not None:
        retry_kwargs["sleep"] = options["sleep"]
    model = RetryingModel(model, _retry_policy(options.get("retry"), parsed), **retry_kwargs)
    if options.get("cache_dir") is not None:
        model = CachedModel(model, ResponseCache(options["cache_dir"]))
    return MeteredModel(model, meter, _prices(options.get("prices")))
