"""`google/<model>` against a local fake of the Gemini API (`_native_servers`): one
episode of each benchmark to `ok`, usage with cached and thinking tokens, a 429 whose
retry delay is honoured, a 503 retried, a 400 sent once, the request's shape (system
instruction, function calls and responses with their thought signatures, response
schema, thinking config), the key never on disk nor in an error, and one line when the
key or the extra is missing."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _native_servers import THOUGHT_TOKENS, FakeGemini
from _openai_servers import EPISODES, episode_spend_row, run_with
from test_llm_anthropic import Sleeps, _files_hold, try_lines

from confide.llm import ChatMessage, GenerateConfig, ModelError, RetryPolicy, get_model
from confide.llm.providers.google_api import THINKING_BUDGET, retry_delay
from confide.llm.types import ToolSpec

KEY = "AIza-test-key-0123456789abcdefghijkl"
HI = [ChatMessage(role="user", content="hi")]


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    server = FakeGemini()
    yield server
    server.close()


def model_for(fake: FakeGemini, spec: str = "google/gemini-test", **options: Any) -> Any:
    sleeps = Sleeps()
    options.setdefault("retry", RetryPolicy(max_attempts=3, base_delay_s=0.5, jitter=0.0))
    model = get_model(spec, base_url=fake.base_url, api_key=KEY, sleep=sleeps, **options)
    return model, sleeps


def _error(code: int, status: str, message: str, *details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status,
                      "details": list(details)}}


@pytest.mark.parametrize("benchmark", sorted(EPISODES))
def test_one_episode_of_each_benchmark(fake: FakeGemini, benchmark: str, tmp_path: Path) -> None:
    options = {"google": {"base_url": fake.base_url, "api_key": KEY}}
    sampling = {"seats": {"reasoning_effort": "low"}}
    summary, trace = run_with(
        benchmark, "google/gemini-test", tmp_path / "run", options, sampling=sampling
    )
    assert trace.footer is not None and trace.footer.status == "ok", trace.footer
    assert summary.failed == []
    usages = [c.completion["usage"] for c in trace.model_calls() if c.completion is not None]
    assert usages
    assert any(u.get("cached_prompt_tokens", 0) > 0 for u in usages)
    assert any(u.get("reasoning_tokens", 0) == THOUGHT_TOKENS for u in usages)
    metered = summary.usage["google/gemini-test"]
    assert metered["reasoning_tokens"] == sum(u.get("reasoning_tokens", 0) for u in usages)
    spent = episode_spend_row(tmp_path / "run")  # results.csv carries what the provider said
    assert int(spent["episode_cached_input_tokens"]) == sum(
        u.get("cached_prompt_tokens", 0) for u in usages) > 0
    assert int(spent["episode_reasoning_tokens"]) == metered["reasoning_tokens"]
    assert _files_hold(tmp_path, KEY) == []
    assert all(h.get("x-goog-api-key") == KEY for h in fake.headers)


async def test_usage_and_thinking(fake: FakeGemini) -> None:
    model, _ = model_for(fake)
    first = await model.generate(HI, config=GenerateConfig())
    second = await model.generate(
        [*HI, ChatMessage(role="assistant", content="Sure."), *HI],
        config=GenerateConfig(reasoning_effort="medium", max_tokens=50, seed=3, top_p=0.5),
    )
    config = fake.requests[1]["generationConfig"]
    assert config["thinkingConfig"] == {"thinking_budget": THINKING_BUDGET["medium"]}
    assert (config["maxOutputTokens"], config["seed"], config["topP"]) == (50, 3, 0.5)
    assert first.usage.cached_prompt_tokens == 0 and first.usage.reasoning_tokens == 0
    assert 0 < second.usage.cached_prompt_tokens < second.usage.prompt_tokens
    assert second.usage.reasoning_tokens == THOUGHT_TOKENS
    assert second.usage.completion_tokens > THOUGHT_TOKENS  # candidates + thoughts
    gemini3, _ = model_for(fake, "google/gemini-3-flash")
    await gemini3.generate(HI, config=GenerateConfig(reasoning_effort="high"))
    assert fake.requests[-1]["generationConfig"]["thinkingConfig"] == {"thinking_level": "HIGH"}


async def test_request_shape_and_thought_signatures(fake: FakeGemini) -> None:
    model, _ = model_for(fake)
    tool = ToolSpec(name="lookup", description="Look up.",
                    parameters={"type": "object", "properties": {"q": {"type": "integer"}}})
    system = ChatMessage(role="system", content="Be brief.")
    ask = ChatMessage(role="user", content="call lookup")
    config = GenerateConfig(tools=(tool,))
    reply = await model.generate([system, ask], config=config)
    assert reply.tool_mode == "native" and reply.finish_reason == "tool_calls"
    (call,) = reply.tool_calls
    assert (call.name, call.arguments) == ("lookup", '{"q": 1}')
    body = fake.requests[-1]
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "lookup"
    history = [system, ask, ChatMessage(role="assistant", content="", tool_calls=(call,)),
               ChatMessage(role="tool", content="q is 1", tool_call_id=call.id)]
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer = await model.generate(
        history, config=GenerateConfig(tools=(tool,), response_schema=schema)
    )
    assert answer.text == '{"n": 0}'
    sent = fake.requests[-1]
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    made = sent["contents"][1]["parts"][0]
    assert made["functionCall"] == {"name": "lookup", "args": {"q": 1}}
    assert made["thoughtSignature"] == "c2ln"  # handed back as Gemini 3 requires
    assert sent["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "lookup", "response": {"result": "q is 1"}
    }
    assert sent["generationConfig"]["responseMimeType"] == "application/json"
    assert sent["generationConfig"]["responseJsonSchema"] == schema


async def test_429_retry_delay_is_honoured(fake: FakeGemini) -> None:
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}
    fake.fail_next(429, _error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", info))
    fake.fail_next(429, _error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"),
                   **{"Retry-After": "3"})
    model, sleeps = model_for(fake)
    assert (await model.generate(HI, config=GenerateConfig())).text == "Sure."
    assert sleeps.waits == [7.0, 3.0] and len(fake.requests) == 3
    assert model.meter.total().retries == 2
    assert retry_delay({"error": {"details": [info]}}) == 7.0


async def test_unavailable_is_retried(fake: FakeGemini) -> None:
    fake.fail_next(503, _error(503, "UNAVAILABLE", "The model is overloaded."))
    model, sleeps = model_for(fake)
    assert (await model.generate(HI, config=GenerateConfig())).text == "Sure."
    assert sleeps.waits == [0.5] and len(fake.requests) == 2


async def test_invalid_argument_is_sent_once(fake: FakeGemini) -> None:
    fake.fail_next(400, _error(400, "INVALID_ARGUMENT", f"API key {KEY} has a bad field"))
    model, sleeps = model_for(fake)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == "bad_request" and caught.value.attempts == 1
    assert caught.value.status_code == 400 and len(fake.requests) == 1 and sleeps.waits == []
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)


def test_try_without_key_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    (line,) = try_lines(monkeypatch, capsys, "google/x")
    assert "GEMINI_API_KEY" in line


def test_try_without_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a: None if name == "google.genai" else real(name, *a),
    )
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    (line,) = try_lines(monkeypatch, capsys, "google/x")
    assert "pip install 'confide[google]'" in line
