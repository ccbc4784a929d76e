"""The mock-scripted skilled agent, in the direct condition,
solves a card through native tool calls (the Incognita paper §3.3, A.1: exactly one tool call,
no text alongside), and the trace shows each call as a call; under an endpoint without
function calling the same card is solved through the text fallback, which the trace
records."""

from __future__ import annotations

from typing import Any

import pytest
from _incognita_env_support import run, task

from confide.core.trace import ModelCall
from confide.envs.incognita.participants.mock_skilled import (
    SKILLED_MOCK_NAME,
    lapse_for,
    register_skilled_mock,
)
from confide.runner.models import RunModels

CARD = "sd-01-cancel-blanket"


def _agent_calls(episode: Any) -> list[ModelCall]:
    return [e for e in episode.trace.events if isinstance(e, ModelCall) and e.seat == "AGENT"]


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_skilled_mock_solves_a_card_through_tool_calls(tool_mode: str) -> None:
    the_task = task(CARD)
    assert lapse_for(the_task.card, "direct", 0) is None  # this episode does not lapse
    register_skilled_mock()
    models = RunModels(options={"tool_mode": tool_mode})
    episode = run(the_task, "direct", f"mock/{SKILLED_MOCK_NAME}", models=models)
    assert episode.row["success"] == 1 and episode.row["ended"] == "final"
    calls = _agent_calls(episode)
    made = [c for c in calls if c.completion and c.completion.get("tool_calls")]
    gold = [a.name for a in the_task.card.gold_actions]
    assert [c.completion["tool_calls"][0]["name"] for c in made if c.completion] == gold
    assert all(c.completion and c.completion["tool_mode"] == tool_mode for c in calls)
    assert all(c.completion and c.completion["text"] == "" for c in made)
    executed = [e.data.tool for e in episode.env("tool_executed")]
    assert executed == gold
    if tool_mode == "native":  # the calls and their results went back as function turns
        last = calls[-1].messages
        assert sum(1 for m in last if m.get("tool_calls")) == len(gold)
        assert sum(1 for m in last if m["role"] == "tool") == len(gold)
    else:  # the request described the tools in its prompt instead
        assert "tools" in calls[0].config
