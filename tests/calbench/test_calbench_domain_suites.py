"""Shipped suites (canonical = the CalBench paper §4.1, tiny), regeneration, and `load_tasks`
auto-detection of our format and the public fixture format."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from confide.core.options import parse_options as parse
from confide.envs.calbench.engine import DEFAULT_DECISION_RETRIES, DEFAULT_MAX_TURNS
from confide.envs.calbench.env import game_limits
from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.options import EnvOptions
from confide.envs.calbench.scenario import save_scenarios
from confide.envs.calbench.suites import (
    build_suite,
    load_suite,
    load_tasks,
    suite_names,
    suite_path,
)
from confide.envs.calbench.world import Errand, MeetingItem

SHARED = Path(
    os.environ.get("CONFIDE_SHARED") or Path(__file__).resolve().parents[2].parent / "shared"
)
FIXTURES = SHARED / "anchors" / "calbench" / "tasks"


def test_canonical_suite_matches_section_4_1() -> None:
    tasks = load_suite("canonical")
    assert len(tasks) == 90 and len({t.task_id for t in tasks}) == 90
    assert Counter(t.cost_setting for t in tasks) == {"uniform": 45, "varied": 45}
    cells: Counter[tuple[str, str | None, str | None]] = Counter()
    for t in tasks:
        assert (t.num_agents, t.num_slots, len(t.meetings)) == (5, 16, 5)
        assert all(len(m.participants) == 3 for m in t.meetings)
        assert set(t.densities) <= {0.6, 0.8, 1.0}
        assert t.oracle is not None and t.witness is not None and t.difficulty is not None
        assert t.oracle.cost <= t.witness.cost
        blocked = {
            sum(isinstance(x, Errand) and x.blocked for x in c.slots) for c in t.to_calendars()
        }
        assert len(blocked) == 1 and blocked <= {2, 4, 6}
        costs = {x.cost for row in t.calendars for x in row if x is not None}
        assert costs <= ({1} if t.cost_setting == "uniform" else {1, 2, 3})
        cells[(t.cost_setting, t.difficulty.cell, t.difficulty.bucket)] += 1
    assert len(cells) == 18 and set(cells.values()) == {5}


def test_tiny_suite() -> None:
    tasks = load_suite("tiny")
    assert len(tasks) == 6
    assert all((t.num_agents, t.num_slots, len(t.meetings)) == (3, 8, 2) for t in tasks)
    assert suite_names() == ("canonical", "tiny")
    assert {(t.max_turns_per_round, t.decision_retries) for t in tasks} == {(2, 1)}
    canonical = load_suite("canonical")
    assert {(t.max_turns_per_round, t.decision_retries) for t in canonical} == {(4, None)}


def test_game_limits_prefer_option_then_task_then_default() -> None:
    task = load_suite("tiny")[0]
    assert game_limits(_options({}), task) == (2, 1)
    explicit = _options({"max_turns_per_round": 5, "decision_retries": 0})
    assert game_limits(explicit, task) == (5, 0)
    assert game_limits(_options({"max_turns_per_round": None}), task) == (None, 1)
    bare = task.model_copy(update={"max_turns_per_round": None, "decision_retries": None})
    assert game_limits(_options({}), bare) == (DEFAULT_MAX_TURNS, DEFAULT_DECISION_RETRIES)


def test_shipped_tiny_equals_regeneration(tmp_path: Path) -> None:
    fresh = save_scenarios(tmp_path / "tiny.jsonl", build_suite("tiny").scenarios)
    assert fresh.read_text() == suite_path("tiny").read_text()


@pytest.mark.slow
def test_shipped_canonical_equals_regeneration(tmp_path: Path) -> None:
    fresh = save_scenarios(tmp_path / "canonical.jsonl", build_suite("canonical").scenarios)
    assert fresh.read_text() == suite_path("canonical").read_text()


def test_load_suite_with_label_bank(tmp_path: Path) -> None:
    items = [
        {
            "label_id": f"{k}-{t}",
            "kind": k,
            "tier": t,
            "private_label": f"{k} {t} detail",
            "public_label": "busy",
        }
        for k in ("errand", "meeting")
        for t in ("public", "neutral", "sensitive")
    ]
    bank = tmp_path / "bank.json"
    bank.write_text(json.dumps({"schema_version": 1, "bank_id": "b", "items": items}))
    tasks = load_suite("tiny", label_bank=bank)
    assert all(m.label_id is not None for t in tasks for m in t.meetings)
    assert load_suite("tiny", label_bank=bank) == tasks


def test_unknown_suite() -> None:
    with pytest.raises(
        CalendarDataError, match="unknown CalBench suite 'huge'; available: canonical, tiny"
    ):
        load_suite("huge")


def _fixture_record(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task_id": "mine-1",
        "seed": 3,
        "version": 1,
        "params": {"num_slots": 4, "total_agents": 2, "density": 0.5},
        "calendars": [
            [{"errand_id": 1, "cost": 100}, {"meeting_id": 7, "cost": 1}, None, None],
            [
                None,
                {"meeting_id": 7, "cost": 1},
                {"errand_id": 9, "cost": 1, "blocked": True},
                None,
            ],
        ],
        "meetings": [{"id": 1, "participants": [0, 1], "duration": 1, "cost": 1}],
        "witness_solution": {"assignments": {"1": 3}, "cost": 0},
        "optimal": {"assignments": {"1": 3}, "cost": 0},
        "greedy": {"assignments": {"1": 3}, "cost": 0},
        "difficulty": "easy",
        "difficulty_score": 0.0,
        "difficulty_scorer": "made_up",
        "unused_key": [1, 2, 3],
    }
    record.update(overrides)
    return record


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "fixture.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_load_tasks_reads_the_public_fixture_format(tmp_path: Path) -> None:
    (task,) = load_tasks(_write(tmp_path, [_fixture_record()]))
    cals = task.to_calendars()
    assert cals[0].slots[1] == MeetingItem(7, 1, (0, 1))
    assert cals[1].slots[2] == Errand(9, 1, blocked=True)
    assert task.cost_setting == "varied" and task.display_cost(100) == 100
    assert task.meetings[0].speaker_order == (0, 1)
    assert task.published is not None and task.published.optimal_cost == 0
    assert task.published.source == f"{tmp_path}/fixture.jsonl:1"
    assert task.witness is not None and task.witness.assignments == {1: 3}


def test_load_tasks_reads_our_format(tmp_path: Path) -> None:
    ours = save_scenarios(tmp_path / "ours.jsonl", load_suite("tiny")[:2])
    assert [t.task_id for t in load_tasks(ours)] == [t.task_id for t in load_suite("tiny")[:2]]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            _fixture_record(meetings=[{"id": 1, "participants": [0, 1], "duration": 2}]),
            "fixture.jsonl:2: field 'meetings[0].duration': only 1-slot meetings are supported "
            "(value=2)",
        ),
        (
            _fixture_record(params={"total_agents": 2}),
            "fixture.jsonl:2: field 'params.num_slots': Field required",
        ),
        (
            _fixture_record(
                calendars=[[None] * 4, [None, None, {"errand_id": "x", "cost": 1}, None]]
            ),
            "fixture.jsonl:2: field 'calendars[1][2].errand.errand_id': Input should be a valid "
            "integer",
        ),
        (
            _fixture_record(meetings=[{"id": 1, "participants": [0, 5]}]),
            "fixture.jsonl:2: meetings[0].participants: agent id 5 is outside [0, 2)",
        ),
    ],
)
def test_bad_fixture_records_name_line_and_field(
    tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    with pytest.raises(CalendarDataError) as err:
        load_tasks(_write(tmp_path, [_fixture_record(), record]))
    assert str(err.value).startswith(f"{tmp_path}/{message}")


def test_unknown_format_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text('\n{"hello": 1}\n')
    with pytest.raises(CalendarDataError, match=r"odd.jsonl:2: cannot tell the task format"):
        load_tasks(path)
    path.write_text("\n")
    with pytest.raises(CalendarDataError, match="no tasks in file"):
        load_tasks(path)


def test_every_public_fixture_task_loads() -> None:
    files = sorted(FIXTURES.glob("*_full.jsonl"))
    if len(files) < 2:
        pytest.skip(f"public CalBench fixtures not found under {FIXTURES}")
    for path in files:
        tasks = load_tasks(path)
        assert len(tasks) == 108
        assert all(t.published is not None and t.published.optimal_cost is not None for t in tasks)


def _options(raw: dict[str, object]) -> EnvOptions:
    return parse(EnvOptions, raw, "calbench")
