"""The transformation over the public tau2-bench / tau-bench retail tasks (../shared/anchors):
which tasks convert, the reason for each one left out, and the reference agent on a sample
of cards in every condition (all 108 are checked by bench/incognita_convert.py and
``confide incognita convert``).

Skipped cleanly when the shared anchors are absent (CONFIDE_SHARED, default ../shared).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from confide.envs.incognita.conversion import check
from confide.envs.incognita.transform import Conversion, convert_file
from confide.envs.incognita.world import World

SHARED = Path(os.environ.get("CONFIDE_SHARED", Path(__file__).parents[2] / ".." / "shared"))
ANCHOR = SHARED / "anchors" / "tau_bench_retail"

pytestmark = pytest.mark.skipif(
    not (ANCHOR / "tau2" / "tasks.json").is_file(),
    reason=f"tau2-bench anchors not found under {ANCHOR}",
)

NO_LITERAL = "states no number or identifier, so the LLM-free judge cannot check it"
REFUSED = {
    "24": NO_LITERAL,  # "the materials of the two t-shirts are polyester and cotton"
    "36": NO_LITERAL,  # "the most expensive item in the order is the camera"
    "37": NO_LITERAL,
    "38": NO_LITERAL,
    "40": NO_LITERAL,  # "paid with a Mastercard"
    "89": NO_LITERAL,  # "the keyboard switch type is tactile"
}


@pytest.fixture(scope="module")
def converted() -> tuple[World, list[Conversion]]:
    return convert_file(ANCHOR / "tau2" / "tasks.json", ANCHOR)


def test_108_of_114_convert_and_the_rest_have_reasons(
    converted: tuple[World, list[Conversion]],
) -> None:
    _, conversions = converted
    assert len(conversions) == 114
    refused = {c.task_id: c.reason for c in conversions if c.card is None}
    assert set(refused) == set(REFUSED)
    for task_id, reason in refused.items():
        assert reason is not None and REFUSED[task_id] in reason, task_id


def test_notes_name_every_change(converted: tuple[World, list[Conversion]]) -> None:
    _, conversions = converted
    notes = {c.task_id: c.notes for c in conversions if c.notes}
    # tasks 2-4 try an item id as a product id, which nothing states: the read is dropped
    for task_id in ("2", "3", "4"):
        assert notes[task_id] == ("failing read get_product_details {'product_id': "
                                  "'6086499569'} dropped: no source states its argument",)
    assert notes["21"] == ("3 get_item_details read(s) made get_product_details",)
    actions_left = {k for k, v in notes.items() if v[0].startswith("action assertion")}
    assert actions_left == {"105", "106", "107", "109", "110", "111", "113"}


def test_cards_keep_gold_writes_and_gate_the_customer_facts(
    converted: tuple[World, list[Conversion]],
) -> None:
    _, conversions = converted
    card = next(c.card for c in conversions if c.task_id == "0" and c.card)
    assert "#W2378156" not in card.opening_line  # gated: released as the order_id field
    assert card.field("order_id") is not None and card.field("name") is not None
    assert card.gold_actions[-1].name == "exchange_delivered_order_items"
    failing = {(c.task_id, i) for c in conversions if c.card
               for i, call in enumerate(c.card.gold_actions) if call.expect_error}
    assert ("64", 6) in failing and ("105", 0) in failing  # the two writes upstream refuses


# 57: no gold action (success is that nothing changes), 105: a write meant to fail
@pytest.mark.parametrize("task_id", ["0", "21", "46", "54", "57", "105", "113"])
def test_reference_solves_sampled_cards_in_every_condition(
    converted: tuple[World, list[Conversion]], task_id: str
) -> None:
    world, conversions = converted
    report = check(world, [c for c in conversions if c.task_id == task_id])
    assert report.cards == 1
    assert report.unsolved == {"direct": [], "indirect": [], "social": [], "native": []}


def test_tau_bench_tasks_convert_too() -> None:
    _, conversions = convert_file(ANCHOR / "tasks_test.json", ANCHOR)
    assert len(conversions) == 115
    assert sum(c.card is not None for c in conversions) == 107
    refused = {c.task_id: c.reason or "" for c in conversions if c.card is None}
    assert "2 customers" in refused["64"]
