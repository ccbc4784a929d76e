"""Cached, cache-write and reasoning tokens: read as providers report them, priced by kind."""

from __future__ import annotations

import pytest

from confide.llm.pricing import ModelPrice
from confide.llm.providers.openai_api import _Usage
from confide.llm.types import Usage


def test_openai_usage_details_are_kept() -> None:
    usage = _Usage.model_validate(
        {
            "prompt_tokens": 2000,
            "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1536, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 192},
        }
    ).normalized()
    assert usage == Usage(
        prompt_tokens=2000, completion_tokens=300, cached_prompt_tokens=1536, reasoning_tokens=192
    )


def test_null_details_read_as_zero() -> None:
    usage = _Usage.model_validate(
        {"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": None}
    ).normalized()
    assert (usage.cached_prompt_tokens, usage.reasoning_tokens) == (0, 0)


def test_cost_by_token_kind_hand_computed() -> None:
    price = ModelPrice(input=1.25, cached_input=0.125, cache_write=1.5, output=10.0, reasoning=12.0)
    usage = Usage(
        prompt_tokens=1_000_000,
        cached_prompt_tokens=400_000,
        cache_write_tokens=100_000,
        completion_tokens=200_000,
        reasoning_tokens=50_000,
    )
    # 500k uncached x 1.25 + 400k x 0.125 + 100k x 1.5 + 150k x 10 + 50k x 12, per million
    assert price.cost(usage) == pytest.approx(0.625 + 0.05 + 0.15 + 1.5 + 0.6)


def test_missing_kind_prices_default_to_list_prices() -> None:
    price = ModelPrice(input=2.0, output=8.0)
    usage = Usage(
        prompt_tokens=1000, cached_prompt_tokens=600, completion_tokens=100, reasoning_tokens=40
    )
    assert price.cost(usage) == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6)


def test_zero_kinds_keep_the_old_trace_bytes() -> None:
    assert Usage(prompt_tokens=3, completion_tokens=2).model_dump() == {
        "prompt_tokens": 3,
        "completion_tokens": 2,
        "cost_usd": None,
    }


def test_llama_cpp_cache_count_is_read_where_usage_has_none() -> None:
    from confide.llm.providers.openai_api import _Response

    choice = {"message": {"content": "hi"}, "finish_reason": "stop"}
    reply = {"choices": [choice], "usage": {"prompt_tokens": 900, "completion_tokens": 4},
             "timings": {"cache_n": 850, "prompt_n": 50}}
    assert _Response.model_validate(reply).normalized_usage().cached_prompt_tokens == 850
    reported = {**reply, "usage": {**reply["usage"],
                                   "prompt_tokens_details": {"cached_tokens": 512}}}
    assert _Response.model_validate(reported).normalized_usage().cached_prompt_tokens == 512


def test_cache_writes_are_capped_by_the_uncached_input() -> None:
    price = ModelPrice(input=1.0, cached_input=0.0, cache_write=10.0, output=0.0)
    # 600 read and 600 written of 1,000 input: only the 400 not read can have been written
    usage = Usage(prompt_tokens=1000, cached_prompt_tokens=600, cache_write_tokens=600)
    assert price.cost(usage) == pytest.approx(400 * 10.0 / 1e6, rel=1e-12)


def test_costs_are_per_million_tokens_exactly() -> None:
    assert ModelPrice(input=2.0, output=8.0).cost(
        Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    ) == pytest.approx(10.0, rel=1e-12)


@pytest.mark.parametrize("field", ["input", "output", "cached_input", "cache_write", "reasoning"])
def test_a_negative_price_is_refused(field: str) -> None:
    with pytest.raises(ValueError):
        ModelPrice.model_validate({"input": 1.0, "output": 1.0, field: -0.5})


def test_free_providers_and_dated_snapshots_are_priced() -> None:
    from confide.llm.pricing import load_price_table

    table = load_price_table()
    assert table.price("mock/json") == ModelPrice(input=0.0, output=0.0)
    assert table.price("openai/gpt-4o-2024-08-06") == table.price("openai/gpt-4o") is not None
    assert table.price("openai/no-such-model") is None


def test_cost_status_of_a_cell() -> None:
    from confide.llm.pricing import PARTIAL, UNPRICED, cost_status

    assert cost_status(3, 3) is None
    assert cost_status(1, 3) == PARTIAL
    assert cost_status(0, 3) == UNPRICED


def test_the_meter_sums_every_kind_and_counts_cache_hits_failures_and_retries() -> None:
    from confide.llm.types import Completion
    from confide.llm.usage import ModelUsage, UsageMeter

    meter = UsageMeter()
    paid = Usage(prompt_tokens=100, completion_tokens=20, cached_prompt_tokens=60,
                 cache_write_tokens=30, reasoning_tokens=5, cost_usd=0.25)
    meter.record(Completion(model="m", text="a", usage=paid))
    meter.record(Completion(model="m", text="b", usage=paid))
    meter.record(Completion(model="m", text="c", usage=paid, cached=True))  # spent nothing
    meter.record(Completion(model="m", text="d", usage=Usage(prompt_tokens=1)))  # unpriced
    meter.record_failure("m")
    meter.record_retry("m")
    assert meter.snapshot()["m"] == ModelUsage(
        calls=5, cached_calls=1, failed_calls=1, retries=1, prompt_tokens=201,
        completion_tokens=40, cached_prompt_tokens=120, cache_write_tokens=60,
        reasoning_tokens=10, cost_usd=0.5, unknown_cost_calls=1,
    )
    assert ModelUsage().add(ModelUsage(calls=2, retries=3)) == ModelUsage(calls=2, retries=3)
