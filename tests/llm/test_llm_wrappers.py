"""Wrappers: on-disk cache, retry policy, per-provider concurrency limit, usage and cost
metering, price table, recording, and the request key."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from confide.llm import (
    ChatMessage,
    Completion,
    GenerateConfig,
    MockModel,
    ModelCallRecord,
    ModelError,
    ModelSpecError,
    PriceTable,
    ProviderLimiter,
    RetryPolicy,
    Usage,
    UsageMeter,
    get_model,
    load_price_table,
    parse_spec,
    with_recorder,
)
from confide.llm.request import request_key
from confide.llm.spec import ModelSpec

HI = [ChatMessage(role="user", content="hi")]


class Counting:
    """A provider that counts calls and replies with the call number."""

    def __init__(self, name: str = "mock/counting") -> None:
        self.name = name
        self.calls = 0

    async def generate(self, messages: Any, *, config: GenerateConfig) -> Completion:
        self.calls += 1
        return Completion(
            model=self.name,
            text=f"reply {self.calls}",
            usage=Usage(prompt_tokens=10, completion_tokens=2),
        )


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Counting:
    provider = Counting()
    monkeypatch.setattr("confide.llm.factory.build_provider", lambda spec, **o: provider)
    return provider


async def test_second_identical_call_is_served_from_cache(
    counting: Counting, tmp_path: Path
) -> None:
    model = get_model("mock/counting", cache_dir=tmp_path)
    first = await model.generate(HI, config=GenerateConfig(seed=1))
    second = await model.generate(HI, config=GenerateConfig(seed=1))
    assert counting.calls == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.usage == first.usage
    # a fresh process (new model object) over the same directory also hits
    again = await get_model("mock/counting", cache_dir=tmp_path).generate(
        HI, config=GenerateConfig(seed=1)
    )
    assert again.cached and counting.calls == 1
    total = model.meter.total()
    assert (total.calls, total.cached_calls, total.prompt_tokens) == (2, 1, 10)
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1 and not list(tmp_path.rglob("*.tmp"))
    entry = json.loads(files[0].read_text())
    assert entry["schema_version"] == 1 and entry["request"]["model"] == "mock/counting"


async def test_cache_key_covers_the_whole_request(counting: Counting, tmp_path: Path) -> None:
    model = get_model("mock/counting", cache_dir=tmp_path)
    variants = [
        GenerateConfig(),
        GenerateConfig(seed=2),
        GenerateConfig(max_tokens=5),
        GenerateConfig(stop=("x",)),
        GenerateConfig(response_schema={"type": "object"}),
    ]
    for config in variants:
        await model.generate(HI, config=config)
    await model.generate([ChatMessage(role="user", content="other")], config=GenerateConfig())
    assert counting.calls == 6


async def test_unseeded_sampling_is_not_cached(counting: Counting, tmp_path: Path) -> None:
    model = get_model("mock/counting", cache_dir=tmp_path)
    for _ in range(2):
        await model.generate(HI, config=GenerateConfig(temperature=0.7))
    assert counting.calls == 2
    for _ in range(2):
        await model.generate(HI, config=GenerateConfig(temperature=0.7, seed=5))
    assert counting.calls == 3


async def test_corrupt_cache_entry_is_a_miss(counting: Counting, tmp_path: Path) -> None:
    model = get_model("mock/counting", cache_dir=tmp_path)
    await model.generate(HI, config=GenerateConfig())
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text('{"schema_version": 1, "completion": {"tex')
    reply = await model.generate(HI, config=GenerateConfig())
    assert not reply.cached and counting.calls == 2
    assert (await model.generate(HI, config=GenerateConfig())).cached


def test_retry_delays_hand_computed() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.0)
    rng = random.Random(0)
    assert [policy.delay(k, None, rng) for k in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert policy.delay(1, 30.0, rng) == 30.0  # Retry-After beats the cap
    jittered = RetryPolicy(base_delay_s=2.0, jitter=0.5, seed=3)
    draws = random.Random(3)
    expected = 2.0 * (1 - 0.5 * draws.random())
    assert jittered.delay(1, None, random.Random(3)) == expected
    assert 1.0 <= expected <= 2.0


async def test_retry_stops_at_max_attempts_and_skips_permanent_errors() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    plan = {"script": {i: "server_error" for i in range(10)}}
    model = get_model(
        "mock/echo", faults=plan, sleep=sleep, retry={"max_attempts": 4, "jitter": 0.0}
    )
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.attempts == 4 and caught.value.kind == "server_error"
    assert waits == [0.0, 0.0, 0.0]  # mock retries without backoff by default
    assert model.meter.total().failed_calls == 1 and model.meter.total().retries == 3
    exhausted = get_model("mock/x", outputs=[], sleep=sleep)
    with pytest.raises(ModelError) as caught:
        await exhausted.generate(HI, config=GenerateConfig())
    assert caught.value.attempts == 1 and len(waits) == 3


async def test_per_provider_concurrency_limit() -> None:
    limiter = ProviderLimiter({"mock": 2})
    active = peak = 0

    def slow(messages: list[ChatMessage], config: GenerateConfig) -> str:
        return "done"

    class Tracking(MockModel):
        async def generate(self, messages: Any, *, config: GenerateConfig) -> Completion:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1
            return await super().generate(messages, config=config)

    from confide.llm import LimitedModel

    a = LimitedModel(Tracking(slow, name="a"), limiter, "mock")
    b = LimitedModel(Tracking(slow, name="b"), limiter, "mock")
    await asyncio.gather(*(m.generate(HI, config=GenerateConfig()) for m in [a, b] * 5))
    assert peak == 2  # shared across both models of the provider
    with pytest.raises(ModelSpecError, match=">= 1"):
        ProviderLimiter({"openai": 0})


async def test_limiter_works_across_event_loops() -> None:
    limiter = ProviderLimiter({"mock": 1})
    model = get_model("mock/echo", limiter=limiter)

    def run_in_new_loop() -> str:
        return asyncio.run(model.generate(HI, config=GenerateConfig())).text

    assert await asyncio.to_thread(run_in_new_loop) == "hi"
    assert (await model.generate(HI, config=GenerateConfig())).text == "hi"


def test_price_table() -> None:
    table = load_price_table()
    assert table.version and table.as_of == max(p.date or "" for p in table.models.values())
    assert all(p.date and p.source for p in table.models.values())  # each entry dated, sourced
    cached = Usage(prompt_tokens=1_000_000, cached_prompt_tokens=400_000, completion_tokens=0)
    assert table.cost("anthropic/claude-sonnet-4-5", cached) == pytest.approx(0.6 * 3 + 0.4 * 0.3)
    usage = Usage(prompt_tokens=2_000_000, completion_tokens=500_000)
    assert table.cost("openai/gpt-4.1", usage) == pytest.approx(2 * 2.0 + 0.5 * 8.0)
    assert table.cost("openai/gpt-4o-2024-08-06", usage) == pytest.approx(2 * 2.5 + 0.5 * 10.0)
    assert table.cost("openai/unreleased-model", usage) is None
    assert table.cost("openai-api/llama", usage) is None
    assert table.cost("mock/echo", usage) == 0.0 and table.cost("local/smollm2", usage) == 0.0
    assert table.cost("no-provider-name", usage) is None


def test_price_table_file(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "version": "t1",
                "as_of": "2030-01-01",
                "models": {"openai-api/llama": {"input": 1.0, "output": 3.0}},
            }
        )
    )
    table = load_price_table(path)
    assert isinstance(table, PriceTable)
    assert table.cost("openai-api/llama", Usage(prompt_tokens=10**6)) == 1.0
    path.write_text(json.dumps({"version": "t1", "as_of": "x", "models": {"a/b": {"in": 1}}}))
    with pytest.raises(ModelSpecError, match=r"price table .*prices.json: field as_of"):
        load_price_table(path)


async def test_meter_unknown_cost_and_shared_meter(tmp_path: Path) -> None:
    meter = UsageMeter()
    prices = PriceTable(version="t", as_of="2030-01-01", models={})
    model = get_model("mock/echo", meter=meter, prices=prices)
    reply = await model.generate(HI, config=GenerateConfig())
    assert reply.usage.cost_usd is None
    total = meter.total()
    assert total.unknown_cost_calls == 1 and total.cost_usd == 0.0 and total.calls == 1
    other = get_model("mock/json", meter=meter)
    await other.generate(HI, config=GenerateConfig())
    assert set(meter.snapshot()) == {"mock/echo", "mock/json"}
    assert meter.total().calls == 2


async def test_meter_is_thread_safe() -> None:
    meter = UsageMeter()
    completion = Completion(model="mock/x", text="", usage=Usage(prompt_tokens=1, cost_usd=0.5))

    def hammer() -> None:
        for _ in range(2000):
            meter.record(completion)

    await asyncio.gather(*(asyncio.to_thread(hammer) for _ in range(4)))
    total = meter.total()
    assert total.calls == 8000 and total.prompt_tokens == 8000 and total.cost_usd == 4000.0


async def test_recorder_sees_successes_and_errors() -> None:
    records: list[ModelCallRecord] = []
    model = with_recorder(get_model("mock/r", outputs=["only"]), records.append)
    assert model.name == "mock/r"
    await model.generate(HI, config=GenerateConfig(seed=4))
    with pytest.raises(ModelError):
        await model.generate(HI, config=GenerateConfig())
    ok, failed = records
    assert ok.completion is not None and ok.completion.text == "only" and ok.error is None
    assert ok.config.seed == 4 and ok.messages == HI and ok.attempt == 1
    assert failed.completion is None and failed.error_kind == "script_exhausted"
    assert failed.error is not None and "exhausted" in failed.error
    fields = ok.trace_fields()
    assert fields["messages"] == [{"role": "user", "content": "hi"}]
    assert fields["completion"]["text"] == "only" and fields["error"] is None
    json.dumps(fields)
    assert ModelCallRecord.model_validate_json(ok.model_dump_json()) == ok


def test_request_key_is_canonical() -> None:
    key = request_key(HI, GenerateConfig())
    assert key == request_key([ChatMessage(role="user", content="hi")], GenerateConfig())
    assert key != request_key(HI, GenerateConfig(seed=0))
    assert key != request_key(HI, GenerateConfig(), model="mock/echo")
    schema_a = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema_b = {"properties": {"a": {"type": "string"}}, "type": "object"}
    assert request_key(HI, GenerateConfig(response_schema=schema_a)) == request_key(
        HI, GenerateConfig(response_schema=schema_b)
    )
    assert len(key) == 64


def test_parse_spec() -> None:
    assert parse_spec("openai/gpt-5-mini") == ModelSpec("openai", "gpt-5-mini")
    assert parse_spec("replay/runs/a/ep.jsonl") == ModelSpec("replay", "runs/a/ep.jsonl")
    assert str(parse_spec(" openai-api/org/model ")) == "openai-api/org/model"
    for bad in ("gpt-5", "openai/", "acme/claude", ""):
        with pytest.raises(ModelSpecError, match="model spec"):
            parse_spec(bad)


def test_redaction() -> None:
    from confide.redaction import Secret, redact, redact_url

    key = "abcdefghijklmnopqrstuvwxyz012345"
    text = f"key {key}, prefix {key[:8]}, suffix {key[-8:]}, Bearer tok123, sk-proj-AbC12345xyz"
    shown = redact(text, [key, None])
    assert key[:8] not in shown and key[-8:] not in shown
    assert "tok123" not in shown and "AbC12345" not in shown and "Bearer ***" in shown
    assert redact_url("https://u:p@host/v1") == "https://***@host/v1"
    assert redact_url("https://host/v1") == "https://host/v1"
    assert key not in repr(Secret(key)) and key not in f"{Secret(key)}"
