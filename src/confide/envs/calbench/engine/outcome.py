"""The result of one game as the engine hands it to the metrics: the final calendars and,
per incoming meeting, whether it was resolved in its round (A.4 RESOLUTION)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from confide.envs.calbench.scenario import slot_from_domain
from confide.envs.calbench.world import Calendar, Slot


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
    stored = slot_from_domain(item)
    return None if stored is None else stored.model_dump(mode="json")


def consistent_slot(
    calendars: Sequence[Calendar], meeting_id: int, participants: Sequence[int]
) -> int | None:
    """The common slot of `meeting_id` on all its participants' calendars, else None."""
    slots = {calendars[a].slot_of_meeting(meeting_id) for a in participants}
    if len(slots) == 1:
        (slot,) = slots
        return slot
    return None
