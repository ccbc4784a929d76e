"""The result of one game as the engine hands it to the metrics: the final calendars and,
per incoming meeting, whether it was resolved in its round (A.4 RESOLUTION).

Scoring reads it back from the trace (`outcome_from_events`): a calendar changes only by
a committed batch, so replaying every `batch_applied` event's schedule and reschedule
calls on the scenario's initial calendars gives the final ones; each replayed batch must
make exactly the moves the event recorded, else the trace does not belong to the task.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import (
    Action,
    Calendar,
    Errand,
    Reschedule,
    Schedule,
    Slot,
    apply_batch,
)
from confide.errors import ConfideError


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """Final calendars (agent order) and meeting id -> resolved in its own round."""

    calendars: tuple[Calendar, ...]
    resolved: dict[int, bool]

    def to_json(self) -> dict[str, Any]:
        """Plain data for the trace footer's final state."""
        return {
            "calendars": [[_slot_json(item) for item in cal.slots] for cal in self.calendars],
            "resolved": {str(k): v for k, v in sorted(self.resolved.items())},
        }


def _slot_json(item: Slot) -> dict[str, Any] | None:
    """`slot_from_domain(item).model_dump(mode="json")`, written out (it runs for every
    slot of every final calendar; a test holds the two equal)."""
    if item is None:
        return None
    if isinstance(item, Errand):
        return {
            "kind": "errand", "errand_id": item.errand_id, "cost": item.cost,
            "blocked": item.blocked, "label_id": item.label_id,
        }
    return {
        "kind": "meeting", "meeting_id": item.meeting_id, "cost": item.cost,
        "participants": list(item.participants), "label_id": item.label_id,
    }


def consistent_slot(
    calendars: Sequence[Calendar], meeting_id: int, participants: Sequence[int]
) -> int | None:
    """The common slot of `meeting_id` on all its participants' calendars, else None."""
    slots = {calendars[a].slot_of_meeting(meeting_id) for a in participants}
    if len(slots) == 1:
        (slot,) = slots
        return slot
    return None


def outcome_from_events(scenario: Scenario, events: Iterable[object]) -> GameOutcome:
    """The outcome of the game recorded in `events` (module docstring)."""
    calendars = list(scenario.to_calendars())
    meetings = scenario.to_meetings()
    resolved: dict[int, bool] = {}
    for event in events:
        kind = _kind(type(event))
        if kind == "resolution":
            resolution = cast(ev.Resolution, event)
            resolved[resolution.data.meeting_id] = resolution.data.resolved
        elif kind == "applied":
            applied = cast(ev.BatchApplied, event)
            if applied.seat is None or applied.round is None:
                continue
            agent = agent_of(applied.seat)
            actions = [a for t in applied.data.actions if (a := _action(t)) is not None]
            result = apply_batch(
                calendars[agent],
                actions,
                meeting=meetings[applied.round],
                require_schedule=applied.data.phase == "DECISION",
            )
            moves = [
                ["errand" if isinstance(item, Errand) else "meeting", item.item_id, src, dst]
                for item, src, dst in result.moves
            ]
            recorded = [[m.kind, m.item_id, m.from_slot, m.to_slot] for m in applied.data.moves]
            if moves != recorded:
                raise ConfideError(
                    f"calbench {scenario.task_id}: round {applied.round}, {applied.seat}: the "
                    f"recorded batch moves {recorded} but replays as {moves}; the trace was "
                    "not played on this task"
                )
            calendars[agent] = result.calendar
    return GameOutcome(tuple(calendars), resolved)


_KINDS: dict[type, str] = {}


def _kind(cls: type) -> str:
    """The part of the replay an event class takes part in ("" = none), worked out once
    per class: an isinstance test against a pydantic model class that fails goes through
    the ABC machinery (about half a microsecond), and a game has hundreds of events."""
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = (
            "resolution" if issubclass(cls, ev.Resolution)
            else "applied" if issubclass(cls, ev.BatchApplied)
            else ""
        )
    return kind


def _action(tool: dict[str, Any]) -> Action | None:
    """A recorded schedule or reschedule call as the engine applied it (None: a message,
    which a batch ignores)."""
    if tool.get("type") == "schedule":
        return Schedule(int(tool["meeting_id"]), int(tool["slot"]))
    if tool.get("type") == "reschedule":
        return Reschedule(
            int(tool["item_id"]),
            int(tool["from_slot"]),
            int(tool["to_slot"]),
            str(tool.get("justification", "")),
        )
    return None
