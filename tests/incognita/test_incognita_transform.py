"""The transformation (envs/incognita/transform.py) on hand-written source tasks over our
shipped world: card fields, gold actions, reasons, the reference in every condition, and
``--tasks F --world W`` through the preflight. Needs no shared data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.envs.incognita.conditions import ConditionError
from confide.envs.incognita.conversion import check
from confide.envs.incognita.env import load_source_tasks
from confide.envs.incognita.loaders import SourceTask, load_tau2_tasks, save_world
from confide.envs.incognita.scenario import evaluate_final_state, load_suite
from confide.envs.incognita.tools import ToolCall
from confide.envs.incognita.transform import (
    ConversionError,
    convert_task,
    customer_side,
    first_person,
    gold_actions,
    sentences,
)
from confide.envs.incognita.world import World, WorldDataError
from confide.runner import build_experiment, run_experiment
from confide.runner.preflight import PreflightError, preflight

USER = "anders_holloway_4099"  # Anders Holloway, zip 40239, two pending orders
PENDING = "#W4114088"  # Foam Roller 1060255094, Standing Desk 3732699704
IDENTITY = "You are Anders Holloway in zip code 40239."


@pytest.fixture(scope="module")
def world() -> World:
    world, _ = load_suite()
    return world


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def _cancel_task(**changes: Any) -> SourceTask:
    task = SourceTask(
        task_id="7",
        instruction=(
            f"You want to cancel your order {PENDING}. You no longer need it, a friend gave "
            "you one.\nAt the end, you ask the agent how much money you will get back.\n"
            f"{IDENTITY}\nYou do not remember your email address."
        ),
        actions=[
            _call("find_user_id_by_name_zip", first_name="Anders", last_name="Holloway",
                  zip="40239"),
            _call("get_order_details", order_id=PENDING),
            _call("cancel_pending_order", order_id=PENDING, reason="no longer needed"),
        ],
        output_assertions=["Agent should tell the user the refund is $123.45."],
    )
    return task.model_copy(update=changes)


def test_first_person_by_hand() -> None:
    assert first_person("You want the agent to tell you your balance.") == (
        "I want the agent to tell me my balance."
    )
    assert first_person("If not, you wonder if you're able to pay with yours.") == (
        "If not, I wonder if I'm able to pay with mine."
    )
    assert first_person("When the agent asks you to confirm, you say no.") == (
        "When the agent asks me to confirm, I say no."
    )


def test_sentences_split_and_drop_empty() -> None:
    assert sentences("You want A. Then B!\nNone\n.\nYou are C.") == [
        "You want A.", "Then B!", "You are C."
    ]


def test_cancel_card_by_hand(world: World) -> None:
    conversion = convert_task(world, _cancel_task(), "tau2")
    card = conversion.card
    assert card is not None and conversion.reason is None and conversion.notes == ()
    assert card.card_id == "tau2-7" and card.user_id == USER
    # the order id is gated: not in the opening line, released as the order_id field
    assert card.opening_line == "Hi! I want to cancel my order."
    assert {f.token: f.value for f in card.customer_fields} == {
        "name": "My name is Anders Holloway.",
        "zip": "My zip code is 40239.",
        "order_id": f"It's order {PENDING}.",
        "reason": "I no longer need it, a friend gave me one.",
    }
    assert card.requests == ["At the end, I ask the agent how much money I will get back."]
    assert card.gold_actions == _cancel_task().actions  # verbatim, none meant to fail
    assert card.output_assertions == ["The agent tells the customer the refund is $123.45."]
    assert not evaluate_final_state(world, card, world)  # the gold state is a real change


def test_reference_solves_a_converted_card_in_every_condition(world: World) -> None:
    conversion = convert_task(world, _cancel_task(output_assertions=[]), "tau2")
    report = check(world, [conversion])
    assert report.cards == 1
    assert report.unsolved == {"direct": [], "indirect": [], "social": [], "native": []}
    assert report.lines()[:2] == ["converted 1 of 1 tasks", "reference solves 1 of 1 in direct"]


def test_failing_calls_are_marked_and_untraceable_failing_reads_dropped(world: World) -> None:
    actions = [
        _call("find_user_id_by_email", email="anders@wrong.example"),  # stated: kept
        _call("get_product_details", product_id="123"),  # no source: dropped
        *_cancel_task().actions,
    ]
    instruction = _cancel_task().instruction + " You think your email is anders@wrong.example."
    conversion = convert_task(world, _cancel_task(actions=actions, instruction=instruction),
                              "tau2")
    assert conversion.card is not None
    flags = [(c.name, c.expect_error) for c in conversion.card.gold_actions]
    assert flags == [("find_user_id_by_email", True), ("find_user_id_by_name_zip", False),
                     ("get_order_details", False), ("cancel_pending_order", False)]
    assert conversion.notes == ("failing read get_product_details {'product_id': '123'} "
                                "dropped: no source states its argument",)


def test_no_gold_action_means_nothing_may_change(world: World) -> None:
    conversion = convert_task(world, _cancel_task(actions=[], output_assertions=[]), "tau2")
    assert conversion.card is not None and conversion.card.gold_actions == []
    assert evaluate_final_state(world, conversion.card, world)
    unsolved = check(world, [conversion]).unsolved
    assert unsolved == {"direct": [], "indirect": [], "social": [], "native": []}


def test_item_lookup_becomes_the_product_read(world: World) -> None:
    calls = gold_actions(world, [_call("get_item_details", item_id="1060255094")])
    assert calls == [_call("get_product_details", product_id="2199815273")]


def test_action_assertions_are_left_to_the_database(world: World) -> None:
    conversion = convert_task(world, _cancel_task(output_assertions=[
        "Agent should cancel the order.", "Agent should tell the user the refund is $1.50."
    ]), "tau2")
    assert conversion.card is not None
    assert conversion.card.output_assertions == ["The agent tells the customer the refund "
                                                 "is $1.50."]
    assert conversion.notes == ("action assertion left to the database channel: "
                                "'Agent should cancel the order.'",)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"actions": [_call("think", thought="x")]}, "'think', which is not one of"),
        ({"actions": [_call("get_order_details", order_id=PENDING),
                      _call("get_user_details", user_id="bilal_nakagawa_7904")]},
         "concern 2 customers"),
        ({"output_assertions": ["Agent should tell the user the roller is blue."]},
         "states no number or identifier"),
        ({"actions": [_call("modify_user_address", user_id=USER, address1="1 Elm Street",
                            address2="", city="Reno", state="NV", country="USA",
                            zip="89501")]},
         "no source for argument address1='1 Elm Street'"),
        ({"instruction": IDENTITY}, "no request besides who the customer is"),
    ],
)
def test_reasons(world: World, changes: dict[str, Any], reason: str) -> None:
    conversion = convert_task(world, _cancel_task(**changes), "tau2")
    assert conversion.card is None
    assert conversion.reason is not None and reason in conversion.reason


def test_customer_side_needs_a_request(world: World) -> None:
    with pytest.raises(ConversionError, match="no request"):
        customer_side(IDENTITY, world.users[USER], [], world)


def _tau2_file(tmp_path: Path, world: World) -> tuple[Path, Path]:
    task = _cancel_task(output_assertions=[])
    raw = {
        "id": task.task_id,
        "user_scenario": {"instructions": {"reason_for_call": task.instruction}},
        "evaluation_criteria": {"actions": [c.model_dump(exclude={"expect_error"})
                                            for c in task.actions]},
    }
    tasks_path, world_path = tmp_path / "tasks.json", tmp_path / "world.json"
    tasks_path.write_text(json.dumps([raw]))
    save_world(world, world_path)
    return tasks_path, world_path


def test_source_tasks_load_as_service_tasks(tmp_path: Path, world: World) -> None:
    tasks_path, world_path = _tau2_file(tmp_path, world)
    [task] = load_source_tasks(str(tasks_path), str(world_path))
    assert task.id == "tau2-7" and task.world.state_hash() == world.state_hash()
    experiment = build_experiment(
        {"benchmark": "incognita", "tasks": str(tasks_path), "world": str(world_path)},
        check=False,
    )
    assert [p.task.id for p in preflight(experiment).episodes] == ["tau2-7"] * 3


def test_both_bad_paths_are_named_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(WorldDataError) as caught:
        load_source_tasks(str(tmp_path / "no.json"), str(tmp_path / "nowhere"))
    assert str(caught.value).splitlines() == [
        f"--tasks {tmp_path / 'no.json'}: no such file (a tau2 tasks.json or tau-bench tasks "
        "as JSON)",
        f"--world {tmp_path / 'nowhere'}: no such file or directory (a tau2 db.json or a "
        "tau-bench retail data directory)",
    ]
    (tmp_path / "odd.json").write_text('{"a": 1}')
    with pytest.raises(WorldDataError, match=r"odd\.json: not a tau2-bench tasks\.json"):
        load_source_tasks(str(tmp_path / "odd.json"), str(tmp_path))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"benchmark": "incognita", "world": "w"}, "--world w needs --tasks"),
        ({"benchmark": "calbench", "tasks": "t.json", "world": "w"}, "calbench takes no world"),
    ],
)
def test_preflight_world_problems(data: dict[str, str], problem: str) -> None:
    with pytest.raises(PreflightError, match=problem):
        preflight(build_experiment(data, check=False))


def test_card_reading_mocks_are_refused_before_any_episode(tmp_path: Path, world: World) -> None:
    tasks_path, world_path = _tau2_file(tmp_path, world)
    lineups = ["mock/incognita-skilled", "mock/incognita-ineffective", "reference"]
    data = {"benchmark": "incognita", "tasks": str(tasks_path), "world": str(world_path),
            "lineups": lineups, "output_dir": str(tmp_path / "run")}
    with pytest.raises(PreflightError) as caught:  # with every other problem, at once
        preflight(build_experiment({**data, "options": {"max_turns": 0}}, check=False))
    known = "knows only the shipped cards; 1 of the run's 1 tasks are not among them (tau2-7)"
    assert [p for p in caught.value.problems if "max_turns" not in p] == [
        f"seat {model!r} {known}: run it on the shipped suite, or put a model or the "
        "reference agent in the seat" for model in lineups[:2]
    ]
    assert len(caught.value.problems) == 3
    with pytest.raises(PreflightError):
        run_experiment(build_experiment(data, check=False), show_progress=False)
    assert not (tmp_path / "run" / "traces").exists()
    # the shipped cards are known, and a lineup without such a mock is not checked
    shipped = {"benchmark": "incognita", "lineups": lineups,
               "task_ids": ["sd-05-return-whole-order"]}
    assert len(preflight(build_experiment(shipped, check=False)).episodes) == 9
    preflight(build_experiment({**data, "lineups": ["reference"]}, check=False))


def test_convert_command_prints_the_summary(tmp_path: Path, world: World) -> None:
    tasks_path, world_path = _tau2_file(tmp_path, world)
    command = ["incognita", "convert", "--tasks", str(tasks_path), "--world", str(world_path)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "converted 1 of 1 tasks",
        "reference solves 1 of 1 in direct",
        "reference solves 1 of 1 in indirect",
        "reference solves 1 of 1 in social",
        "reference solves 1 of 1 in native",
    ]
    wrong = CliRunner().invoke(app, [*command, "--condition", "centralized"])
    assert isinstance(wrong.exception, ConditionError)


def test_run_over_converted_tasks_writes_the_trial_rows(tmp_path: Path, world: World) -> None:
    tasks_path, world_path = _tau2_file(tmp_path, world)
    out = tmp_path / "run"
    command = ["run", "incognita", "--tasks", str(tasks_path), "--world", str(world_path),
               "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    rows = (out / "incognita_trials.csv").read_text().splitlines()[1:]
    # read against the converted card's own coordination reference, one row per condition
    assert [row.split(",")[2:7:2] for row in rows] == [
        ["tau2-7", "direct", "True"], ["tau2-7", "indirect", "True"],
        ["tau2-7", "social", "True"],
    ]


def test_tau2_assertions_count_only_when_the_reward_does(tmp_path: Path) -> None:
    raw = [
        {"id": str(i), "user_scenario": {"instructions": "You want help."},
         "evaluation_criteria": {"actions": [], "nl_assertions": ["Agent should say 1."],
                                 "reward_basis": basis}}
        for i, basis in enumerate((["DB"], ["DB", "NL_ASSERTION"], None))
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(raw))
    assert [t.output_assertions for t in load_tau2_tasks(path)] == [
        [], ["Agent should say 1."], ["Agent should say 1."]
    ]
