"""Generator: determinism, realism invariants, every status present and tool-consistent."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from confide.envs.incognita.generator import (
    CATALOGUE,
    MAX_PRODUCT_TYPES,
    STATUSES,
    WorldSpec,
    _allocate,
    generate_world,
)
from confide.envs.incognita.tools import find_user_id_by_email, find_user_id_by_name_zip
from confide.envs.incognita.world import GiftCard, World


@pytest.fixture(scope="module")
def world() -> World:
    return generate_world(11)


def test_same_seed_same_world_other_seed_other_world() -> None:
    spec = WorldSpec(n_users=20, n_product_types=8)
    assert generate_world(5, spec).state_hash() == generate_world(5, spec).state_hash()
    assert generate_world(5, spec).state_hash() != generate_world(6, spec).state_hash()


def test_every_status_occurs(world: World) -> None:
    counts = Counter(order.status for order in world.orders.values())
    assert set(counts) == set(STATUSES)
    assert len(world.users) == 60 and len(world.products) == 24


def test_catalogue_shape(world: World) -> None:
    names = [product.name for product in world.products.values()]
    assert len(set(names)) == len(names)
    kinds = {kind.name: kind for kind in CATALOGUE}
    product_ids = set(world.products)
    item_ids = {i for product in world.products.values() for i in product.variants}
    assert not product_ids & item_ids
    assert all(re.fullmatch(r"\d{10}", i) for i in product_ids | item_ids)
    for product in world.products.values():
        assert sum(v.available for v in product.variants.values()) >= 2
        option_names = [key for key, _ in kinds[product.name].options]
        for variant in product.variants.values():
            assert list(variant.options) == option_names
            assert variant.price > 0 and round(variant.price, 2) == variant.price


def test_customers_are_findable_and_unique(world: World) -> None:
    for user_id, user in world.users.items():
        assert re.fullmatch(r"[a-z']+_[a-z']+_\d{4}", user_id.replace("-", ""))
        assert find_user_id_by_email(world, user.email) == user_id
        first, last = user.name.first_name, user.name.last_name
        assert find_user_id_by_name_zip(world, first, last, user.address.zip) == user_id
        for method_id, method in user.payment_methods.items():
            assert re.fullmatch(r"(credit_card|gift_card|paypal)_\d{7}", method_id)
            if isinstance(method, GiftCard):
                assert method.balance >= 0 and round(method.balance, 2) == method.balance


def test_orders_are_consistent_with_the_tools(world: World) -> None:
    for order_id, order in world.orders.items():
        assert re.fullmatch(r"#W\d{7}", order_id)
        first = order.payment_history[0]
        assert first.transaction_type == "payment"
        shipped = order.status not in ("pending", "pending (item modified)", "cancelled")
        assert bool(order.fulfillments) == shipped
        if order.status in ("pending", "processed", "delivered"):
            assert len(order.payment_history) == 1
            assert first.amount == round(sum(item.price for item in order.items), 2)
        if order.status == "cancelled":
            assert order.cancel_reason is not None
            assert order.payment_history[1].transaction_type == "refund"
        if order.status == "pending (item modified)":
            assert len(order.payment_history) == 2
        if order.status == "return requested":
            assert order.return_items == sorted(order.return_items or [])
        if order.status == "exchange requested":
            assert order.exchange_price_difference is not None


def test_spec_limits() -> None:
    with pytest.raises(ValidationError, match="less than or equal to 32"):
        WorldSpec(n_product_types=MAX_PRODUCT_TYPES + 1)
    with pytest.raises(ValidationError, match="non-negative weights"):
        WorldSpec(orders_per_user=(0.5, -0.1))
    assert len(generate_world(1, WorldSpec(n_users=1, n_product_types=1)).users) == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=400))
def test_allocation_sums_and_covers(total: int) -> None:
    shares = WorldSpec().status_shares
    statuses = _allocate(total, shares)
    assert len(statuses) == total
    if total >= len(STATUSES):
        assert set(statuses) == set(STATUSES)
    counts = Counter(statuses)
    weight = sum(shares.values())
    for status, share in shares.items():
        assert abs(counts[status] - total * share / weight) < 2
