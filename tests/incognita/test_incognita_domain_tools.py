"""Every tool precondition (error code and message) and effect, on a hand-built world."""

from __future__ import annotations

from typing import Any

import pytest

from confide.envs.incognita.tools import (
    SERVICE_TOOLS,
    TAU2_TOOLS,
    TAU2_UPSTREAM_TOOLS,
    TOOL_DESKS,
    Desk,
    ToolError,
    ToolKind,
    execute,
    result_text,
)
from confide.envs.incognita.world import GiftCard, World

KETTLE, LAMP = "1000000001", "1000000002"
RED, BLUE, GREEN = "2000000001", "2000000002", "2000000003"  # kettle; green out of stock
LINEN, GLASS = "2000000011", "2000000012"  # lamp
ADDRESS = {
    "address1": "12 Fern Way",
    "address2": "",
    "city": "Tacoma",
    "country": "USA",
    "state": "WA",
    "zip": "98402",
}
NEW_ADDRESS = {
    "address1": "9 Quarry Road",
    "address2": "Unit 3",
    "city": "Boise",
    "state": "ID",
    "country": "USA",
    "zip": "83702",
}


def _line(product: str, item: str) -> dict[str, Any]:
    prices = {RED: 10.1, BLUE: 20.2, GREEN: 15.0, LINEN: 10.1, GLASS: 45.55}
    options = {
        RED: {"color": "red"},
        BLUE: {"color": "blue"},
        GREEN: {"color": "green"},
        LINEN: {"shade": "linen"},
        GLASS: {"shade": "glass"},
    }
    name = "Kettle" if product == KETTLE else "Lamp"
    return {
        "name": name,
        "product_id": product,
        "item_id": item,
        "price": prices[item],
        "options": options[item],
    }


def _order(oid: str, uid: str, status: str, lines: list[Any], pays: list[Any]) -> dict[str, Any]:
    shipped = status not in ("pending", "pending (item modified)")
    return {
        "order_id": oid,
        "user_id": uid,
        "address": ADDRESS,
        "items": lines,
        "status": status,
        "fulfillments": (
            [{"tracking_id": ["111122223333"], "item_ids": [line["item_id"] for line in lines]}]
            if shipped
            else []
        ),
        "payment_history": [
            {"transaction_type": kind, "amount": amount, "payment_method_id": method}
            for kind, amount, method in pays
        ],
    }


def make_world() -> World:
    """Two customers, two products, seven orders (see the order comments)."""

    def variant(item: str, product: str, available: bool = True) -> dict[str, Any]:
        line = _line(product, item)
        return {
            "item_id": item,
            "options": line["options"],
            "available": available,
            "price": line["price"],
        }

    products = {
        KETTLE: {
            "name": "Kettle",
            "product_id": KETTLE,
            "variants": {
                RED: variant(RED, KETTLE),
                BLUE: variant(BLUE, KETTLE),
                GREEN: variant(GREEN, KETTLE, available=False),
            },
        },
        LAMP: {
            "name": "Lamp",
            "product_id": LAMP,
            "variants": {LINEN: variant(LINEN, LAMP), GLASS: variant(GLASS, LAMP)},
        },
    }
    users = {
        "zoe_nunez_1": {
            "user_id": "zoe_nunez_1",
            "name": {"first_name": "Zoë", "last_name": "Núñez"},
            "address": ADDRESS,
            "email": "zoe.nunez@example.com",
            "payment_methods": {
                "credit_card_1": {
                    "source": "credit_card",
                    "id": "credit_card_1",
                    "brand": "visa",
                    "last_four": "1234",
                },
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 10.1},
                "paypal_1": {"source": "paypal", "id": "paypal_1"},
            },
            "orders": ["#W0000001", "#W0000002", "#W0000003"],
        },
        "bo_li_2": {
            "user_id": "bo_li_2",
            "name": {"first_name": "Bo", "last_name": "Li"},
            "address": {**ADDRESS, "zip": "10001"},
            "email": "bo.li@example.com",
            "payment_methods": {
                "credit_card_2": {
                    "source": "credit_card",
                    "id": "credit_card_2",
                    "brand": "amex",
                    "last_four": "9876",
                },
                "gift_card_3": {"source": "gift_card", "id": "gift_card_3", "balance": 50.0},
            },
            "orders": ["#W0000004", "#W0000005", "#W0000006", "#W0000007"],
        },
    }
    orders = [
        # pending, paid by gift card
        _order(
            "#W0000001",
            "zoe_nunez_1",
            "pending",
            [_line(KETTLE, BLUE)],
            [("payment", 20.2, "gift_card_1")],
        ),
        # pending, two products, paid by credit card
        _order(
            "#W0000002",
            "zoe_nunez_1",
            "pending",
            [_line(KETTLE, RED), _line(LAMP, LINEN)],
            [("payment", 20.2, "credit_card_1")],
        ),
        # delivered, two units of the red kettle
        _order(
            "#W0000003",
            "zoe_nunez_1",
            "delivered",
            [_line(KETTLE, RED), _line(KETTLE, RED), _line(LAMP, GLASS)],
            [("payment", 65.75, "paypal_1")],
        ),
        # already modified once
        _order(
            "#W0000004",
            "bo_li_2",
            "pending (item modified)",
            [_line(LAMP, GLASS)],
            [("payment", 10.1, "credit_card_2"), ("payment", 35.449999999999996, "credit_card_2")],
        ),
        _order(
            "#W0000005",
            "bo_li_2",
            "processed",
            [_line(KETTLE, BLUE)],
            [("payment", 20.2, "credit_card_2")],
        ),
        _order(
            "#W0000006",
            "bo_li_2",
            "pending",
            [_line(LAMP, LINEN)],
            [("payment", 10.1, "credit_card_2")],
        ),
        _order(
            "#W0000007",
            "bo_li_2",
            "pending",
            [_line(LAMP, GLASS)],
            [("payment", 45.55, "credit_card_2")],
        ),
    ]
    return World.model_validate(
        {"users": users, "orders": {o["order_id"]: o for o in orders}, "products": products}
    )


@pytest.fixture
def world() -> World:
    return make_world()


def run(world: World, name: str, **arguments: Any) -> Any:
    return execute(world, name, arguments, TAU2_TOOLS)


def balance(world: World, user: str, card: str) -> float:
    method = world.users[user].payment_methods[card]
    assert isinstance(method, GiftCard)
    return method.balance


# ----- preconditions: (tool, arguments, code, exact message) ---------------------------------

ERRORS: list[tuple[str, dict[str, Any], str, str]] = [
    ("find_user_id_by_email", {"email": "nobody@example.com"}, "user_not_found",
     "no customer with email 'nobody@example.com'"),
    ("find_user_id_by_name_zip", {"first_name": "Zoe", "last_name": "Nunez", "zip": "98403"},
     "user_not_found", "no customer named Zoe Nunez with zip '98403'"),
    ("get_user_details", {"user_id": "nobody_0"}, "user_not_found",
     "no customer with user id 'nobody_0'"),
    ("modify_user_address", {"user_id": "nobody_0", **NEW_ADDRESS}, "user_not_found",
     "no customer with user id 'nobody_0'"),
    ("get_order_details", {"order_id": "#W9999999"}, "order_not_found",
     "no order with id '#W9999999'"),
    ("get_product_details", {"product_id": RED}, "product_not_found",
     f"no product type with id '{RED}'"),
    ("get_item_details", {"item_id": KETTLE}, "item_not_found", f"no item with id '{KETTLE}'"),
    ("cancel_pending_order", {"order_id": "#W9999999", "reason": "no longer needed"},
     "order_not_found", "no order with id '#W9999999'"),
    ("cancel_pending_order", {"order_id": "#W0000005", "reason": "no longer needed"},
     "order_not_pending",
     "order #W0000005 is 'processed'; only a pending order can be cancelled"),
    ("cancel_pending_order", {"order_id": "#W0000004", "reason": "no longer needed"},
     "order_not_pending",
     "order #W0000004 is 'pending (item modified)'; only a pending order can be cancelled"),
    ("cancel_pending_order", {"order_id": "#W0000002", "reason": "too slow"},
     "invalid_cancel_reason",
     "reason 'too slow' is not accepted; use 'no longer needed' or 'ordered by mistake'"),
    ("modify_pending_order_address", {"order_id": "#W9999999", **NEW_ADDRESS},
     "order_not_found", "no order with id '#W9999999'"),
    ("modify_pending_order_address", {"order_id": "#W0000003", **NEW_ADDRESS},
     "order_not_pending",
     "order #W0000003 is 'delivered'; only a pending order can be modified"),
    ("modify_pending_order_payment", {"order_id": "#W0000005", "payment_method_id": "gift_card_3"},
     "order_not_pending",
     "order #W0000005 is 'processed'; only a pending order can be modified"),
    ("modify_pending_order_payment",
     {"order_id": "#W0000002", "payment_method_id": "credit_card_2"},
     "payment_method_not_found", "customer 'zoe_nunez_1' has no payment method 'credit_card_2'"),
    ("modify_pending_order_payment", {"order_id": "#W0000004", "payment_method_id": "gift_card_3"},
     "payment_history_not_single",
     "order #W0000004 has 2 payment-history entries; the payment method can be changed only "
     "while it has exactly one payment"),
    ("modify_pending_order_payment",
     {"order_id": "#W0000002", "payment_method_id": "credit_card_1"},
     "same_payment_method", "order #W0000002 is already paid with credit_card_1"),
    ("modify_pending_order_payment", {"order_id": "#W0000002", "payment_method_id": "gift_card_1"},
     "insufficient_gift_card_balance",
     "gift card gift_card_1 holds 10.1, not enough for the order total of 20.2"),
    ("modify_pending_order_items",
     {"order_id": "#W0000004", "item_ids": [GLASS], "new_item_ids": [LINEN],
      "payment_method_id": "credit_card_2"},
     "order_not_pending",
     "order #W0000004 is 'pending (item modified)'; only a pending order can be modified"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [BLUE], "new_item_ids": [RED],
      "payment_method_id": "credit_card_1"},
     "item_not_in_order",
     f"order #W0000002 holds 0 unit(s) of item '{BLUE}', fewer than the 1 requested"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [RED, LINEN], "new_item_ids": [BLUE],
      "payment_method_id": "credit_card_1"},
     "item_count_mismatch", "2 item(s) to replace but 1 replacement(s) given"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [RED], "new_item_ids": [RED],
      "payment_method_id": "credit_card_1"},
     "same_item", f"replacement for item '{RED}' must be a different item"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [RED], "new_item_ids": [GLASS],
      "payment_method_id": "credit_card_1"},
     "variant_not_found", f"item '{GLASS}' is not a variant of product 'Kettle' ('{KETTLE}')"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [RED], "new_item_ids": [GREEN],
      "payment_method_id": "credit_card_1"},
     "variant_unavailable", f"item '{GREEN}' is not available"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [RED], "new_item_ids": [BLUE],
      "payment_method_id": "paypal_9"},
     "payment_method_not_found", "customer 'zoe_nunez_1' has no payment method 'paypal_9'"),
    ("modify_pending_order_items",
     {"order_id": "#W0000002", "item_ids": [LINEN], "new_item_ids": [GLASS],
      "payment_method_id": "gift_card_1"},
     "insufficient_gift_card_balance",
     "gift card gift_card_1 holds 10.1, not enough for the price difference of "
     "35.449999999999996"),
    ("return_delivered_order_items",
     {"order_id": "#W0000002", "item_ids": [RED], "payment_method_id": "credit_card_1"},
     "order_not_delivered",
     "order #W0000002 is 'pending'; only a delivered order can be returned"),
    ("return_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED], "payment_method_id": "gift_card_3"},
     "payment_method_not_found", "customer 'zoe_nunez_1' has no payment method 'gift_card_3'"),
    ("return_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED], "payment_method_id": "credit_card_1"},
     "refund_method_not_allowed",
     "a refund for order #W0000003 goes to its original method paypal_1 or to a gift card, "
     "not to credit_card_1"),
    ("return_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED, RED, RED], "payment_method_id": "paypal_1"},
     "item_not_in_order",
     f"order #W0000003 holds 2 unit(s) of item '{RED}', fewer than the 3 requested"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000005", "item_ids": [BLUE], "new_item_ids": [RED],
      "payment_method_id": "credit_card_2"},
     "order_not_delivered",
     "order #W0000005 is 'processed'; only a delivered order can be exchanged"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [BLUE], "new_item_ids": [RED],
      "payment_method_id": "paypal_1"},
     "item_not_in_order",
     f"order #W0000003 holds 0 unit(s) of item '{BLUE}', fewer than the 1 requested"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED], "new_item_ids": [BLUE, BLUE],
      "payment_method_id": "paypal_1"},
     "item_count_mismatch", "1 item(s) to replace but 2 replacement(s) given"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [GLASS], "new_item_ids": [RED],
      "payment_method_id": "paypal_1"},
     "variant_not_found", f"item '{RED}' is not a variant of product 'Lamp' ('{LAMP}')"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED], "new_item_ids": [GREEN],
      "payment_method_id": "paypal_1"},
     "variant_unavailable", f"item '{GREEN}' is not available"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED], "new_item_ids": [BLUE],
      "payment_method_id": "credit_card_2"},
     "payment_method_not_found", "customer 'zoe_nunez_1' has no payment method 'credit_card_2'"),
    ("exchange_delivered_order_items",
     {"order_id": "#W0000003", "item_ids": [RED, RED], "new_item_ids": [BLUE, BLUE],
      "payment_method_id": "gift_card_1"},
     "insufficient_gift_card_balance",
     "gift card gift_card_1 holds 10.1, not enough for the price difference of 20.2"),
    ("calculate", {"expression": "2 + x"}, "invalid_expression",
     "'2 + x' may contain only digits, + - * / ( ) . and spaces"),
    ("calculate", {"expression": "2 + * 3"}, "invalid_expression",
     "'2 + * 3' is not valid arithmetic"),
    ("calculate", {"expression": "1 / (2 - 2)"}, "invalid_expression",
     "'1 / (2 - 2)' cannot be computed: division by zero"),
    ("calculate", {"expression": "()"}, "invalid_expression",
     "the expression is not plain arithmetic"),
    ("calculate", {"expression": "9 ** 9 ** 9"}, "invalid_expression",
     "the power in the expression is too large"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "arguments", "code", "message"),
    ERRORS,
    ids=[f"{name}-{code}-{i}" for i, (name, _, code, _) in enumerate(ERRORS)],
)
def test_precondition_error_and_world_untouched(
    world: World, name: str, arguments: dict[str, Any], code: str, message: str
) -> None:
    before = world.state_hash()
    outcome = run(world, name, **arguments)
    assert isinstance(outcome, ToolError)
    assert (outcome.code, outcome.message) == (code, message)
    assert world.state_hash() == before


def test_every_write_tool_has_precondition_cases() -> None:
    covered = {name for name, *_ in ERRORS}
    writes = {name for name, spec in SERVICE_TOOLS.items() if spec.kind is ToolKind.WRITE}
    assert writes <= covered


# ----- effects ------------------------------------------------------------------------------


def test_lookups_ignore_case_and_accents(world: World) -> None:
    assert run(world, "find_user_id_by_email", email=" Zoe.NUNEZ@Example.com ") == "zoe_nunez_1"
    found = run(world, "find_user_id_by_name_zip", first_name="zoe", last_name="NUNEZ", zip="98402")
    assert found == "zoe_nunez_1"


def test_reads_return_records_as_json(world: World) -> None:
    user = run(world, "get_user_details", user_id="bo_li_2")
    assert user["orders"] == ["#W0000004", "#W0000005", "#W0000006", "#W0000007"]
    order = run(world, "get_order_details", order_id="#W0000003")
    assert order["status"] == "delivered" and order["return_items"] is None
    assert run(world, "list_all_product_types") == {"Kettle": KETTLE, "Lamp": LAMP}
    product = run(world, "get_product_details", product_id=LAMP)
    assert sorted(product["variants"]) == [LINEN, GLASS]
    assert run(world, "get_item_details", item_id=GREEN) == {
        "item_id": GREEN,
        "options": {"color": "green"},
        "available": False,
        "price": 15.0,
    }


def test_modify_user_address(world: World) -> None:
    result = run(world, "modify_user_address", user_id="bo_li_2", **NEW_ADDRESS)
    assert result["address"] == NEW_ADDRESS
    assert world.users["bo_li_2"].address.model_dump() == NEW_ADDRESS


def test_cancel_refunds_gift_card_at_once_rounded(world: World) -> None:
    order = run(world, "cancel_pending_order", order_id="#W0000001", reason="ordered by mistake")
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"] == [
        {"transaction_type": "payment", "amount": 20.2, "payment_method_id": "gift_card_1"},
        {"transaction_type": "refund", "amount": 20.2, "payment_method_id": "gift_card_1"},
    ]
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 30.3  # 10.1 + 20.2 = 30.2999...


def test_cancel_refund_to_card_moves_no_balance(world: World) -> None:
    run(world, "cancel_pending_order", order_id="#W0000002", reason="no longer needed")
    assert world.orders["#W0000002"].payment_history[-1].payment_method_id == "credit_card_1"
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 10.1


def test_modify_address_allowed_after_item_modification(world: World) -> None:
    order = run(world, "modify_pending_order_address", order_id="#W0000004", **NEW_ADDRESS)
    assert order["address"] == NEW_ADDRESS
    assert order["status"] == "pending (item modified)"


def test_modify_payment_card_to_paypal(world: World) -> None:
    order = run(
        world, "modify_pending_order_payment", order_id="#W0000002", payment_method_id="paypal_1"
    )
    assert order["payment_history"] == [
        {"transaction_type": "payment", "amount": 20.2, "payment_method_id": "credit_card_1"},
        {"transaction_type": "payment", "amount": 20.2, "payment_method_id": "paypal_1"},
        {"transaction_type": "refund", "amount": 20.2, "payment_method_id": "credit_card_1"},
    ]
    assert order["status"] == "pending"


def test_modify_payment_moves_gift_card_balances(world: World) -> None:
    run(world, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="paypal_1")
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 30.3  # refund of 20.2 to the card
    run(
        world, "modify_pending_order_payment", order_id="#W0000006", payment_method_id="gift_card_3"
    )
    assert balance(world, "bo_li_2", "gift_card_3") == 39.9  # 50.0 - 10.1


def test_modify_items_records_unrounded_difference(world: World) -> None:
    order = run(
        world,
        "modify_pending_order_items",
        order_id="#W0000006",
        item_ids=[LINEN],
        new_item_ids=[GLASS],
        payment_method_id="gift_card_3",
    )
    assert order["payment_history"][-1] == {
        "transaction_type": "payment",
        "amount": 35.449999999999996,  # 45.55 - 10.1, not rounded
        "payment_method_id": "gift_card_3",
    }
    assert balance(world, "bo_li_2", "gift_card_3") == 14.55  # 50.0 - 35.4499... = 14.5500...04
    assert order["items"] == [_line(LAMP, GLASS)]
    assert order["status"] == "pending (item modified)"


def test_modify_items_cheaper_is_refund_to_gift_card(world: World) -> None:
    order = run(
        world,
        "modify_pending_order_items",
        order_id="#W0000007",
        item_ids=[GLASS],
        new_item_ids=[LINEN],
        payment_method_id="gift_card_3",
    )
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 35.449999999999996,
        "payment_method_id": "gift_card_3",
    }
    assert balance(world, "bo_li_2", "gift_card_3") == 85.45


def test_modify_items_each_line_gets_its_own_variant(world: World) -> None:
    """The fixed upstream bug (tau2-bench issues 317/318)."""
    arguments = {
        "order_id": "#W0000002",
        "item_ids": [RED, LINEN],
        "new_item_ids": [BLUE, GLASS],
        "payment_method_id": "credit_card_1",
    }
    upstream = world.fork()
    fixed: Any = execute(world, "modify_pending_order_items", arguments, SERVICE_TOOLS)
    assert isinstance(fixed, dict)
    assert fixed["items"] == [_line(KETTLE, BLUE), _line(LAMP, GLASS)]
    assert fixed["payment_history"][-1]["amount"] == (20.2 - 10.1) + (45.55 - 10.1)
    buggy: Any = execute(upstream, "modify_pending_order_items", arguments, TAU2_UPSTREAM_TOOLS)
    assert isinstance(buggy, dict)
    assert [(line["price"], line["options"]) for line in buggy["items"]] == [
        (45.55, {"shade": "glass"}),
        (45.55, {"shade": "glass"}),
    ]
    assert buggy["payment_history"] == fixed["payment_history"]


def test_return_records_sorted_items_and_method(world: World) -> None:
    order = run(
        world,
        "return_delivered_order_items",
        order_id="#W0000003",
        item_ids=[GLASS, RED],
        payment_method_id="gift_card_1",
    )
    assert order["status"] == "return requested"
    assert order["return_items"] == [RED, GLASS]
    assert order["return_payment_method_id"] == "gift_card_1"
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 10.1  # refunded later, not now
    again = run(
        world,
        "return_delivered_order_items",
        order_id="#W0000003",
        item_ids=[RED],
        payment_method_id="paypal_1",
    )
    assert isinstance(again, ToolError) and again.code == "order_not_delivered"


def test_exchange_records_rounded_difference_and_moves_no_money(world: World) -> None:
    order = run(
        world,
        "exchange_delivered_order_items",
        order_id="#W0000003",
        item_ids=[GLASS, RED],
        new_item_ids=[LINEN, BLUE],
        payment_method_id="gift_card_1",
    )
    assert order["status"] == "exchange requested"
    assert order["exchange_items"] == [RED, GLASS]
    assert order["exchange_new_items"] == [BLUE, LINEN]
    assert order["exchange_payment_method_id"] == "gift_card_1"
    assert order["exchange_price_difference"] == -25.35  # -35.4499... + 10.1, rounded
    assert order["items"] == [_line(KETTLE, RED), _line(KETTLE, RED), _line(LAMP, GLASS)]
    assert balance(world, "zoe_nunez_1", "gift_card_1") == 10.1


def test_exchange_to_the_same_item_is_allowed(world: World) -> None:
    order = run(
        world,
        "exchange_delivered_order_items",
        order_id="#W0000003",
        item_ids=[RED],
        new_item_ids=[RED],
        payment_method_id="paypal_1",
    )
    assert order["exchange_price_difference"] == 0.0


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("3131.1 + 4777.75 + 367.38", "8276.23"),
        ("10 / 4", "2.5"),
        ("2 ** 3", "8.0"),
        ("7 // 2", "3.0"),
        ("  -(1.005 + 2)", "-3.0"),
        ("135.24 - 153.23", "-17.99"),
    ],
)
def test_calculate(world: World, expression: str, expected: str) -> None:
    assert run(world, "calculate", expression=expression) == expected


def test_transfer_changes_nothing(world: World) -> None:
    before = world.state_hash()
    assert run(world, "transfer_to_human_agents", summary="wants a human") == "Transfer successful"
    assert world.state_hash() == before


# ----- registry and execution ---------------------------------------------------------------


def test_the_fifteen_and_their_desks() -> None:
    assert len(SERVICE_TOOLS) == 15
    assert set(TAU2_TOOLS) == {*SERVICE_TOOLS, "get_item_details"}
    by_desk: dict[Desk, set[str]] = {}
    for name, desk in TOOL_DESKS.items():
        by_desk.setdefault(desk, set()).add(name)
    assert by_desk == {
        Desk.IDENTITY_LOOKUP: {"find_user_id_by_email", "find_user_id_by_name_zip"},
        Desk.ACCOUNT: {"get_user_details", "modify_user_address", "transfer_to_human_agents"},
        Desk.ORDER_RECORDS: {"get_order_details"},
        Desk.CATALOGUE: {"list_all_product_types", "get_product_details", "get_item_details"},
        Desk.PENDING_ORDERS: {
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_pending_order_payment",
            "modify_pending_order_items",
            "calculate",
        },
        Desk.RETURNS_EXCHANGES: {"return_delivered_order_items", "exchange_delivered_order_items"},
    }
    writes = sorted(n for n, s in SERVICE_TOOLS.items() if s.kind is ToolKind.WRITE)
    assert len(writes) == 7 and all(
        n.startswith(("modify", "cancel", "return", "exc")) for n in writes
    )


def test_schemas_are_plain_objects() -> None:
    schema = SERVICE_TOOLS["modify_pending_order_items"].function_schema()
    parameters = schema["function"]["parameters"]
    assert parameters["required"] == ["order_id", "item_ids", "new_item_ids", "payment_method_id"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["item_ids"]["type"] == "array"
    assert "title" not in str(parameters)
    assert schema["function"]["description"].startswith("Swap items of a pending order")
    assert SERVICE_TOOLS["list_all_product_types"].parameters_schema()["required"] == []
    upstream = TAU2_UPSTREAM_TOOLS["modify_pending_order_items"]
    assert (
        upstream.parameters_schema()
        == SERVICE_TOOLS["modify_pending_order_items"].parameters_schema()
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "modify_pending_order_payment: missing argument 'order_id'; "
             "missing argument 'payment_method_id'"),
        ({"order_id": "#W0000002", "payment_method_id": "paypal_1", "note": "x"},
         "modify_pending_order_payment: unexpected argument 'note'"),
        ({"order_id": 2, "payment_method_id": "paypal_1"},
         "modify_pending_order_payment: argument 'order_id': Input should be a valid string "
         "(got 2)"),
    ],
)  # fmt: skip
def test_inadmissible_arguments_are_refused_before_running(
    world: World, arguments: dict[str, Any], message: str
) -> None:
    before = world.state_hash()
    outcome = execute(world, "modify_pending_order_payment", arguments)
    assert outcome == ToolError("inadmissible_arguments", message)
    assert world.state_hash() == before


def test_unknown_tool_and_tau2_only_tool(world: World) -> None:
    assert execute(world, "think", {"thought": "hm"}) == ToolError(
        "unknown_tool", "there is no tool named 'think'"
    )
    assert isinstance(execute(world, "get_item_details", {"item_id": RED}), ToolError)
    assert isinstance(execute(world, "get_item_details", {"item_id": RED}, TAU2_TOOLS), dict)


def test_result_text(world: World) -> None:
    assert result_text(ToolError("x", "it broke")) == "Error: it broke"
    assert result_text("bo_li_2") == "bo_li_2"
    assert result_text({"Kettle": KETTLE}) == '{"Kettle": "1000000001"}'
