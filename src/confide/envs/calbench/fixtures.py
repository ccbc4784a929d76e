"""Loader for the public CalBench fixture format (one task per JSONL line, as in the
published tasks/*_full.jsonl files) into our `Scenario`.

Fields read: `task_id`, `seed`, `params.num_slots`, `params.total_agents`, `calendars`
(slots `null`, `{"errand_id", "cost", "blocked"?}` or `{"meeting_id", "cost"}`),
`meetings` (`id`, `participants`, `duration`, `cost`, optional `speaker_order`),
`witness_solution`, and the published `optimal`, `greedy`, `difficulty`,
`difficulty_score`, `difficulty_scorer` (kept in `Scenario.published` for comparison,
never trusted as our own results). Other keys are ignored.

Decisions: only 1-slot meetings exist in our model, so `duration != 1` is an error; costs
keep their raw values (1/100/1000 in the varied file) with an identity display map, so our
oracle's cost is directly comparable with the published `optimal.cost`; `cost_setting` is
`uniform` when every errand costs 1, else `varied`; a missing `speaker_order` defaults to
the participants in id order (the initiator convention of D.1); participants of a
meeting already on the calendars are the agents whose calendars hold it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from confide.envs.calbench.errors import CalendarDataError, describe_validation_error
from confide.envs.calbench.scenario import Scenario, read_jsonl


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Errand(_Loose):
    errand_id: int
    cost: int
    blocked: bool = False


class _PriorMeeting(_Loose):
    meeting_id: int
    cost: int


def _slot_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "meeting" if "meeting_id" in value else "errand"
    return None


_Slot = Annotated[
    Annotated[_Errand, Tag("errand")] | Annotated[_PriorMeeting, Tag("meeting")],
    Discriminator(_slot_kind),
]


class _Meeting(_Loose):
    id: int
    participants: tuple[int, ...] = Field(min_length=1)
    duration: int = 1
    cost: int = 1
    speaker_order: tuple[int, ...] | None = None


class _Solution(_Loose):
    cost: int | None = None
    assignments: dict[int, int] = Field(default_factory=dict)


class _Params(_Loose):
    num_slots: int
    total_agents: int


class FixtureTask(_Loose):
    """One record of the public fixture format (only the fields we use)."""

    task_id: str
    seed: int | None = None
    params: _Params
    calendars: tuple[tuple[_Slot | None, ...], ...]
    meetings: tuple[_Meeting, ...]
    witness_solution: _Solution | None = None
    optimal: _Solution | None = None
    greedy: _Solution | None = None
    difficulty: str | None = None
    difficulty_score: float | None = None
    difficulty_scorer: str | None = None


def is_fixture_record(raw: Any) -> bool:
    """True for a public-fixture record, False for a confide scenario record."""
    return isinstance(raw, dict) and "params" in raw and "schema_version" not in raw


def _convert(task: FixtureTask, where: str) -> Scenario:
    for k, m in enumerate(task.meetings):
        if m.duration != 1:
            raise CalendarDataError(
                f"{where}: field 'meetings[{k}].duration': only 1-slot meetings are supported "
                f"(value={m.duration!r})"
            )
    holders: dict[int, list[int]] = {}
    for agent, row in enumerate(task.calendars):
        for slot in row:
            if isinstance(slot, _PriorMeeting):
                holders.setdefault(slot.meeting_id, []).append(agent)
    calendars: list[list[dict[str, Any] | None]] = []
    for row in task.calendars:
        out: list[dict[str, Any] | None] = []
        for slot in row:
            if isinstance(slot, _Errand):
                out.append({"kind": "errand", "errand_id": slot.errand_id, "cost": slot.cost,
                            "blocked": slot.blocked})
            elif isinstance(slot, _PriorMeeting):
                out.append({"kind": "meeting", "meeting_id": slot.meeting_id,
                            "cost": slot.cost,
                            "participants": tuple(holders[slot.meeting_id])})
            else:
                out.append(None)
        calendars.append(out)
    errand_costs = {s["cost"] for row in calendars for s in row
                    if s is not None and s["kind"] == "errand"}
    all_costs = errand_costs | {m.cost for m in task.meetings}
    witness = task.witness_solution
    published = {
        "source": where,
        "optimal_cost": task.optimal.cost if task.optimal else None,
        "optimal_assignments": task.optimal.assignments if task.optimal else {},
        "greedy_cost": task.greedy.cost if task.greedy else None,
        "difficulty": task.difficulty,
        "difficulty_score": task.difficulty_score,
        "difficulty_scorer": task.difficulty_scorer,
    }
    # one validation of the whole task (in pydantic's core) instead of one per slot
    return Scenario.model_validate({
        "task_id": task.task_id,
        "seed": task.seed,
        "num_agents": task.params.total_agents,
        "num_slots": task.params.num_slots,
        "cost_setting": "uniform" if errand_costs <= {1} else "varied",
        "cost_display": {c: c for c in sorted(all_costs)},
        "calendars": calendars,
        "meetings": [
            {"meeting_id": m.id, "participants": m.participants,
             "speaker_order": m.speaker_order if m.speaker_order is not None
             else m.participants,
             "cost": m.cost}
            for m in task.meetings
        ],
        "witness": (
            {"assignments": witness.assignments, "cost": witness.cost}
            if witness is not None and witness.cost is not None and witness.assignments
            else None
        ),
        "published": published,
    })


def parse_fixture_record(raw: Any, where: str) -> Scenario:
    """Validate one public-fixture record and convert it; errors are prefixed by `where`."""
    try:
        task = FixtureTask.model_validate(raw)
    except ValidationError as exc:
        raise CalendarDataError(describe_validation_error(exc, where)) from None
    try:
        return _convert(task, where)
    except ValidationError as exc:
        raise CalendarDataError(describe_validation_error(exc, where)) from None


def load_fixture_file(path: str | Path) -> list[Scenario]:
    """Every task of a public fixture JSONL file."""
    return [parse_fixture_record(raw, f"{path}:{lineno}") for lineno, raw in read_jsonl(path)]
