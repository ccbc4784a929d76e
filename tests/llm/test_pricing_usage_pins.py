"""Pricing and usage accounting pinned by behaviour (bench/mutation.py): what a call costs
(hand-computed), which prices a table accepts, how a model spec finds its price, how a
cost cell over partly priced calls reads, and what the meter counts for each kind of
call. Every expected number below is worked out by hand from the module docs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.pricing import ModelPrice, PriceTable, cost_status, load_price_table
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage
from confide.llm.usage import MeteredModel, ModelUsage, UsageMeter

ZEROS = dict.fromkeys(ModelUsage.model_fields, 0)


def test_a_call_is_priced_per_million_tokens_of_each_kind() -> None:
    price = ModelPrice(input=2.0, cached_input=0.5, cache_write=2.5, output=10.0, reasoning=20.0)
    usage = Usage(
        prompt_tokens=1000,
        cached_prompt_tokens=300,
        cache_write_tokens=200,
        completion_tokens=500,
        reasoning_tokens=100,
    )
    # 500 uncached * 2 + 300 cached * 0.5 + 200 written * 2.5 + 400 output * 10 + 100 * 20
    assert price.cost(usage) == pytest.approx(7650 / 1_000_000, rel=1e-12)


def test_cache_writes_beyond_the_uncached_input_are_not_priced_twice() -> None:
    # a provider reporting 50 written of the 20 input tokens not read from the cache
    price = ModelPrice(input=1.0, cached_input=0.0, cache_write=100.0, output=0.0)
    usage = Usage(prompt_tokens=100, cached_prompt_tokens=80, cache_write_tokens=50)
    assert price.cost(usage) == pytest.approx(20 * 100.0 / 1_000_000, rel=1e-12)


@pytest.mark.parametrize("field", ["input", "output", "cached_input", "cache_write", "reasoning"])
def test_every_price_may_be_zero_and_none_may_be_negative(field: str) -> None:
    base = {"input": 1.0, "output": 1.0}
    assert getattr(ModelPrice(**{**base, field: 0.0}), field) == 0.0
    assert getattr(ModelPrice(**{**base, field: 0.5}), field) == 0.5
    with pytest.raises(ValidationError):
        ModelPrice(**{**base, field: -0.01})


def _table(**models: ModelPrice) -> PriceTable:
    return PriceTable(
        version="t",
        as_of="2026-01-01",
        zero_cost_providers=("mock", "local"),
        models={f"openai/{name}": price for name, price in models.items()},
    )


def test_zero_cost_providers_cost_nothing_and_others_are_unknown() -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=1000)
    table = _table()
    assert table.cost("mock/json", usage) == 0.0
    assert table.cost("local/smollm2", usage) == 0.0
    assert table.cost("openai/mock", usage) is None  # the provider decides, not the name


def test_a_dated_snapshot_is_priced_as_its_base_unless_listed_itself() -> None:
    base, dated = ModelPrice(input=1.0, output=1.0), ModelPrice(input=3.0, output=3.0)
    assert _table(**{"gpt-4o": base}).price("openai/gpt-4o-2024-08-06") == base
    both = _table(**{"gpt-4o": base, "gpt-4o-2024-08-06": dated})
    assert both.price("openai/gpt-4o-2024-08-06") == dated
    assert both.price("openai/gpt-4o") == base
    assert both.price("openai/gpt-4o-mini") is None


def test_a_loaded_price_cannot_be_changed_afterwards() -> None:
    table = _table(m=ModelPrice(input=1.0, output=1.0))
    with pytest.raises(ValidationError):
        table.models["openai/m"].input = 0.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        table.version = "other"  # type: ignore[misc]


def test_a_table_without_schema_version_is_version_one_and_any_version_name_is_kept() -> None:
    table = PriceTable.model_validate({"version": "7", "as_of": "2026-01-01"})
    assert (table.schema_version, table.version) == (1, "7")
    with pytest.raises(ValidationError):
        PriceTable.model_validate({"version": "", "as_of": "2026-01-01"})


@pytest.mark.parametrize(
    ("priced", "total", "reads"),
    [(3, 3, None), (0, 0, None), (2, 3, "partial"), (1, 3, "partial"), (0, 3, "unpriced")],
)
def test_a_cost_cell_over_partly_priced_calls(priced: int, total: int, reads: str | None) -> None:
    assert cost_status(priced, total) == reads


def test_a_large_run_with_every_call_priced_has_a_dollar_cell() -> None:
    # counts computed at run time are distinct int objects: equal, not identical
    calls = [int(str(n)) for n in (5000, 5000)]
    assert calls[0] is not calls[1]
    assert cost_status(calls[0], calls[1]) is None


def test_a_bad_price_table_names_the_first_field_and_its_value(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "version": "v",
                "as_of": "2026-01-01",
                "models": {"openai/m": {"input": -1.5, "output": "x"}},
            }
        )
    )
    with pytest.raises(ModelSpecError) as bad:
        load_price_table(path)
    message = str(bad.value)
    assert message.startswith(f"price table {path}: field models.openai/m.input: ")
    assert message.endswith(" (got -1.5)") and "output" not in message
    path.write_text(json.dumps({"version": "v", "as_of": "2026/01/01"}))
    with pytest.raises(ModelSpecError) as pattern:
        load_price_table(path)
    assert str(pattern.value).startswith(f"price table {path}: field as_of: ")
    assert str(pattern.value).endswith(" (got '2026/01/01')")
    path.write_text(json.dumps({"as_of": "2026-01-01"}))
    with pytest.raises(ModelSpecError) as missing:
        load_price_table(path)
    assert str(missing.value) == f"price table {path}: field version: Field required"


def test_usage_totals_add_field_by_field() -> None:
    one = ModelUsage(calls=2, prompt_tokens=10, cost_usd=0.5, unknown_cost_calls=1)
    two = ModelUsage(calls=3, prompt_tokens=4, retries=2, cost_usd=0.25)
    assert one.add(two) == ModelUsage(
        calls=5, prompt_tokens=14, retries=2, cost_usd=0.75, unknown_cost_calls=1
    )
    assert ModelUsage().model_dump() == {**ZEROS, "cost_usd": 0.0}


def _completion(model: str, cost: float | None, *, cached: bool = False) -> Completion:
    usage = Usage(
        prompt_tokens=100,
        completion_tokens=20,
        cached_prompt_tokens=30,
        cache_write_tokens=10,
        reasoning_tokens=5,
        cost_usd=cost,
    )
    return Completion(model=model, text="ok", usage=usage, cached=cached)


def test_the_meter_counts_each_kind_of_call_exactly() -> None:
    meter = UsageMeter()
    assert meter.total().model_dump() == {**ZEROS, "cost_usd": 0.0}
    meter.record(_completion("a/m", 0.25))
    meter.record(_completion("a/m", None))
    meter.record(_completion("a/m", 9.0, cached=True))  # a cache hit spends nothing
    meter.record_failure("a/m")
    meter.record_retry("a/m")
    meter.record_retry("b/m")
    assert meter.snapshot()["a/m"] == ModelUsage(
        calls=4,
        cached_calls=1,
        failed_calls=1,
        retries=1,
        prompt_tokens=200,
        completion_tokens=40,
        cached_prompt_tokens=60,
        cache_write_tokens=20,
        reasoning_tokens=10,
        cost_usd=0.25,
        unknown_cost_calls=1,
    )
    assert meter.snapshot()["b/m"] == ModelUsage(retries=1)
    assert meter.total().retries == 2 and meter.total().calls == 4


class _Failing:
    name = "a/m"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        raise ModelError("down", model=self.name, kind="server_error")


async def test_a_failed_metered_call_is_counted_and_raised() -> None:
    meter = UsageMeter()
    model = MeteredModel(_Failing(), meter, _table())  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        await model.generate([ChatMessage(role="user", content="hi")], config=GenerateConfig())
    assert meter.snapshot()["a/m"] == ModelUsage(calls=1, failed_calls=1)
