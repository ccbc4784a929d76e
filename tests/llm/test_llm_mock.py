"""The mock model: scripted replies, built-in and registered mocks, injected faults and
their determinism, and completing every call under 30% transient faults with retry."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from confide.llm import (
    ChatMessage,
    FaultPlan,
    GenerateConfig,
    MockModel,
    ModelError,
    ModelSpecError,
    RetryPolicy,
    get_model,
    mock_names,
    register_mock,
    unregister_mock,
)

CFG = GenerateConfig()


def user(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


async def test_echo_replies_with_last_user_message() -> None:
    model = get_model("mock/echo")
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="first"),
        ChatMessage(role="assistant", content="ok"),
        ChatMessage(role="user", content="second"),
    ]
    reply = await model.generate(messages, config=CFG)
    assert reply.text == "second" and reply.model == "mock/echo"
    assert reply.finish_reason == "stop" and not reply.cached
    # ceil(chars/4) + 3 per message: (2+3)+(2+3)+(1+3)+(2+3); reply ceil(6/4) = 2
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (19, 2)
    assert reply.usage.cost_usd == 0.0


class Inner(BaseModel):
    label: str
    weight: float


class Plan(BaseModel):
    name: str
    slots: list[int]
    inner: Inner
    note: str | None
    optional: int = 3


async def test_json_mock_returns_a_valid_instance_of_the_schema() -> None:
    model = get_model("mock/json")
    reply = await model.generate(
        user("plan"), config=GenerateConfig(response_schema=Plan.model_json_schema())
    )
    plan = Plan.model_validate_json(reply.text)
    assert plan == Plan(name="", slots=[], inner=Inner(label="", weight=0.0), note="")
    assert (await model.generate(user("x"), config=CFG)).text == "{}"


async def test_scripted_list_in_order_then_exhausted() -> None:
    model = get_model("mock/script", outputs=["one", "two"])
    assert [(await model.generate(user(str(i)), config=CFG)).text for i in range(2)] == [
        "one",
        "two",
    ]
    with pytest.raises(ModelError, match="exhausted after 2 replies") as caught:
        await model.generate(user("3"), config=CFG)
    assert caught.value.kind == "script_exhausted" and caught.value.attempts == 1


async def test_cycle_and_callable_outputs() -> None:
    cyc = get_model("mock/c", outputs=["a", "b"], cycle=True)
    assert [(await cyc.generate(user("x"), config=CFG)).text for _ in range(5)] == list("ababa")
    seen: list[GenerateConfig] = []

    def reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
        seen.append(config)
        return messages[-1].content.upper()

    fn = MockModel(reply, name="upper")
    assert (await fn.generate(user("shout"), config=GenerateConfig(seed=3))).text == "SHOUT"
    assert seen == [GenerateConfig(seed=3)] and fn.name == "mock/upper"


async def test_outputs_from_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "replies.jsonl"
    jsonl.write_text('"plain"\n\n{"text": "two\\nlines"}\n', encoding="utf-8")
    text = tmp_path / "replies.txt"
    text.write_text("alpha\n\nbeta\n", encoding="utf-8")
    from_jsonl = get_model("mock/f", outputs_file=str(jsonl))
    assert (await from_jsonl.generate(user("1"), config=CFG)).text == "plain"
    assert (await from_jsonl.generate(user("2"), config=CFG)).text == "two\nlines"
    from_text = MockModel(text)
    assert [(await from_text.generate(user("x"), config=CFG)).text for _ in range(2)] == [
        "alpha",
        "beta",
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ModelSpecError, match=r"bad.jsonl:2: a reply must be"):
        MockModel(bad)


async def test_max_tokens_cuts_the_reply() -> None:
    model = get_model("mock/long", outputs=['{"answer": "a fairly long value here"}'])
    reply = await model.generate(user("x"), config=GenerateConfig(max_tokens=3))
    assert reply.text == '{"answer": "'  # 4 characters per token
    assert reply.finish_reason == "length"


async def test_scripted_faults_each_kind() -> None:
    plan = FaultPlan(
        script={0: "timeout", 1: "rate_limit", 2: "server_error", 3: "empty", 4: "malformed"},
        retry_after_s=2.5,
    )
    model = MockModel(['{"x": 1}'], faults=plan)
    errors = []
    for _ in range(3):
        with pytest.raises(ModelError) as caught:
            await model.generate(user("q"), config=CFG)
        errors.append(caught.value)
    assert [(e.kind, e.transient, e.status_code) for e in errors] == [
        ("timeout", True, None),
        ("rate_limit", True, 429),
        ("server_error", True, 500),
    ]
    assert errors[1].retry_after_s == 2.5
    assert (await model.generate(user("q"), config=CFG)).text == ""
    assert (await model.generate(user("q"), config=CFG)).text == '{"x"'
    # faulted calls did not use up the scripted reply
    assert (await model.generate(user("q"), config=CFG)).text == '{"x": 1}'
    assert model.calls == 6


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def run_faulty(n: int, seed: int) -> tuple[list[str], int, int]:
    sleeps = Sleeps()
    plan = FaultPlan(rate=0.3, seed=seed, retry_after_s=0.25)
    model = get_model(
        "mock/echo",
        faults=plan,
        sleep=sleeps,
        retry=RetryPolicy(max_attempts=10, base_delay_s=0.1, seed=seed),
    )
    replies = await asyncio.gather(
        *(model.generate(user(f"request {i}"), config=CFG) for i in range(n))
    )
    total = model.meter.total()
    assert total.calls == n and total.failed_calls == 0
    return [r.text for r in replies], total.retries, len(sleeps.waits)


async def test_thirty_percent_transient_faults_still_complete_every_call() -> None:
    texts, retries, waits = await run_faulty(200, seed=11)
    assert texts == [f"request {i}" for i in range(200)]
    # about 30% of 200 first attempts fail, plus 30% of their retries...
    assert 60 <= retries <= 115 and waits == retries
    again = await run_faulty(200, seed=11)
    assert again == (texts, retries, waits)  # same seed, same faults despite concurrency
    assert (await run_faulty(200, seed=12))[1] != retries


def test_fault_draws_depend_on_request_not_call_order() -> None:
    plan = FaultPlan(rate=0.5, seed=4)
    draws = [plan.fault_for(i, "k1", 0) for i in range(5)]
    assert len(set(draws)) == 1  # same request, same occurrence: same draw at any call index
    per_occurrence = {plan.fault_for(0, "k1", k) for k in range(40)}
    assert None in per_occurrence and len(per_occurrence) > 1
    assert FaultPlan(rate=1.0, kinds=("empty",)).fault_for(0, "k", 0) == "empty"
    assert FaultPlan(rate=0.0).fault_for(0, "k", 0) is None


async def test_faults_from_a_mapping_and_bad_options() -> None:
    model = get_model("mock/echo", faults={"script": {0: "empty"}})
    assert (await model.generate(user("x"), config=CFG)).text == ""
    with pytest.raises(ModelSpecError, match="invalid faults"):
        get_model("mock/echo", faults={"rate": 2.0})
    with pytest.raises(ModelSpecError, match="unknown option"):
        get_model("mock/echo", temperature=1)
    with pytest.raises(ModelSpecError, match="unknown mock model mock/nope"):
        get_model("mock/nope")
    with pytest.raises(ModelSpecError, match="single string"):
        MockModel("just one reply")


async def test_register_mock() -> None:
    def factory(**options: Any) -> MockModel:
        return MockModel(["registered"], name="team", **options)

    register_mock("team", factory)
    try:
        assert "team" in mock_names()
        model = get_model("mock/team", latency_s=0.0)
        assert (await model.generate(user("x"), config=CFG)).text == "registered"
        with pytest.raises(ModelSpecError, match="already registered"):
            register_mock("team", factory)
        register_mock("team", factory, replace=True)
        with pytest.raises(ModelSpecError, match="built in"):
            register_mock("echo", factory)
    finally:
        unregister_mock("team")
    assert "team" not in mock_names()


async def test_latency_is_applied() -> None:
    model = get_model("mock/echo", latency_s=0.05)
    replies = await asyncio.gather(*(model.generate(user(str(i)), config=CFG) for i in range(4)))
    assert all(0.05 <= r.latency_s < 0.5 for r in replies)


def test_json_reply_is_json() -> None:
    from confide.llm.providers.mock_registry import json_reply

    schema = {"type": "object", "required": ["a"], "properties": {"a": {"const": 5}}}
    assert json.loads(json_reply([], GenerateConfig(response_schema=schema))) == {"a": 5}
