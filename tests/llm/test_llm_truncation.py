"""A reply cut off at the token limit is invalid output of its own cause, and is counted
per seat."""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel

from confide.core.trace import ModelCall
from confide.core.truncation import truncated_replies
from confide.llm import GenerateConfig, MockModel, generate_structured
from confide.llm.types import ChatMessage


class Answer(BaseModel):
    answer: str


def test_a_cut_off_reply_is_truncated_and_a_malformed_one_is_format() -> None:
    long = json.dumps({"answer": "x" * 200})
    model = MockModel(["not json", long, json.dumps({"answer": "ok"})])
    result = asyncio.run(
        generate_structured(
            model, [ChatMessage(role="user", content="q")], Answer,
            config=GenerateConfig(max_tokens=20), max_attempts=3,
        )
    )
    assert result.ok and result.value == Answer(answer="ok")
    assert [a.cause for a in result.attempts] == ["format", "truncated", None]
    assert result.attempts[1].completion.finish_reason == "length"
    assert "cut off by the token limit" in (result.attempts[1].problem or "")


def _call(seat: str | None, finish: str | None) -> ModelCall:
    completion = None if finish is None else {"model": "m", "text": "", "finish_reason": finish}
    return ModelCall(seat=seat, model="m", messages=[], completion=completion)


def test_truncated_replies_are_counted_per_seat() -> None:
    events = [
        _call("a", "length"), _call("a", "stop"), _call("a", "length"),
        _call("b", "stop"), _call("b", None), _call(None, "length"), _call("c", "length"),
    ]
    counts = truncated_replies(events)
    assert counts == {"a": 2, "c": 1}
    assert counts["b"] == 0
