"""Native tool calls in the model layer: OpenAI function calling on the
wire, the text fallback for endpoints without it (probed once, recorded as `tool_mode`),
scripted mock calls, the one-call rule of `generate_structured`, and logprobs (item 6)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from test_llm_openai_api import HI, FakeServer, Reply, err, model_for, ok, provider_of

from confide.llm import ChatMessage, GenerateConfig, MockModel, generate_structured
from confide.llm.tools import (
    CATALOGUE_HEAD,
    calls_from_text,
    text_call_schema,
    tools_in_prompt,
)
from confide.llm.types import ChatModel, ToolCall, ToolSpec

LOOKUP = ToolSpec(
    name="lookup",
    description="Finds an order.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"]},
)
TOOLS = GenerateConfig(tools=(LOOKUP,))


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeServer]]:
    """Start scripted servers (test_llm_openai_api's FakeServer); closed afterwards."""
    servers: list[FakeServer] = []

    def start(*replies: Reply) -> FakeServer:
        servers.append(FakeServer(list(replies)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def called(name: str, arguments: str, text: str | None = None, logprobs: bool = False) -> Reply:
    message: dict[str, Any] = {
        "role": "assistant", "content": text,
        "tool_calls": [{"id": "call_9", "type": "function",
                        "function": {"name": name, "arguments": arguments}}],
    }
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    if logprobs:
        choice["logprobs"] = {"content": [{"token": "x", "logprob": -0.5, "bytes": None,
                                           "top_logprobs": []}]}
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [choice], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    return Reply(body=json.dumps(body), headers={"Content-Type": "application/json"})


async def test_native_calls_go_as_functions_and_come_back_as_calls(serve: Any) -> None:
    server = serve(called("lookup", '{"order_id": "#1"}'))
    model, _ = model_for(server, tool_calls="native")
    history = [
        *HI,
        ChatMessage(role="assistant", content="",
                    tool_calls=(ToolCall(id="a1", name="lookup", arguments="{}"),)),
        ChatMessage(role="tool", tool_call_id="a1", content='{"status": "pending"}'),
    ]
    reply = await model.generate(history, config=TOOLS)
    expected = ToolCall(id="call_9", name="lookup", arguments='{"order_id": "#1"}')
    assert reply.tool_calls == [expected]
    assert reply.tool_mode == "native" and reply.text == ""
    body = server.requests[0][1]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "lookup", "description": "Finds an order.", "parameters": LOOKUP.parameters}}]
    assert body["tool_choice"] == "auto"
    assert body["messages"][1]["tool_calls"][0]["function"] == {"name": "lookup",
                                                                "arguments": "{}"}
    assert body["messages"][2] == {"role": "tool", "content": '{"status": "pending"}',
                                   "tool_call_id": "a1"}


async def test_an_endpoint_that_ignores_tools_gets_the_text_fallback(serve: Any) -> None:
    # the probe asks for a call and gets plain text: no function calling here
    server = serve(ok("I cannot call functions."),
                   ok('{"tool": "lookup", "arguments": {"order_id": "#2"}}'), ok("Hello."))
    model, _ = model_for(server)
    reply = await model.generate(HI, config=TOOLS)
    assert provider_of(model).tool_mode == "text"
    assert reply.tool_mode == "text" and reply.text == ""
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("lookup", {"order_id": "#2"})]
    probe, sent = server.requests[0][1], server.requests[1][1]
    assert probe["tools"][0]["function"]["name"] == "confide_probe"
    assert "tools" not in sent and CATALOGUE_HEAD in sent["messages"][0]["content"]
    plain = await model.generate(HI, config=TOOLS)  # no probe again; a message stays text
    assert len(server.requests) == 3 and plain.text == "Hello." and plain.tool_calls == []
    assert plain.tool_mode == "text"


async def test_an_endpoint_that_refuses_tools_gets_the_text_fallback(serve: Any) -> None:
    server = serve(err(400, "tools are not supported by this model"), ok("Hi."))
    model, _ = model_for(server)
    reply = await model.generate(HI, config=TOOLS)
    assert reply.tool_mode == "text" and len(server.requests) == 2


async def test_openai_is_known_to_have_function_calling(serve: Any) -> None:
    server = serve(called("lookup", "{}"))
    model, _ = model_for(server, spec="openai/gpt-4o-mini")
    reply = await model.generate(HI, config=TOOLS)
    assert reply.tool_mode == "native" and len(server.requests) == 1


async def test_logprobs_are_requested_recorded_and_dropped_where_refused(serve: Any) -> None:
    server = serve(called("lookup", "{}", logprobs=True))
    model, _ = model_for(server, tool_calls="native")
    reply = await model.generate(HI, config=TOOLS.model_copy(update={"logprobs": True}))
    assert server.requests[0][1]["logprobs"] is True
    assert reply.logprobs is not None and [(t.token, t.logprob) for t in reply.logprobs] == [
        ("x", -0.5)]
    refusing = serve(err(400, "logprobs are not supported with this model"), ok("fine"),
                     ok("again"))
    model, _ = model_for(refusing)
    config = GenerateConfig(logprobs=True)
    assert (await model.generate(HI, config=config)).text == "fine"
    assert (await model.generate(HI, config=config)).text == "again"
    sent = [body.get("logprobs") for _, body in refusing.requests]
    assert sent == [True, None, None]  # refused once, then never asked again


def test_requests_without_tools_hash_as_before() -> None:
    assert GenerateConfig().model_dump(mode="json") == {
        "temperature": 0.0, "max_tokens": None, "seed": None, "response_schema": None,
        "stop": []}
    assert ChatMessage(role="user", content="x").model_dump() == {"role": "user",
                                                                  "content": "x"}


def test_text_mode_prompt_and_parsing() -> None:
    history = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="assistant", content="",
                    tool_calls=(ToolCall(id="a", name="lookup", arguments='{"order_id": "1"}'),)),
        ChatMessage(role="tool", tool_call_id="a", content="pending"),
    ]
    shown = tools_in_prompt(history, [LOOKUP])
    assert shown[0].content.startswith("Be brief.\n\n" + CATALOGUE_HEAD)
    assert json.loads(shown[1].content) == {"tool": "lookup", "arguments": {"order_id": "1"}}
    assert shown[2] == ChatMessage(role="user", content="Result of lookup: pending")
    assert calls_from_text('{"tool": "lookup", "arguments": {"order_id": "1"}}', [LOOKUP])
    assert calls_from_text('{"tool": "unknown", "arguments": {}}', [LOOKUP]) == []
    assert calls_from_text('{"tool": "lookup", "note": 1}', [LOOKUP]) == []
    assert calls_from_text("hello", [LOOKUP]) == []
    schema = text_call_schema([LOOKUP], {"title": "R", "type": "object", "$defs": {"D": {}}})
    assert len(schema["anyOf"]) == 2 and "$defs" in schema and "$defs" not in schema["anyOf"][1]


class Message(BaseModel):
    message: str


def _ask(model: ChatModel) -> Any:
    return asyncio.run(generate_structured(
        model, HI, Message, config=TOOLS, max_attempts=3))


def test_generate_structured_takes_exactly_one_call_and_no_text() -> None:
    one = ToolCall(id="1", name="lookup", arguments='{"order_id": "#1"}')
    two = (one, one.model_copy(update={"id": "2"}))
    bad_args = ToolCall(id="3", name="lookup", arguments="[1]")
    model = MockModel([two, bad_args, one])
    result = _ask(model)
    assert result.ok and result.tool_call == one and result.value is None
    problems = [a.problem for a in result.attempts]
    assert problems[0] is not None and "you made 2 tool calls" in problems[0]
    assert problems[1] is not None and "must be a JSON object" in problems[1]
    text = _ask(MockModel(['{"message": "hi"}']))
    assert text.ok and text.value == Message(message="hi") and text.tool_call is None


def test_mock_scripts_calls_natively_or_as_text() -> None:
    call = ToolCall(id="1", name="lookup", arguments="{}")
    native = asyncio.run(MockModel([call]).generate(HI, config=TOOLS))
    assert native.tool_calls == [call] and native.tool_mode == "native"
    texted = asyncio.run(MockModel(['{"tool": "lookup", "arguments": {}}'], tool_mode="text")
                         .generate(HI, config=TOOLS))
    assert texted.tool_mode == "text" and texted.tool_calls[0].name == "lookup"
    with pytest.raises(Exception, match="offers no tools"):
        asyncio.run(MockModel([call]).generate(HI, config=GenerateConfig()))


def test_the_local_tool_grammar_compiles() -> None:
    """`local/` holds decoding to a call or a reply: llama.cpp's converter takes the union
    (anyOf, const, $defs) of Incognita's 15 tools and the agent's message schema."""
    pytest.importorskip("llama_cpp")
    from confide.envs.incognita.participants.agent_llm import agent_turn_model
    from confide.envs.incognita.prompting import tool_specs
    from confide.envs.incognita.tools import SERVICE_TOOLS
    from confide.llm.providers.llama_engine import json_gbnf, json_grammar

    specs = tool_specs(tuple(SERVICE_TOOLS))
    schema = text_call_schema(specs, agent_turn_model(("USER",)).model_json_schema())
    assert json_grammar(schema) is not None
    gbnf = json_gbnf(schema)
    assert all(f'\\"{name}\\"' in gbnf for name in SERVICE_TOOLS)
