"""The tau transformation (envs/incognita/transform.py) pinned on hand-built source tasks
over the shipped world, where the first tests left it open: capitalised pronouns, the
wording of several emails and of a stated new address, a failing write that no source
supplies, tau-bench files, task ids that collide, and the printed rows. Needs no shared
data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_incognita_transform import IDENTITY, PENDING, USER, _cancel_task

from confide.envs.incognita.loaders import SourceTask, save_world
from confide.envs.incognita.scenario import load_suite
from confide.envs.incognita.tools import ToolCall
from confide.envs.incognita.transform import (
    Conversion,
    ConversionError,
    conversion_rows,
    convert_all,
    convert_file,
    convert_task,
    customer_side,
    first_person,
)
from confide.envs.incognita.world import World


@pytest.fixture(scope="module")
def world() -> World:
    world, _ = load_suite()
    return world


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def test_a_capitalised_pronoun_stays_capitalised() -> None:
    assert first_person("Your order is late. Yours is blue.") == (
        "My order is late. Mine is blue."
    )
    assert first_person("You are sure; your call.") == "I am sure; my call."


def _fields(world: World, text: str) -> dict[str, str]:
    side = customer_side(text, world.users[USER], [], world)
    return {f.token: f.value for f in side.fields}


def test_one_email_and_several_emails_are_worded_apart(world: World) -> None:
    one = _fields(world, f"You want to cancel your order. {IDENTITY} Your email is a@x.com.")
    assert one["email"] == "My email is a@x.com."
    several = _fields(world, f"You want to cancel your order. {IDENTITY} Your email is "
                             "a@x.com, b@y.org or c@z.net.")
    assert several["email"] == "My emails are a@x.com, b@y.org and c@z.net."
    two = _fields(world, "You want to cancel your order. Try a@x.com or b@y.org.")
    assert two["email"] == "My emails are a@x.com and b@y.org."


def test_a_stated_new_address_becomes_the_address_field(world: World) -> None:
    move = _call("modify_user_address", user_id=USER, address1="1 Elm Street",
                 address2="Apt 2", city="Reno", state="NV", country="USA", zip="89501")
    text = (f"You moved and want your address changed to 1 Elm Street. {IDENTITY}")
    fields = _fields_with(world, text, [move])
    assert fields["address"] == "The address is 1 Elm Street, Apt 2, Reno, NV 89501, USA."
    no_line2 = move.model_copy(update={"arguments": {**move.arguments, "address2": ""}})
    assert _fields_with(world, text, [no_line2])["address"] == (
        "The address is 1 Elm Street, Reno, NV 89501, USA.")


def _fields_with(world: World, text: str, calls: list[ToolCall]) -> dict[str, str]:
    side = customer_side(text, world.users[USER], calls, world)
    return {f.token: f.value for f in side.fields}


def test_a_failing_write_no_source_supplies_refuses_the_card(world: World) -> None:
    """Only failing *reads* may be dropped as an upstream agent's guess; a write meant to
    fail whose argument nothing states refuses the card."""
    actions = [*_cancel_task().actions,
               _call("cancel_pending_order", order_id="#W0000001", reason="ordered by mistake")]
    conversion = convert_task(world, _cancel_task(actions=actions), "tau2")
    assert conversion.card is None
    assert conversion.reason is not None and "order_id='#W0000001'" in conversion.reason


def _tau_bench_file(tmp_path: Path, world: World, tasks: list[SourceTask]) -> tuple[Path, Path]:
    raw = [{"user_id": t.user_id or USER, "instruction": t.instruction,
            "actions": [{"name": c.name, "kwargs": c.arguments} for c in t.actions],
            "outputs": []} for t in tasks]
    tasks_path, world_path = tmp_path / "tasks.json", tmp_path / "world.json"
    tasks_path.write_text(json.dumps(raw))
    save_world(world, world_path)
    return tasks_path, world_path


def test_a_tau_bench_file_converts_with_its_own_loader(tmp_path: Path, world: World) -> None:
    lookup = _call("get_item_details", item_id="1060255094")  # the foam roller of PENDING
    task = _cancel_task(actions=[*_cancel_task().actions, lookup], output_assertions=[])
    _, conversions = convert_file(*_tau_bench_file(tmp_path, world, [task]))
    (conversion,) = conversions
    assert conversion.task_id == "0" and conversion.card is not None  # ids are positions
    assert conversion.card.card_id == "tau-bench-0"
    # read from a file: the item read is counted and named in the notes
    assert conversion.notes == ("1 get_item_details read(s) made get_product_details",)
    assert conversion.card.gold_actions[-1] == _call("get_product_details",
                                                     product_id="2199815273")


def test_task_ids_that_collide_after_lowercasing_are_refused(world: World) -> None:
    tasks = [_cancel_task(task_id="A7"), _cancel_task(task_id="a7")]
    with pytest.raises(ConversionError, match=r"task ids repeat after conversion: "
                       r"\['tau2-a7', 'tau2-a7'\]"):
        convert_all(world, tasks, "tau2")
    # a refused task next to them takes no id
    fine = convert_all(world, [_cancel_task(task_id="a7"),
                               _cancel_task(task_id="b7", instruction=IDENTITY)], "tau2")
    assert [c.card is not None for c in fine] == [True, False]


def test_rows_show_the_card_or_the_reason_and_the_notes() -> None:
    rows = conversion_rows([
        Conversion(task_id="1", card=None, reason="no single customer"),
        Conversion(task_id="2", card=None, reason=None, notes=("a", "b")),
    ])
    assert rows == [
        {"task": "1", "card": "", "reason": "no single customer", "notes": ""},
        {"task": "2", "card": "", "reason": "", "notes": "a; b"},
    ]


def test_a_conversion_and_its_customer_side_cannot_be_altered(world: World) -> None:
    conversion = convert_task(world, _cancel_task(), "tau2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        conversion.reason = "changed"  # type: ignore[misc]
    side = customer_side(f"You want to cancel your order {PENDING}.", world.users[USER], [],
                         world)
    with pytest.raises(dataclasses.FrozenInstanceError):
        side.opening_line = "changed"  # type: ignore[misc]


def test_a_long_task_file_with_distinct_ids_converts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repeat check compares counts, whatever their size (300 cards here)."""
    from confide.envs.incognita import transform

    card = convert_task(world, _cancel_task(), "tau2").card
    assert card is not None

    def quick(world: World, task: SourceTask, prefix: str) -> Conversion:
        return Conversion(task_id=task.task_id, reason=None,
                          card=card.model_copy(update={"card_id": f"{prefix}-{task.task_id}"}))

    monkeypatch.setattr(transform, "convert_task", quick)
    tasks = [_cancel_task(task_id=str(i)) for i in range(300)]
    assert len(convert_all(world, tasks, "tau2")) == 300
    with pytest.raises(ConversionError, match="task ids repeat"):
        convert_all(world, [*tasks, tasks[0]], "tau2")


def test_a_name_is_a_field_only_when_the_instruction_states_it(world: World) -> None:
    assert "name" not in _fields(world, "You want to cancel your order. Try a@x.com.")
    assert _fields(world, "You want to cancel your order. You are Anders.")["name"] == (
        "My name is Anders.")


def test_a_zip_code_the_lookup_uses_is_the_customers_to_give(world: World) -> None:
    """The gold lookup's zip (here an old one, as read from a task file) is a fact the
    customer states, besides the zip of the current address."""
    lookup = ToolCall.model_validate_json(
        '{"name": "find_user_id_by_name_zip", "arguments": '
        '{"first_name": "Anders", "last_name": "Holloway", "zip": "99999"}}')
    text = "You want to cancel your order. You used to live in zip code 99999."
    assert _fields_with(world, text, [lookup])["zip"] == "My zip code is 99999."


def test_the_customer_is_found_by_the_gold_lookups_result(world: World) -> None:
    """No user id in the source and none in the instruction: the identity lookup's answer
    names the customer."""
    from confide.envs.incognita.transform import customer_of

    email = world.users[USER].email
    task = SourceTask(task_id="9", user_id=None, instruction="You want to cancel an order.",
                      actions=[], output_assertions=[])
    assert customer_of(world, task, [_call("find_user_id_by_email", email=email)]) == USER
    with pytest.raises(ConversionError, match=r"concern 0 customers \(none\), not one"):
        customer_of(world, task, [_call("list_all_product_types")])
    two = [_call("get_user_details", user_id=USER),
           _call("get_user_details", user_id="bilal_nakagawa_7904")]
    with pytest.raises(ConversionError, match=rf"concern 2 customers \({USER}, "
                       r"bilal_nakagawa_7904\), not one"):
        customer_of(world, task, two)


def test_only_a_write_makes_a_choice_of_the_customers(world: World) -> None:
    """A zip code given to the identity lookup is no choice of address: a sentence about
    moving is then the item's, not an address field."""
    lookup = _call("find_user_id_by_name_zip", first_name="Anders", last_name="Holloway",
                   zip="40239")
    fields = _fields_with(world, "You want to cancel your order. You are moving soon.",
                          [lookup])
    assert fields == {"item": "I am moving soon."}


def test_the_instruction_names_the_customer_by_id_or_by_email(world: World) -> None:
    from confide.envs.incognita.transform import customer_of

    user = world.users[USER]
    for said in (f"Your user id is {USER}.", f"Your email is {user.email}."):
        task = SourceTask(task_id="9", user_id=None, instruction=f"You want help. {said}",
                          actions=[], output_assertions=[])
        assert customer_of(world, task, []) == USER


def test_a_gold_action_with_arguments_its_tool_refuses_is_named(world: World) -> None:
    conversion = convert_task(world, _cancel_task(actions=[
        _call("get_order_details", order_id=PENDING, extra="x")]), "tau2")
    assert conversion.card is None
    assert conversion.reason is not None and conversion.reason.startswith("gold action 0: ")


def test_a_full_name_identifies_the_customer_only_with_the_zip_code(world: World) -> None:
    from confide.envs.incognita.transform import customer_of

    def named(text: str) -> str:
        task = SourceTask(task_id="9", user_id=None, instruction=f"You want help. {text}",
                          actions=[], output_assertions=[])
        return customer_of(world, task, [])

    assert named(IDENTITY) == USER
    for partial in ("You are Anders Holloway.", "You live in zip code 40239."):
        with pytest.raises(ConversionError, match="concern 0 customers"):
            named(partial)


def test_several_orders_are_worded_as_several(world: World) -> None:
    orders = sorted(o for o in world.users[USER].orders if o in world.orders)[:2]
    assert len(orders) == 2
    text = f"You want to cancel your orders {orders[0]} and {orders[1]}."
    assert _fields(world, text)["order_id"] == f"The orders are {orders[0]} and {orders[1]}."
    assert _fields(world, f"You want to cancel {orders[0]}.")["order_id"] == (
        f"It's order {orders[0]}.")


def test_a_task_file_is_judged_by_its_first_task(tmp_path: Path) -> None:
    from confide.envs.incognita.transform import source_format

    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "0", "user_scenario": {}}, {"instruction": "x"}]))
    assert source_format(path) == "tau2"
    path.write_text(json.dumps([{"instruction": "x"}, {"id": "0", "user_scenario": {}}]))
    assert source_format(path) == "tau-bench"


def test_sentences_after_a_request_still_become_fields(world: World) -> None:
    text = ("You want to cancel your order. You ask the agent how much it costs. "
            "The roller is blue.")
    side = customer_side(text, world.users[USER], [], world)
    assert side.requests == ["I ask the agent how much it costs."]
    assert {f.token: f.value for f in side.fields} == {"item": "The roller is blue."}


def test_only_forgotten_identity_facts_are_dropped_as_identity(world: World) -> None:
    """A sentence is about who the customer is when it states an identity literal, or says
    the customer does not remember an email, zip code or name; other sentences stay."""
    text = ("You want to cancel your order. You do not remember the order date. "
            "Your name on the package is misspelled. You do not remember your zip code.")
    assert _fields(world, text) == {
        "item": "I do not remember the order date. My name on the package is misspelled."}


def test_a_sentence_takes_a_chosen_field_only_by_its_cue(world: World) -> None:
    cancel = _call("cancel_pending_order", order_id=PENDING, reason="no longer needed")
    fields = _fields_with(world, "You want to cancel your order. The roller is blue. You no "
                                 "longer need it.", [cancel])
    assert fields == {"item": "The roller is blue.", "reason": "I no longer need it."}


def test_a_customer_missing_from_the_world_is_named(world: World) -> None:
    conversion = convert_task(world, _cancel_task(user_id="ghost_0000", actions=[]), "tau2")
    assert conversion.card is None
    assert conversion.reason == "customer 'ghost_0000' is not in the world"


def test_a_failing_calculation_no_source_supplies_refuses_the_card(world: World) -> None:
    """Only failing reads are dropped: a failing generic call (a calculation of numbers
    nothing states) refuses the card, as a write would."""
    task = _cancel_task(actions=[*_cancel_task().actions, _call("calculate", expression="1 +")])
    conversion = convert_task(world, task, "tau2")
    assert conversion.card is None and conversion.notes == ()
    assert conversion.reason is not None and "no source for argument expression" in (
        conversion.reason)
