"""The shipped suite of 18 cards: stratification, gold replay, writes, evaluator, validation."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from confide.core.benchmark import Task
from confide.envs.incognita.generator import generate_world
from confide.envs.incognita.scenario import (
    RELEASE_TOKENS,
    SUITE_FILE,
    CardError,
    CardSuite,
    TaskCard,
    evaluate_final_state,
    load_suite,
    replay_gold,
    save_suite,
)
from confide.envs.incognita.tools import SERVICE_TOOLS, Desk, ToolCall, ToolKind, execute
from confide.envs.incognita.world import World


@pytest.fixture(scope="module")
def shipped() -> tuple[World, CardSuite]:
    return load_suite()


def test_shipped_world_is_the_generated_one(shipped: tuple[World, CardSuite]) -> None:
    world, suite = shipped
    assert generate_world(suite.world_seed, suite.world_spec).state_hash() == suite.world_hash
    assert world.state_hash() == suite.world_hash


def test_three_cards_per_desk_count(shipped: tuple[World, CardSuite]) -> None:
    _, suite = shipped
    assert len(suite.cards) == 18
    assert Counter(len(card.desks) for card in suite.cards) == {n: 3 for n in range(1, 7)}
    assert all(card.writes for card in suite.cards)
    assert len({card.user_id for card in suite.cards}) == 18
    assert sum(bool(card.output_assertions) for card in suite.cards) == 7
    assert all(field.token in RELEASE_TOKENS for c in suite.cards for field in c.customer_fields)


def test_every_gold_action_replays_and_every_write_changes_the_world(
    shipped: tuple[World, CardSuite],
) -> None:
    world0, suite = shipped
    before = world0.state_hash()
    for card in suite.cards:
        world = world0.fork()
        for call in card.gold_actions:
            previous = world.state_hash()
            outcome = execute(world, call.name, call.arguments)
            assert not isinstance(outcome, Exception), (card.card_id, call.name, outcome)
            changed = world.state_hash() != previous
            assert changed == (SERVICE_TOOLS[call.name].kind is ToolKind.WRITE), card.card_id
        assert world.state_hash() == replay_gold(world0, card).state_hash()
    assert world0.state_hash() == before


def test_customer_dictated_addresses_are_in_the_customer_fields(
    shipped: tuple[World, CardSuite],
) -> None:
    _, suite = shipped
    for card in suite.cards:
        address = card.field("address")
        for call in card.writes:
            if call.name.endswith("address"):
                assert address is not None, card.card_id
                assert str(call.arguments["address2"]) in address.value, card.card_id


def test_evaluate_final_state(shipped: tuple[World, CardSuite]) -> None:
    world0, suite = shipped
    card = suite.card("sd-01-cancel-blanket")
    assert not evaluate_final_state(world0, card, world0.fork())
    assert evaluate_final_state(world0, card, replay_gold(world0, card))
    wrong = world0.fork()
    execute(
        wrong, "cancel_pending_order", {"order_id": "#W4979192", "reason": "ordered by mistake"}
    )
    assert not evaluate_final_state(world0, card, wrong)
    # a correct state reached by a different route (extra reads, same write) passes
    agent = world0.fork()
    execute(agent, "get_order_details", {"order_id": "#W4979192"})
    execute(agent, "cancel_pending_order", {"order_id": "#W4979192", "reason": "no longer needed"})
    assert evaluate_final_state(world0, card, agent)


def test_gold_that_does_not_replay_is_refused(shipped: tuple[World, CardSuite]) -> None:
    world0, suite = shipped
    card = suite.card("sd-01-cancel-blanket")
    broken = card.model_copy(
        update={"gold_actions": [ToolCall(name="cancel_pending_order",
                                          arguments={"order_id": "#W0000000",
                                                     "reason": "no longer needed"})]}
    )  # fmt: skip
    with pytest.raises(CardError, match=r"gold_actions\[0\] \(cancel_pending_order\) failed"):
        evaluate_final_state(world0, broken, world0.fork())
    intended = broken.model_copy(
        update={"gold_actions": [broken.gold_actions[0].model_copy(update={"expect_error": True})]}
    )
    assert evaluate_final_state(world0, intended, world0.fork())
    with pytest.raises(CardError, match="was meant to fail"):
        replay_gold(
            world0,
            card.model_copy(
                update={
                    "gold_actions": [card.gold_actions[0].model_copy(update={"expect_error": True})]
                }
            ),
        )


def _card(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "card_id": "sd-99-test",
        "summary": "s",
        "user_id": "u",
        "opening_line": "Hi.",
        "customer_fields": [{"token": "order_id", "value": "#W1"}],
        "gold_actions": [{"name": "get_order_details", "arguments": {"order_id": "#W1"}}],
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"customer_fields": [{"token": "shoe_size", "value": "9"}]}, "unknown release token"),
        (
            {
                "customer_fields": [
                    {"token": "email", "value": "a"},
                    {"token": "email", "value": "b"},
                ]
            },
            r"release tokens repeated: \['email'\]",
        ),
        ({"gold_actions": [{"name": "think", "arguments": {}}]}, "unknown tool 'think'"),
        (
            {"gold_actions": [{"name": "get_order_details", "arguments": {"id": "#W1"}}]},
            r"gold_actions\[0\]: get_order_details: missing argument 'order_id'",
        ),
        ({"card_id": "card one"}, "String should match pattern"),
    ],
)
def test_card_validation(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TaskCard.model_validate(_card(**changes))


def test_suite_round_trip_and_load_errors(tmp_path: Path, shipped: tuple[World, CardSuite]) -> None:
    _, suite = shipped
    (tmp_path / "world.json").write_text((SUITE_FILE.parent / "world.json").read_text())
    path = tmp_path / "cards.json"
    save_suite(suite, path)
    assert load_suite(path)[1] == suite
    data = json.loads(path.read_text())
    data["world_hash"] = "0" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(CardError, match="but the cards were written for 0000"):
        load_suite(path)
    data["schema_version"] = 2
    path.write_text(json.dumps(data))
    with pytest.raises(CardError, match="schema_version is 2"):
        load_suite(path)
    data = json.loads((SUITE_FILE).read_text())
    data["cards"].append(data["cards"][0])
    with pytest.raises(ValidationError, match="card ids repeated"):
        CardSuite.model_validate(data)
    with pytest.raises(CardError, match="has no card 'sd-00-none'"):
        suite.card("sd-00-none")


def test_desk_sets_are_what_the_card_names_suggest(shipped: tuple[World, CardSuite]) -> None:
    _, suite = shipped
    assert suite.card("sd-04-new-home-address").desks == {Desk.IDENTITY_LOOKUP, Desk.ACCOUNT}
    assert suite.card("sd-09-grinder-finish-exchange").desks == {
        Desk.ORDER_RECORDS,
        Desk.CATALOGUE,
        Desk.RETURNS_EXCHANGES,
    }
    assert len(suite.card("sd-16-moving-house").writes) == 4


def test_a_card_is_a_runner_task(shipped: tuple[World, CardSuite]) -> None:
    _, suite = shipped
    task: Task = suite.cards[0]
    assert task.id == suite.cards[0].card_id
    assert [c.id for c in suite.cards] == [c.card_id for c in suite.cards]
