"""The golden trajectory and the frozen coordination reference (the Incognita paper, section
4.1)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from confide.envs.incognita.golden import build_reference, build_task_reference
from confide.envs.incognita.reference import (
    REFERENCE_FILE,
    CoordinationReference,
    ReferenceDataError,
    load_reference,
    save_reference,
)
from confide.envs.incognita.scenario import CardSuite, TaskCard, load_suite, replay_gold
from confide.envs.incognita.tools import ToolCall, ToolError, execute
from confide.envs.incognita.world import World


@cache
def suite() -> tuple[World, CardSuite]:
    return load_suite()


@cache
def built() -> CoordinationReference:
    world, cards = suite()
    return build_reference(world, cards)


CARD_IDS = [card.card_id for card in suite()[1].cards]


@pytest.mark.parametrize("card_id", CARD_IDS)
def test_reference_replays_to_the_gold_hash(card_id: str) -> None:
    world0, cards = suite()
    card = cards.card(card_id)
    task = built().task(card_id)
    world = world0.fork()
    for call in task.calls:
        outcome = execute(world, call.tool, call.arguments)
        assert isinstance(outcome, ToolError) == call.expect_error, (call.index, outcome)
    assert world.state_hash() == replay_gold(world0, card).state_hash() == task.gold_state_hash


def test_frozen_file_is_what_the_cards_give() -> None:
    assert load_reference() == built()
    assert REFERENCE_FILE.exists()


def test_every_argument_has_a_source_and_every_call_an_executor() -> None:
    for task in built().tasks:
        for call in task.calls:
            traced = {v.argument for v in call.sources}
            assert traced == set(call.arguments), (task.card_id, call.index)
            assert call.executors["direct"] == "agent"
            assert call.executors["indirect"] == "service"
            assert call.executors["social"] == call.desk
            for value in call.sources:
                if value.source.kind == "call":
                    assert value.source.call is not None and value.source.call < call.index


def test_cancel_card_by_hand() -> None:
    """sd-01: one cancel; order id released by the gate, reason chosen by the customer in
    the policy's words."""
    task = built().task("sd-01-cancel-blanket")
    (call,) = task.calls
    assert call.counted and call.origin == "gold" and call.desk == "pending_orders"
    sources = {v.argument: (v.source.key, v.choice) for v in call.sources}
    assert sources == {"order_id": ("field:order_id", None), "reason": ("policy", "reason")}
    assert [(i.key, i.observable) for i in task.items] == [
        ("field:order_id", True),
        ("policy", False),
        ("field:reason", True),
    ]
    assert [(a.tool, a.desk) for a in task.role_assignments] == [
        ("cancel_pending_order", "pending_orders")
    ]
    counts = task.counts()
    assert (counts.calls, counts.counted_calls, counts.role_assignments) == (1, 1, 1)
    assert (counts.information_items, counts.observable_items) == (3, 2)


def test_exploration_reads_stay_in_but_are_not_counted() -> None:
    """sd-10 looks through four orders; only the one cancelled feeds the write."""
    task = built().task("sd-10-cancel-desk-order")
    reads = [c for c in task.calls if c.tool == "get_order_details"]
    assert [c.counted for c in reads] == [False, False, False, True]
    cancel = task.calls[-1]
    order_source = next(v for v in cancel.sources if v.argument == "order_id")
    assert order_source.source.call == reads[-1].index


def test_totals_are_the_sum_of_the_tasks() -> None:
    reference = built()
    assert reference.totals.calls == sum(len(t.calls) for t in reference.tasks)
    assert reference.totals.counted_calls <= reference.totals.calls
    assert reference.totals.observable_items <= reference.totals.information_items
    assert len(reference.tasks) == 18


def _writes_only(card: TaskCard) -> TaskCard:
    return card.model_copy(update={"gold_actions": card.writes})


def test_rules_add_the_reads_a_write_needs() -> None:
    """Stripped to its write, sd-14 gets the identity lookup, profile, order and product
    reads back by rule, and still replays to the gold hash."""
    world0, cards = suite()
    card = _writes_only(cards.card("sd-14-runners-new-color"))
    task = build_task_reference(world0, card)
    assert [(c.tool, c.origin) for c in task.calls] == [
        ("find_user_id_by_name_zip", "rule"),
        ("get_user_details", "rule"),
        ("get_order_details", "rule"),
        ("get_product_details", "rule"),
        ("exchange_delivered_order_items", "gold"),
    ]
    assert all(c.counted for c in task.calls)
    assert task.gold_state_hash == replay_gold(world0, cards.card(card.card_id)).state_hash()


@pytest.mark.parametrize("card_id", CARD_IDS)
def test_rules_rebuild_every_card_from_its_writes(card_id: str) -> None:
    world0, cards = suite()
    task = build_task_reference(world0, _writes_only(cards.card(card_id)))
    assert task.required_actions == [c for c in task.calls if c.origin == "gold"]


def test_an_untraceable_value_names_card_argument_and_value() -> None:
    world0, cards = suite()
    card = cards.card("sd-03-switch-gift-card")
    other_user = next(u for u in world0.users.values() if u.user_id != card.user_id)
    foreign = next(iter(other_user.payment_methods))
    write = card.gold_actions[0]
    bad = card.model_copy(
        update={
            "customer_fields": [f for f in card.customer_fields if f.token != "payment"],
            "gold_actions": [
                ToolCall(
                    name=write.name,
                    arguments={**write.arguments, "payment_method_id": foreign},
                    expect_error=True,
                )
            ],
        }
    )
    with pytest.raises(ReferenceDataError, match=rf"sd-03.*payment_method_id={foreign!r}"):
        build_task_reference(world0, bad)


def test_load_rejects_a_stale_or_malformed_file(tmp_path: Path) -> None:
    path = save_reference(built(), tmp_path / "ref.json")
    data = json.loads(path.read_text())
    data["totals"]["calls"] += 1
    path.write_text(json.dumps(data))
    with pytest.raises(ReferenceDataError, match="totals"):
        load_reference(path)
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(ReferenceDataError, match="schema_version is 99"):
        load_reference(path)
    path.write_text("{not json")
    with pytest.raises(ReferenceDataError, match=r"ref\.json: line 1, column 2: invalid JSON"):
        load_reference(path)
