"""The structured-output repair loop: exact feedback, bounded attempts, typed failure."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from confide.llm import (
    ChatMessage,
    Completion,
    GenerateConfig,
    MockModel,
    ModelCallRecord,
    ModelError,
    generate_structured,
    get_model,
    parse_reply,
    with_recorder,
)
from confide.llm.structured import extract_json_text

ASK = [ChatMessage(role="user", content="Propose a meeting as JSON.")]


class Meeting(BaseModel):
    day: int = Field(ge=1, le=5)
    title: str


class Capture:
    """A reply function that records the conversations it was sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.seen: list[list[ChatMessage]] = []
        self.configs: list[GenerateConfig] = []

    def __call__(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        self.seen.append(messages)
        self.configs.append(config)
        return self.replies[len(self.seen) - 1]


async def test_one_malformed_reply_then_fixed() -> None:
    script = Capture(['{"day": 2, "title": "sync"', '{"day": 2, "title": "sync"}'])
    result = await generate_structured(MockModel(script), ASK, Meeting)
    assert result.ok and result.value == Meeting(day=2, title="sync") and result.error is None
    assert [a.problem is None for a in result.attempts] == [False, True]
    first = result.attempts[0].problem or ""
    assert "not valid JSON" in first and "line 1, column 27" in first
    retry = script.seen[1]
    assert retry[:1] == ASK
    assert retry[1] == ChatMessage(role="assistant", content='{"day": 2, "title": "sync"')
    assert retry[2].role == "user" and "line 1, column 27" in retry[2].content
    assert script.configs[0].response_schema == Meeting.model_json_schema()


async def test_all_malformed_is_a_typed_failure_with_every_attempt() -> None:
    replies = ["not json", '{"day": 9, "title": "x"}', '{"day": 1}']
    model = get_model("mock/bad", outputs=replies)
    result = await generate_structured(model, ASK, Meeting, max_attempts=3)
    assert not result.ok and result.value is None
    assert [a.completion.text for a in result.attempts] == replies
    assert [a.attempt for a in result.attempts] == [1, 2, 3]
    problems = [a.problem or "" for a in result.attempts]
    assert "not valid JSON" in problems[0]
    assert "field `day`: Input should be less than or equal to 5 (got 9)" in problems[1]
    assert "field `title`: Field required" in problems[2]
    assert result.error == problems[2]
    dumped = result.model_dump(mode="json")
    assert dumped["ok"] is False and len(dumped["attempts"]) == 3


async def test_attempt_numbers_reach_the_recorder() -> None:
    records: list[ModelCallRecord] = []
    base = get_model("mock/r", outputs=["{}", '{"day": 3, "title": "t"}'])
    result = await generate_structured(with_recorder(base, records.append), ASK, Meeting)
    assert result.ok and [r.attempt for r in records] == [1, 2]
    assert len(records[1].messages) == 3


async def test_cut_off_and_empty_replies_are_explained() -> None:
    model = get_model(
        "mock/cut", outputs=['{"day": 1, "title": "a long title that will not fit"}'], cycle=True
    )
    result = await generate_structured(
        model, ASK, Meeting, config=GenerateConfig(max_tokens=4), max_attempts=2
    )
    assert not result.ok
    assert result.attempts[0].completion.finish_reason == "length"
    assert "cut off by the token limit" in (result.error or "")
    empty = get_model("mock/e", outputs=["", "   "])
    result = await generate_structured(empty, ASK, Meeting, max_attempts=2)
    assert result.error == "your reply was empty"


async def test_provider_errors_propagate() -> None:
    model = get_model("mock/x", outputs=[])
    try:
        await generate_structured(model, ASK, Meeting)
    except ModelError as exc:
        assert exc.kind == "script_exhausted"
    else:
        raise AssertionError("a provider failure must not be reported as a bad answer")


async def test_structured_under_mock_json() -> None:
    result = await generate_structured(get_model("mock/json"), ASK, Meeting)
    assert result.ok and result.value == Meeting(day=1, title="")


def test_extraction_and_parse() -> None:
    assert extract_json_text('Sure!\n```json\n{"a": 1}\n```\nDone.') == '{"a": 1}'
    assert extract_json_text('Here it is: {"a": {"b": 2}} hope that helps') == '{"a": {"b": 2}}'
    assert extract_json_text("  [1, 2] ") == "[1, 2]"
    reply = Completion(model="mock/x", text='The answer: {"day": 5, "title": "ok"}')
    assert parse_reply(reply, Meeting) == Meeting(day=5, title="ok")
    wrong = parse_reply(Completion(model="mock/x", text="[1]"), Meeting)
    assert isinstance(wrong, str) and "the top-level value" in wrong


def test_every_reader_of_model_json_bounds_its_integers() -> None:
    """An integer over 4,300 digits is invalid output in each reader of
    model JSON (the structured parser, tool-call arguments, text-mode tool calls and
    Incognita's embedded requests), never a ValueError that ends the episode."""
    import sys

    from confide.envs.incognita.participants.scripted import embedded_request
    from confide.llm.structured import MAX_INT_DIGITS, call_arguments, loads_reply
    from confide.llm.tools import calls_from_text
    from confide.llm.types import ToolCall, ToolSpec

    long = "8" * (MAX_INT_DIGITS + 1)
    assert loads_reply("[" + "8" * MAX_INT_DIGITS + "]") == [int("8" * MAX_INT_DIGITS)]
    with pytest.raises(json.JSONDecodeError, match="4301 digits") as caught:
        loads_reply('{"a": 1, "b": ' + long + "}")
    assert caught.value.pos == len('{"a": 1, "b": ')
    problem = call_arguments(ToolCall(id="c", name="refund", arguments='{"n": ' + long + "}"))
    assert isinstance(problem, str) and "4301 digits" in problem
    tools = [ToolSpec(name="refund", description="Refund an order.")]
    assert calls_from_text('{"tool": "refund", "arguments": {"n": ' + long + "}}", tools) == []
    assert embedded_request('please {"tool": "refund", "arguments": {"n": ' + long + "}}") is None
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # a lower limit set by the process is held too
    try:
        with pytest.raises(json.JSONDecodeError, match="1000 digits"):
            loads_reply("1" * 1000)
    finally:
        sys.set_int_max_str_digits(before)
