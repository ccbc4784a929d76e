"""`anthropic/<model>` against a local fake of the Messages API (`_native_servers`): one
episode of each benchmark to `ok`, usage with cache reads and writes and thinking tokens,
a 429 whose retry-after is honoured, a 529 retried, a 400 sent once, the request's
shape (system, tools and results, cache breakpoints, thinking budget, tool-forced
JSON), the key never on disk nor in an error, and one line when the key or the extra is
missing."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _native_servers import THOUGHT_TOKENS, FakeAnthropic
from _openai_servers import EPISODES, episode_spend_row, run_with

from confide.cli.main import main
from confide.llm import ChatMessage, GenerateConfig, ModelError, RetryPolicy, get_model
from confide.llm.providers.anthropic_api import REPLY_TOOL, THINKING_BUDGET
from confide.llm.types import ToolCall, ToolSpec

KEY = "sk-ant-test-key-0123456789abcdefghij"
HI = [ChatMessage(role="user", content="hi")]


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic()
    yield server
    server.close()


def model_for(fake: FakeAnthropic, **options: Any) -> tuple[Any, Sleeps]:
    sleeps = Sleeps()
    options.setdefault("retry", RetryPolicy(max_attempts=3, base_delay_s=0.5, jitter=0.0))
    model = get_model(
        "anthropic/claude-test", base_url=fake.base_url, api_key=KEY, sleep=sleeps, **options
    )
    return model, sleeps


def _files_hold(root: Path, secret: str) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if secret.encode() in data:
            found.append(path)
    return found


@pytest.mark.parametrize("benchmark", sorted(EPISODES))
def test_one_episode_of_each_benchmark(
    fake: FakeAnthropic, benchmark: str, tmp_path: Path
) -> None:
    options = {"anthropic": {"base_url": fake.base_url, "api_key": KEY}}
    sampling = {"seats": {"reasoning_effort": "low"}}
    summary, trace = run_with(
        benchmark, "anthropic/claude-test", tmp_path / "run", options, sampling=sampling
    )
    assert trace.footer is not None and trace.footer.status == "ok", trace.footer
    assert summary.failed == []
    calls = [c.completion for c in trace.model_calls() if c.completion is not None]
    assert calls
    usages = [c["usage"] for c in calls]
    assert any(u.get("cached_prompt_tokens", 0) > 0 for u in usages)  # cache reads
    assert any(u.get("cache_write_tokens", 0) > 0 for u in usages)  # and writes
    assert any(u.get("reasoning_tokens", 0) == THOUGHT_TOKENS for u in usages)  # thinking
    metered = summary.usage["anthropic/claude-test"]
    read = sum(u.get("cached_prompt_tokens", 0) for u in usages)
    assert metered["cached_prompt_tokens"] == read
    spent = episode_spend_row(tmp_path / "run")  # results.csv carries what the provider said
    assert int(spent["episode_cached_input_tokens"]) == read > 0
    assert int(spent["episode_cache_write_tokens"]) == sum(
        u.get("cache_write_tokens", 0) for u in usages)
    assert int(spent["episode_reasoning_tokens"]) == sum(
        u.get("reasoning_tokens", 0) for u in usages)
    assert _files_hold(tmp_path, KEY) == []  # the key never on disk
    # but sent to the server (as x-api-key, or as a bearer token by SDK 2.x)
    assert all(KEY in (h.get("x-api-key", ""), h.get("authorization", "")[7:])
               for h in fake.headers)


async def test_usage_is_normalized(fake: FakeAnthropic) -> None:
    model, _ = model_for(fake)
    system = ChatMessage(role="system", content="You are terse. " * 40)
    first = await model.generate([system, *HI], config=GenerateConfig())
    second = await model.generate(
        [system, *HI, ChatMessage(role="assistant", content="Sure."), *HI],
        config=GenerateConfig(reasoning_effort="medium"),
    )
    reply = json.loads(json.dumps(fake.requests[1]))
    assert reply["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGET["medium"]}
    assert reply["max_tokens"] == 4096 + THINKING_BUDGET["medium"]
    assert first.usage.cached_prompt_tokens == 0 and first.usage.cache_write_tokens > 0
    assert second.usage.cached_prompt_tokens == first.usage.cache_write_tokens
    assert second.usage.reasoning_tokens == THOUGHT_TOKENS
    assert second.usage.completion_tokens > THOUGHT_TOKENS
    # prompt tokens count every input token: uncached + read + written
    assert second.usage.prompt_tokens > second.usage.cached_prompt_tokens


async def test_request_shape(fake: FakeAnthropic) -> None:
    model, _ = model_for(fake)
    tool = ToolSpec(name="lookup", description="Look up.", parameters={"type": "object"})
    call = ToolCall(id="toolu_1", name="lookup", arguments='{"q": "x"}')
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Find x."),
        ChatMessage(role="assistant", content="", tool_calls=(call,)),
        ChatMessage(role="tool", content="x is 1", tool_call_id="toolu_1"),
        ChatMessage(role="user", content="And?"),
    ]
    schema = {"title": "A", "type": "object", "properties": {"n": {"type": "integer"}},
              "required": ["n"]}
    reply = await model.generate(
        messages, config=GenerateConfig(tools=(tool,), response_schema=schema, stop=("END",))
    )
    body = fake.requests[-1]
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}
    ]
    results = body["messages"][2]["content"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x is 1"}
    assert results[-1]["cache_control"] == {"type": "ephemeral"}  # the last block
    assert [t["name"] for t in body["tools"]] == ["lookup", REPLY_TOOL]
    assert body["tool_choice"] == {"type": "any"}  # a call or the reply, never free text
    assert body["stop_sequences"] == ["END"]
    assert "temperature" not in body and "seed" not in body
    assert json.loads(reply.text) == {"n": 0} and reply.tool_calls == []
    assert reply.tool_mode == "native" and reply.finish_reason == "stop"
    await model.generate(HI, config=GenerateConfig(response_schema={"type": "array"}))
    assert fake.requests[-1]["tool_choice"] == {"type": "tool", "name": REPLY_TOOL}


async def test_thinking_blocks_go_back_with_their_tool_calls(fake: FakeAnthropic) -> None:
    model, _ = model_for(fake)
    tool = ToolSpec(name="lookup", description="Look up.", parameters={"type": "object"})
    config = GenerateConfig(tools=(tool,), reasoning_effort="low")
    ask = ChatMessage(role="user", content="call lookup")
    reply = await model.generate([ask], config=config)
    (call,) = reply.tool_calls
    history = [ask, ChatMessage(role="assistant", content="", tool_calls=(call,)),
               ChatMessage(role="tool", content="1", tool_call_id=call.id)]
    assert (await model.generate(history, config=config)).text == "Sure."
    sent = fake.requests[-1]["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "tool_use"]
    assert sent[0]["signature"] == "c2ln"  # as the API returned it


async def test_429_retry_after_is_honoured(fake: FakeAnthropic) -> None:
    fake.fail_next(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                    "message": "slow down"}},
                   **{"retry-after": "7"})
    model, sleeps = model_for(fake)
    reply = await model.generate(HI, config=GenerateConfig())
    assert reply.text == "Sure."
    assert sleeps.waits == [7.0] and len(fake.requests) == 2
    assert model.meter.total().retries == 1


async def test_overloaded_is_retried(fake: FakeAnthropic) -> None:
    fake.fail_next(529, {"type": "error", "error": {"type": "overloaded_error",
                                                    "message": "Overloaded"}})
    model, sleeps = model_for(fake)
    assert (await model.generate(HI, config=GenerateConfig())).text == "Sure."
    assert sleeps.waits == [0.5] and len(fake.requests) == 2


async def test_invalid_request_is_sent_once(fake: FakeAnthropic) -> None:
    fake.fail_next(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": f"bad key {KEY} in messages.0"}})
    model, sleeps = model_for(fake)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == "bad_request" and caught.value.attempts == 1
    assert caught.value.status_code == 400 and len(fake.requests) == 1
    assert sleeps.waits == []
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)


def test_unknown_effort_is_refused_before_sending(fake: FakeAnthropic) -> None:
    import asyncio

    model, _ = model_for(fake)
    with pytest.raises(Exception, match="reasoning_effort 'huge' has no thinking budget"):
        asyncio.run(model.generate(HI, config=GenerateConfig(reasoning_effort="huge")))
    assert fake.requests == []


def try_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              spec: str) -> list[str]:
    """What `confide models try SPEC hi` prints, through the CLI's entry point."""
    monkeypatch.setattr(sys, "argv", ["confide", "models", "try", spec, "hi"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


def test_try_without_key_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (line,) = try_lines(monkeypatch, capsys, "anthropic/x")
    assert "ANTHROPIC_API_KEY" in line


def test_try_without_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a: None if name == "anthropic" else real(name, *a),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    (line,) = try_lines(monkeypatch, capsys, "anthropic/x")
    assert "pip install 'confide[anthropic]'" in line
