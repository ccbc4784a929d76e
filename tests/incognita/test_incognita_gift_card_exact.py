"""A gift card whose balance exactly equals the amount is accepted (item 5; tau2
parity: tau2-bench refuses a gift card only when its balance is below the amount). One
test per tool that checks a gift card's balance: payment change, item modification and
exchange."""

from __future__ import annotations

from typing import Any

from test_incognita_domain_tools import BLUE, RED, balance, make_world, run

from confide.envs.incognita.tools import ToolError
from confide.envs.incognita.world import World


def _with_balance(user: str, card: str, amount: float) -> World:
    """The hand-built world of test_incognita_domain_tools with one gift card's balance set."""
    data = make_world().model_dump()
    data["users"][user]["payment_methods"][card]["balance"] = amount
    return World.model_validate(data)


def _accepted(result: Any) -> dict[str, Any]:
    """The order a tool returned; fails with the tool's error when it refused."""
    assert not isinstance(result, ToolError), f"refused: {result}"
    assert isinstance(result, dict)
    return result


def test_payment_change_to_a_card_holding_exactly_the_total() -> None:
    """#W0000002 is paid 20.2 by credit card; the gift card holds 20.2: accepted, the
    card pays 20.2 (balance 0.0) and the credit card is refunded."""
    world = _with_balance("zoe_nunez_1", "gift_card_1", 20.2)
    order = _accepted(run(
        world, "modify_pending_order_payment", order_id="#W0000002",
        payment_method_id="gift_card_1",
    ))
    assert order["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 20.2, "payment_method_id": "gift_card_1"},
        {"transaction_type": "refund", "amount": 20.2, "payment_method_id": "credit_card_1"},
    ]
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 0.0


def test_item_modification_paid_by_a_card_holding_exactly_the_difference() -> None:
    """Red kettle (10.1) -> blue kettle (20.2): difference 20.2 - 10.1 == 10.1 exactly in
    binary floating point, and gift_card_1 holds 10.1: accepted, balance 0.0."""
    world = make_world()
    assert 20.2 - 10.1 == balance(world, "zoe_nunez_1", "gift_card_1") == 10.1
    order = _accepted(run(
        world, "modify_pending_order_items", order_id="#W0000002", item_ids=[RED],
        new_item_ids=[BLUE], payment_method_id="gift_card_1",
    ))
    assert order["payment_history"][-1] == {
        "transaction_type": "payment", "amount": 10.1, "payment_method_id": "gift_card_1"
    }
    assert order["status"] == "pending (item modified)"
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 0.0


def test_exchange_paid_by_a_card_holding_exactly_the_difference() -> None:
    """Delivered #W0000003: one red kettle -> blue, difference 10.1 = the card's balance:
    accepted and recorded; no money moves until the exchange is processed."""
    world = make_world()
    order = _accepted(run(
        world, "exchange_delivered_order_items", order_id="#W0000003", item_ids=[RED],
        new_item_ids=[BLUE], payment_method_id="gift_card_1",
    ))
    assert order["status"] == "exchange requested"
    assert order["exchange_price_difference"] == 10.1
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 10.1
