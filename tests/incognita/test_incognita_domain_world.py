"""World: canonical JSON and hash, cheap forks with isolated writes, integrity checks."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from confide.envs.incognita.generator import WorldSpec, generate_world
from confide.envs.incognita.tools import cancel_pending_order, modify_user_address
from confide.envs.incognita.world import Address, World

SMALL = WorldSpec(n_users=12, n_product_types=6)


@pytest.fixture(scope="module")
def base() -> World:
    return generate_world(3, SMALL)


def _pending(world: World) -> str:
    return next(oid for oid, order in world.orders.items() if order.status == "pending")


def test_canonical_json_is_sorted_dump_of_the_state(base: World) -> None:
    expected = json.dumps(base.state_dict(), sort_keys=True)
    assert base.canonical_json() == expected
    assert base.state_hash() == hashlib.sha256(expected.encode()).hexdigest()
    assert "schema_version" not in base.canonical_json()


def test_fork_is_isolated_and_cache_stays_correct(base: World) -> None:
    before = base.state_hash()
    fork = base.fork()
    order_id = _pending(fork)
    cancel_pending_order(fork, order_id, "no longer needed")
    assert base.orders[order_id].status == "pending"
    assert base.state_hash() == before
    assert fork.state_hash() != before
    rebuilt = World.model_validate(fork.model_dump())
    assert fork.state_hash() == rebuilt.state_hash()
    assert fork.canonical_json() == json.dumps(fork.state_dict(), sort_keys=True)
    # untouched records are shared, the written one is not
    other = next(oid for oid in base.orders if oid != order_id)
    assert fork.orders[other] is base.orders[other]
    assert fork.orders[order_id] is not base.orders[order_id]


def test_replacing_a_record_outright_invalidates_its_cached_json(base: World) -> None:
    fork = base.fork()
    fork.state_hash()
    user_id = next(iter(fork.users))
    moved = fork.users[user_id].model_copy(
        update={"address": Address(**{**fork.users[user_id].address.model_dump(), "zip": "00000"})}
    )
    fork.users[user_id] = moved
    assert fork.canonical_json() == json.dumps(fork.state_dict(), sort_keys=True)


def test_same_writes_give_same_hash_in_independent_forks(base: World) -> None:
    first, second = base.fork(), base.fork()
    user_id = next(iter(base.users))
    for world in (first, second):
        modify_user_address(world, user_id, "1 Elm Court", "", "Reno", "NV", "USA", "89501")
    assert first.state_hash() == second.state_hash() != base.state_hash()


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_canonical_form_invariant_over_seeds(seed: int) -> None:
    world = generate_world(seed, WorldSpec(n_users=4, n_product_types=3))
    assert world.canonical_json() == json.dumps(world.state_dict(), sort_keys=True)
    assert World.model_validate_json(world.model_dump_json()).state_hash() == world.state_hash()


def test_integrity_violations_are_named(base: World) -> None:
    data = base.model_dump()
    order_id = next(iter(data["orders"]))
    data["orders"][order_id]["user_id"] = "ghost_0000"
    with pytest.raises(ValidationError, match=rf"orders\['{order_id}'\]\.user_id 'ghost_0000'"):
        World.model_validate(data)
    data = base.model_dump()
    user_id = next(iter(data["users"]))
    data["users"][user_id]["orders"].append("#W0000000")
    with pytest.raises(ValidationError, match="lists unknown order '#W0000000'"):
        World.model_validate(data)


def test_integrity_catches_foreign_payment_and_unknown_item(base: World) -> None:
    data = base.model_dump()
    order = next(iter(data["orders"].values()))
    order["payment_history"][0]["payment_method_id"] = "paypal_0000000"
    order["items"][0]["item_id"] = "0000000000"
    with pytest.raises(ValidationError) as caught:
        World.model_validate(data)
    text = str(caught.value)
    assert "'paypal_0000000' is not a payment method of its user" in text
    assert "'0000000000') is not in the catalogue" in text
