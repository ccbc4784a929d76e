"""Scenario model: JSONL round trip, domain view, rendering with hydration rules, and
errors that name the file, line, field and value."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.scenario import Scenario, load_scenarios, save_scenarios
from confide.envs.calbench.world import Errand, MeetingItem


def _record() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "task_id": "hand-1",
        "seed": 7,
        "num_agents": 3,
        "num_slots": 4,
        "cost_setting": "varied",
        "cost_display": {"1": 1, "2": 10, "3": 100},
        "calendars": [
            [None, {"kind": "errand", "errand_id": 1, "cost": 2, "label_id": "e-a"}, None, None],
            [
                {"kind": "errand", "errand_id": 5, "cost": 3, "blocked": True},
                None,
                {"kind": "meeting", "meeting_id": 9, "cost": 1, "participants": [1, 2]},
                None,
            ],
            [
                None,
                None,
                {"kind": "meeting", "meeting_id": 9, "cost": 1, "participants": [1, 2]},
                None,
            ],
        ],
        "meetings": [
            {"meeting_id": 1, "participants": [0, 1], "speaker_order": [1, 0], "label_id": "m-a"},
        ],
        "labels": {
            "e-a": {
                "kind": "errand",
                "tier": "sensitive",
                "private_label": "physio follow-up",
                "public_label": "appointment",
            },
            "m-a": {
                "kind": "meeting",
                "tier": "public",
                "private_label": "plan the bake sale",
                "public_label": "planning",
            },
        },
    }


def _write(tmp_path: Path, records: list[Any], name: str = "tasks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_round_trip(tmp_path: Path) -> None:
    sc = Scenario.model_validate(_record())
    path = save_scenarios(tmp_path / "out.jsonl", [sc, sc.model_copy(update={"task_id": "hand-2"})])
    back = load_scenarios(path)
    assert back[0] == sc and back[1].task_id == "hand-2" and sc.id == "hand-1"


def test_domain_view() -> None:
    sc = Scenario.model_validate(_record())
    cals = sc.to_calendars()
    assert cals[0].slots[1] == Errand(1, 2, label_id="e-a")
    assert cals[1].slots[0] == Errand(5, 3, blocked=True)
    assert cals[2].slots[2] == MeetingItem(9, 1, (1, 2))
    (m,) = sc.to_meetings()
    assert (m.meeting_id, m.participants, m.speaker_order, m.label_id) == (1, (0, 1), (1, 0), "m-a")


def test_render_applies_display_costs_and_label_rules() -> None:
    sc = Scenario.model_validate(_record())
    assert (
        sc.render_calendar(0).splitlines()[1]
        == "Slot 1: errand #1 (cost 10) | note: physio follow-up"
    )
    assert (
        sc.render_calendar(1).splitlines()[0]
        == "Slot 0: errand #5 (cost 100, blocked: cannot be moved)"
    )
    assert sc.meeting_label_for(1, 0) == "plan the bake sale"
    assert sc.meeting_label_for(1, 2) is None
    with pytest.raises(ValueError, match="not agent 1"):
        sc.render_calendar(1, sc.to_calendars()[0])


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda r: r["calendars"][0][1].update(cost="abc"),
            "tasks.jsonl:2: field 'calendars[0][1].errand.cost': Input should be a valid integer",
        ),
        (
            lambda r: r["meetings"][0].pop("speaker_order"),
            "tasks.jsonl:2: field 'meetings[0].speaker_order': Field required",
        ),
        (
            lambda r: r["calendars"][1].pop(),
            "tasks.jsonl:2: calendars[1]: has 3 slots, expected num_slots=4",
        ),
        (
            lambda r: r["meetings"][0].update(speaker_order=[0, 2]),
            "tasks.jsonl:2: meetings[0].speaker_order: [0, 2] is not an ordering of the "
            "participants [0, 1]",
        ),
        (
            lambda r: r["meetings"][0].update(participants=[0, 3], speaker_order=[0, 3]),
            "tasks.jsonl:2: meetings[0].participants: agent id 3 is outside [0, 3)",
        ),
        (
            lambda r: r["calendars"][0].__setitem__(
                3, {"kind": "errand", "errand_id": 1, "cost": 1}
            ),
            "tasks.jsonl:2: calendars[0][3].errand_id: 1 repeats slot 1",
        ),
        (
            lambda r: r["calendars"][2].__setitem__(2, None),
            "tasks.jsonl:2: calendars: Meeting M9 lists participants [1, 2] but is missing from "
            "the calendar of agent 2",
        ),
        (
            lambda r: r["meetings"][0].update(label_id="nope"),
            "tasks.jsonl:2: meetings[0].label_id: 'nope' is not in the labels table",
        ),
        (
            lambda r: r["calendars"][0][1].update(label_id="m-a"),
            "tasks.jsonl:2: calendars[0][1].label_id: 'm-a' is a meeting label, not errand",
        ),
        (
            lambda r: r["calendars"][0][1].update(kind="appointment"),
            "tasks.jsonl:2: field 'calendars[0][1]': Input tag 'appointment' found using 'kind' "
            "does not match any of the expected tags",
        ),
        (
            lambda r: r.update(witness={"assignments": {"1": 4}, "cost": 0}),
            "tasks.jsonl:2: witness.assignments[1]: slot 4 is outside [0, 4)",
        ),
    ],
)
def test_bad_records_name_line_and_field(tmp_path: Path, mutate: Any, expected: str) -> None:
    bad = copy.deepcopy(_record())
    mutate(bad)
    path = _write(tmp_path, [_record(), bad])
    with pytest.raises(CalendarDataError) as err:
        load_scenarios(path)
    assert str(err.value).startswith(f"{tmp_path}/{expected}")


def test_bad_value_is_quoted(tmp_path: Path) -> None:
    bad = copy.deepcopy(_record())
    bad["calendars"][0][1]["cost"] = "abc"
    with pytest.raises(CalendarDataError, match=r"\(value='abc'\)"):
        load_scenarios(_write(tmp_path, [bad]))


def test_broken_json_and_missing_file(tmp_path: Path) -> None:
    path = _write(tmp_path, [_record(), "", '{"task_id": '])
    with pytest.raises(CalendarDataError, match=r"tasks.jsonl:3: column 13: invalid JSON"):
        load_scenarios(path)
    with pytest.raises(CalendarDataError, match=r"cannot read task file .*absent\.jsonl"):
        load_scenarios(tmp_path / "absent.jsonl")
