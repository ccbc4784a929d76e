"""The postbox pinned by behaviour (bench/mutation.py): names read at run time (from a
file, a model's reply) route like the same names written in code, every group member
must be registered, an agent's inbox is everything others sent it, and a large roster is
accepted."""

from __future__ import annotations

import json

import pytest

from confide.core import Channel, Postbox, RoutingError


def _runtime(text: str) -> str:
    """An equal string that is not the same object (as a name parsed from a file is)."""
    copy = "".join(list(text))
    assert copy == text and copy is not text
    return copy


def test_channels_and_names_read_at_run_time_route_like_literal_ones() -> None:
    box = Postbox(("ann", "bob", "cat"))
    dm = Channel.model_validate({"kind": _runtime("dm")})
    assert box.post(_runtime("ann"), dm, to=["bob"], text="hi").recipients == ("bob",)
    group = Channel.model_validate(
        {"kind": _runtime("group"), "name": "g", "members": ["ann", "bob"]}
    )
    sent = box.post(_runtime("bob"), group, text="to the group")
    assert sent.recipients == ("ann",)  # never back to its sender
    assert [m.text for m in box.inbox(_runtime("bob"))] == ["hi"]
    parsed = Channel.model_validate(json.loads('{"kind": "broadcast"}'))
    assert box.post("cat", parsed, text="all").recipients == ("ann", "bob")


def test_an_inbox_holds_what_others_sent_whatever_their_names_sort_as() -> None:
    box = Postbox(("ann", "bob", "cat"))
    box.post("ann", Channel.dm(), to=["bob"], text="from ann")
    box.post("bob", Channel.dm(), to=["ann"], text="from bob")
    box.post("cat", Channel.dm(), to=["bob"], text="from cat")
    assert [m.text for m in box.inbox("bob")] == ["from ann", "from cat"]
    assert [m.text for m in box.inbox("bob", 2)] == ["from cat"]
    assert [m.text for m in box.seen_by("bob")] == ["from ann", "from bob", "from cat"]


def test_a_group_naming_an_unregistered_member_is_refused() -> None:
    box = Postbox(("ann", "bob"))
    with pytest.raises(RoutingError, match="unknown group member 'zed'"):
        box.post("ann", Channel.group("g", ["ann", "bob", "zed"]), text="x")
    assert box.log == ()


def test_a_message_outside_rounds_is_round_zero_turn_zero() -> None:
    box = Postbox(("ann", "bob"))
    message = box.post("ann", Channel.dm(), to=["bob"], text="x")
    assert (message.id, message.round, message.turn) == (0, 0, 0)


def test_the_active_agents_are_a_tuple_in_roster_order() -> None:
    box = Postbox(("ann", "bob", "cat"))
    box.deactivate("bob")
    assert box.active_agents == ("ann", "cat")


def test_a_large_roster_without_duplicates_is_accepted() -> None:
    names = [f"agent{i}" for i in range(300)]
    assert len(Postbox(names).agents) == 300
    with pytest.raises(RoutingError, match="duplicate"):
        Postbox([*names, "agent7"])
