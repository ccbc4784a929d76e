"""Incognita behaviours pinned: a gold call whose expected failure depends on an
earlier gold write is replayed after that write, and the gate's keyword matcher breaks a
tie between two cues at the same position by the order of the tokens."""

from __future__ import annotations

from typing import Any

import pytest

from confide.envs.incognita.gate import match_field
from confide.envs.incognita.scenario import load_suite
from confide.envs.incognita.tools import ToolCall
from confide.envs.incognita.transform import gold_actions
from confide.envs.incognita.world import World

PENDING = "#W4114088"  # Anders Holloway's pending order


@pytest.fixture(scope="module")
def world() -> World:
    world, _ = load_suite()
    return world


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def test_a_call_that_fails_only_after_an_earlier_gold_write_is_marked(world: World) -> None:
    before = world.state_hash()
    cancel = _call("cancel_pending_order", order_id=PENDING, reason="no longer needed")
    again = _call("cancel_pending_order", order_id=PENDING, reason="ordered by mistake")
    calls = gold_actions(world, [_call("get_order_details", order_id=PENDING), cancel, again])
    # on a fresh fork the second cancel would succeed: it fails because the first one ran
    assert [c.expect_error for c in calls] == [False, False, True]
    assert [c.expect_error for c in gold_actions(world, [again])] == [False]
    assert world.state_hash() == before  # replayed on a fork, never on the world itself


def test_a_tie_at_one_position_goes_to_the_earlier_token() -> None:
    # "order" (a token with no cue list: its name is its cue) and order_id's "order id"
    # both start at the same character of the message
    text = "Could you tell me the order id please?"
    assert match_field(text, ["order_id", "order"]) == "order_id"
    assert match_field(text, ["order", "order_id"]) == "order"
    # an earlier position still beats list order
    assert match_field("Your email, then the order id?", ["order_id", "email"]) == "email"
