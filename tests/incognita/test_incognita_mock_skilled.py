"""``mock/incognita-skilled``: the test/demo agent of middling skill solves a card it does
not lapse on in every condition through the real model path, fails exactly where its
seeded lapse says, is deterministic, and knows only the shipped suite."""

from __future__ import annotations

import pytest
from _incognita_env_support import CONDITIONS, run, task, tasks

from confide.envs.incognita.participants.mock_skilled import (
    LAPSE_RATE,
    SkilledMockError,
    lapse_for,
    skilled_reply,
)
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolKind
from confide.llm import ChatMessage, GenerateConfig

SKILLED = "mock/incognita-skilled"


@pytest.mark.parametrize("condition", CONDITIONS)
def test_an_unlapsed_card_is_solved_through_the_holders(condition: str) -> None:
    the_task = task("sd-18-cancel-exchange-and-ask")
    assert lapse_for(the_task.card, condition, 0) is None
    episode = run(the_task, condition, SKILLED)
    assert episode.row["success"] == 1 and episode.row["ended"] == "final"
    executed = [e.fields() for e in episode.env("tool_executed") if e.data.ok]
    assert [d["tool"] for d in executed] == [c.name for c in the_task.card.gold_actions]
    proposers = {d["proposer"] for d in executed}
    assert (proposers == {"AGENT"}) == (condition == "direct")
    assert episode.env("invalid_action") == []


def test_a_lapse_fails_the_card_where_it_says() -> None:
    the_task = task("sd-05-return-whole-order")
    assert lapse_for(the_task.card, "social", 0) == "stop_early"
    episode = run(the_task, "social", SKILLED)
    assert episode.row["success"] == 0
    tools = [e.data.tool for e in episode.env("tool_executed")]
    assert all(SERVICE_TOOLS[t].kind is ToolKind.READ for t in tools) and tools


def test_replies_are_deterministic() -> None:
    first, second = (run(task("sd-07-pay-with-gift-card"), "social", SKILLED) for _ in range(2))
    assert [m.text for m in first.postbox_log] == [m.text for m in second.postbox_log]


def test_lapse_rates_follow_the_conditions_and_the_seed_varies_them() -> None:
    cards = [t.card for t in tasks()]
    draws = {c: [lapse_for(card, c, seed) for card in cards for seed in range(60)]
             for c in CONDITIONS}
    for condition, lapses in draws.items():
        rate = sum(lapse is not None for lapse in lapses) / len(lapses)
        assert abs(rate - LAPSE_RATE[condition]) < 0.06, condition
    assert "wrong_desk" in draws["social"] and "wrong_desk" not in draws["indirect"]
    assert [lapse_for(c, "social", 0) for c in cards] != [lapse_for(c, "social", 1) for c in cards]


def test_an_unknown_opening_line_is_an_error() -> None:
    messages = [ChatMessage(role="system", content="<tools>"),
                ChatMessage(role="user", content="USER: Hello, I need help with a thing.")]
    config = GenerateConfig(response_schema={"title": "AgentTurn"})
    with pytest.raises(SkilledMockError, match="opens no card"):
        skilled_reply(messages, config, 0)
