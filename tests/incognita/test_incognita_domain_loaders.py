"""Loaders: round trips and error messages that name the file, the field and the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from confide.envs.incognita.generator import WorldSpec, generate_world
from confide.envs.incognita.loaders import (
    load_tau2_tasks,
    load_tau_bench_tasks,
    load_world,
    save_world,
)
from confide.envs.incognita.world import World, WorldDataError


@pytest.fixture(scope="module")
def small() -> World:
    return generate_world(2, WorldSpec(n_users=5, n_product_types=3))


def test_world_file_round_trip(tmp_path: Path, small: World) -> None:
    path = tmp_path / "world.json"
    save_world(small, path)
    assert json.loads(path.read_text())["schema_version"] == 1
    assert load_world(path).state_hash() == small.state_hash()


def test_tau_bench_directory_and_tau2_db_layouts(tmp_path: Path, small: World) -> None:
    state = small.state_dict()
    for user in state["users"].values():
        del user["user_id"]  # tau-bench's users.json has no user_id field
    for name in ("users", "orders", "products"):
        (tmp_path / f"{name}.json").write_text(json.dumps(state[name]))
    assert load_world(tmp_path).state_hash() == small.state_hash()
    db = tmp_path / "db"
    db.mkdir()
    (db / "db.json").write_text(json.dumps(small.state_dict()))
    assert load_world(db).state_hash() == small.state_hash()


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(WorldDataError, match=r"cannot read data file .*nope\.json: No such file"):
        load_world(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"users": {}\n, oops}')
    with pytest.raises(WorldDataError, match=r"bad\.json: line 2, column 3: invalid JSON"):
        load_world(bad)
    with pytest.raises(WorldDataError, match=r"missing users\.json, orders\.json, products\.json"):
        load_world(tmp_path)


def test_field_errors_name_path_and_value(tmp_path: Path, small: World) -> None:
    data = small.model_dump(mode="json")
    order_id = next(iter(data["orders"]))
    data["orders"][order_id]["status"] = "lost in transit"
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    with pytest.raises(WorldDataError) as caught:
        load_world(path)
    message = str(caught.value)
    assert f"w.json: orders.{order_id}.status:" in message
    assert "(got 'lost in transit')" in message
    data["schema_version"] = 9
    path.write_text(json.dumps(data))
    with pytest.raises(WorldDataError, match="schema_version is 9"):
        load_world(path)


def test_task_files_formats_and_errors(tmp_path: Path) -> None:
    tau2 = tmp_path / "tasks.json"
    tau2.write_text(
        json.dumps(
            [
                {
                    "id": "t1",
                    "user_scenario": {
                        "instructions": {"reason_for_call": "Return a lamp.", "known_info": "Zip 1"}
                    },
                    "evaluation_criteria": {
                        "actions": [
                            {
                                "action_id": "a",
                                "name": "calculate",
                                "arguments": {"expression": "1"},
                            }
                        ],
                        "nl_assertions": ["Says 1."],
                    },
                }
            ]
        )
    )
    [task] = load_tau2_tasks(tau2)
    assert task.instruction == "Return a lamp.\nZip 1"
    assert task.actions[0].arguments == {"expression": "1"}
    assert task.output_assertions == ["Says 1."]
    v1 = tmp_path / "v1.json"
    v1.write_text(
        json.dumps(
            [{"user_id": "u", "instruction": "x", "actions": [{"name": "n", "kwargs": {"a": 1}}]}]
        )
    )
    assert load_tau_bench_tasks(v1)[0].actions[0].arguments == {"a": 1}
    tau2.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(WorldDataError, match="expected a list of tasks, got dict"):
        load_tau2_tasks(tau2)
    tau2.write_text(json.dumps([{"user_scenario": {}}]))
    with pytest.raises(WorldDataError, match=r"task\[0\]: id: Field required"):
        load_tau2_tasks(tau2)
