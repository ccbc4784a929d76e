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
