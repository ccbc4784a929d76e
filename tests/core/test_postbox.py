"""Postbox routing and visibility."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide.core import Channel, Message, Postbox, RoutingError

AGENTS = ("ann", "bob", "cat", "dan")


def test_dm_is_seen_only_by_sender_and_recipients() -> None:
    box = Postbox(AGENTS)
    m = box.post("ann", Channel.dm(), to=["bob"], text="hi bob")
    assert m.id == 0 and m.recipients == ("bob",)
    assert box.seen_by("ann") == [m] and box.seen_by("bob") == [m]
    assert box.seen_by("cat") == [] and box.seen_by("dan") == []
    assert box.inbox("ann") == [] and box.inbox("bob") == [m]


def test_group_goes_to_members_and_broadcast_to_all() -> None:
    box = Postbox(AGENTS)
    g = box.post("bob", Channel.group("meeting:m1", ["ann", "bob", "cat"]), text="when?")
    assert g.recipients == ("ann", "cat")
    b = box.post("dan", Channel.broadcast(), text="hello all")
    assert b.recipients == ("ann", "bob", "cat")
    assert box.seen_by("dan") == [b]
    assert box.seen_by("cat") == [g, b]


def test_routing_errors_name_the_party() -> None:
    box = Postbox(AGENTS)
    with pytest.raises(RoutingError, match="unknown recipient 'eve'"):
        box.post("ann", Channel.dm(), to=["eve"], text="x")
    with pytest.raises(RoutingError, match="'dan' is not a member of group 'g'"):
        box.post("dan", Channel.group("g", ["ann", "bob"]), text="x")
    with pytest.raises(RoutingError, match="names no recipient"):
        box.post("ann", Channel.dm(), text="x")
    with pytest.raises(RoutingError, match="duplicate agent"):
        Postbox(["a", "a"])


def test_agent_that_left_receives_nothing_and_cannot_send() -> None:
    box = Postbox(AGENTS)
    box.deactivate("cat")
    m = box.post("ann", Channel.broadcast(), text="still here?")
    assert m.recipients == ("bob", "dan")
    assert box.seen_by("cat") == []
    with pytest.raises(RoutingError, match="has left"):
        box.post("cat", Channel.dm(), to=["ann"], text="x")


def test_since_returns_only_new_messages() -> None:
    box = Postbox(AGENTS)
    box.post("ann", Channel.dm(), to=["bob"], text="1")
    seen = len(box.seen_by("bob"))
    m2 = box.post("cat", Channel.dm(), to=["bob"], text="2")
    assert box.seen_by("bob", since=seen) == [m2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(AGENTS),
            st.sampled_from(["dm", "group", "broadcast"]),
            st.sets(st.sampled_from(AGENTS), min_size=1),
        ),
        max_size=30,
    )
)
def test_every_view_is_exactly_the_visible_log(posts: list[tuple[str, str, set[str]]]) -> None:
    """Over random traffic, an agent's view is exactly the messages it sent or was a
    resolved recipient of, and recipients never include the sender."""
    delivered: list[Message] = []
    box = Postbox(AGENTS, on_deliver=delivered.append)
    for sender, kind, names in posts:
        if kind == "dm":
            targets = sorted(names - {sender}) or [a for a in AGENTS if a != sender][:1]
            box.post(sender, Channel.dm(), to=targets, text="x")
        elif kind == "group":
            box.post(sender, Channel.group("g", sorted(names | {sender})), text="x")
        else:
            box.post(sender, Channel.broadcast(), text="x")
    assert list(box.log) == delivered
    for agent in AGENTS:
        assert box.seen_by(agent) == [m for m in box.log if m.visible_to(agent)]
    assert all(m.sender not in m.recipients for m in box.log)
