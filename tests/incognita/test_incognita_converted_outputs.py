"""A run over converted tasks is read against the coordination reference of its own task
file (`outputs.write.write_outputs`), found through its ``experiment.yaml``, not through whatever
else the process loaded: two task files with the same task id in one process, each run's
outputs rebuilt after the other ran, and a rescore. Needs no shared data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from confide.core.trace import read_trace, trace_files
from confide.envs.incognita.loaders import save_world
from confide.envs.incognita.outputs.trials import TRIALS_FILE
from confide.envs.incognita.scenario import load_suite
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment
from confide.runner.rescore import rescore_run

ORDER = "#W4114088"  # a pending order of Anders Holloway, zip 40239
FIND = {"name": "find_user_id_by_name_zip",
        "arguments": {"first_name": "Anders", "last_name": "Holloway", "zip": "40239"}}
READ = {"name": "get_order_details", "arguments": {"order_id": ORDER}}
CANCEL = {"name": "cancel_pending_order",
          "arguments": {"order_id": ORDER, "reason": "no longer needed"}}


def _task_file(path: Path, actions: list[dict[str, Any]], wish: str) -> Path:
    """A tau2 task file of one task, id 7 in every file."""
    instructions = (f"You want {wish} your order {ORDER}. You no longer need it.\n"
                    "You are Anders Holloway in zip code 40239.")
    path.write_text(json.dumps([{
        "id": "7",
        "user_scenario": {"instructions": {"reason_for_call": instructions}},
        "evaluation_criteria": {"actions": actions},
    }]))
    return path


def _run(tmp_path: Path, name: str, tasks: Path, world: Path, **more: str) -> Path:
    out = tmp_path / name
    run_experiment(build_experiment({
        "benchmark": "incognita", "tasks": str(tasks), "world": str(world),
        "lineups": ["reference"], "conditions": ["social"], "output_dir": str(out), **more,
    }), show_progress=False)
    return out


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The world, and two task files with task id 7: a cancel, and a status question."""
    world_path = tmp_path / "world.json"
    save_world(load_suite()[0], world_path)
    cancel = _task_file(tmp_path / "cancel.json", [FIND, READ, CANCEL], "to cancel")
    look = _task_file(tmp_path / "look.json", [FIND, READ], "to know the status of")
    return world_path, cancel, look


def test_two_task_files_in_one_process(tmp_path: Path) -> None:
    world_path, cancel, look = _files(tmp_path)
    first = _run(tmp_path, "cancel", cancel, world_path)
    second = _run(tmp_path, "look", look, world_path)
    rows = {run: (run / TRIALS_FILE).read_text() for run in (first, second)}
    # the same task id, read against two references: the cancel needs a write, the look
    # none, and the reference agent solves both
    assert rows[first] != rows[second]
    spec = get_benchmark("incognita")
    assert spec.write_outputs is not None
    for run in (first, second, first):  # each rebuilt after the other file was loaded
        spec.write_outputs(run, [read_trace(p) for p in trace_files(run / "traces")])
        assert (run / TRIALS_FILE).read_text() == rows[run]
    rescored = rescore_run(first, out=tmp_path / "cancel-rescored").run_dir
    assert (rescored / TRIALS_FILE).read_text() == rows[first]


@pytest.mark.ray
def test_a_ray_driver_reads_the_run_s_own_task_file(ray_session: str, tmp_path: Path) -> None:
    world_path, cancel, look = _files(tmp_path)
    local = _run(tmp_path, "local", cancel, world_path)
    _run(tmp_path, "look", look, world_path)  # the process's last file is another one
    on_ray = _run(tmp_path, "ray", cancel, world_path, backend="ray")
    assert (on_ray / TRIALS_FILE).read_text() == (local / TRIALS_FILE).read_text()
