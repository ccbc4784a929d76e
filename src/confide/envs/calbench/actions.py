"""What a CalBench seat is shown and what it may answer (the CalBench paper §A.2-A.5).

Every seat -- a reference protocol or an LLM agent -- sees one of two observations:

- `CheapTalkObservation` (CHEAP_TALK, A.3 round-start and turn messages): the round's
  meeting as this seat may see it, its own calendar, its cumulative penalty, the turn
  budget, the channels open under the communication condition, and the messages the
  postbox delivered to it since its previous turn (`new_messages`, drained once).
- `BatchObservation` (VOLUNTARY and DECISION, A.3 voluntary/decision/retry messages): the
  meeting, a frozen snapshot of its calendar, the attempt counter and, on a retry, the
  exact conflict strings of A.5 that rejected the previous batch.

Both are built by the engine only from the seat's own calendar and postbox deliveries.

The answer is an `Envelope`, the A.2 response format: free-text `thinking` (logged, never
forwarded) and a list of tool calls -- `dm`, `participant_groupchat`, `all_agent_groupchat`
(each with `content` text for language agents and/or a typed JSON `payload` for reference
protocols), `schedule` and `reschedule` (with a justification). An LLM seat renders the
observation (the calendar's `text` is the A.1 render with display costs and the labels the
seat may see) and parses its model's JSON into an `Envelope`.

Decided by the text: costs in views are display costs (section 3: "agents are shown a
logarithmic scale {1,10,100}"); batch observations carry no inbox (A.3: the decision
message is the meeting's metadata and "a frozen calendar snapshot"); the meeting label is
shown only to participants (A.1: "An agent sees a meeting's private label only if it is a
participant"). Not decided by it: a seat's name, `agent<i>` for scenario agent i (A.2 and
A.4 address agents by integer id only; the name is our trace label).
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from confide.core.message import Message

SEAT_PREFIX = "agent"

ChannelName = Literal["dm", "participant_groupchat", "all_agent_groupchat"]
Condition = Literal["dm", "participant-groupchat", "all-agent-groupchat"]
CONDITIONS: tuple[Condition, ...] = ("dm", "participant-groupchat", "all-agent-groupchat")
CONDITION_CHANNELS: dict[str, tuple[ChannelName, ...]] = {
    "dm": ("dm",),
    "participant-groupchat": ("participant_groupchat",),
    "all-agent-groupchat": ("all_agent_groupchat",),
}
"""Each communication condition exposes exactly one channel (A.3)."""


def seat_of(agent: int) -> str:
    """The seat name of scenario agent `agent`."""
    return f"{SEAT_PREFIX}{agent}"


@lru_cache(maxsize=1024)
def agent_of(seat: str) -> int:
    """The scenario agent id behind seat name `seat` (inverse of `seat_of`; memoized, it
    runs for every message on the hot path)."""
    if not seat.startswith(SEAT_PREFIX) or not seat[len(SEAT_PREFIX) :].isdigit():
        raise ValueError(f"not a CalBench seat name: {seat!r} (expected {SEAT_PREFIX}<id>)")
    return int(seat[len(SEAT_PREFIX) :])


# -- views -------------------------------------------------------------------------------


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SlotView(_View):
    """One slot of the seat's own calendar."""

    slot: int
    kind: Literal["free", "errand", "meeting"]
    item_id: int | None = None
    cost: int | None = Field(default=None, description="Display cost of moving the item.")
    blocked: bool = False
    participants: tuple[int, ...] = ()
    label: str | None = Field(default=None, description="Private note the owner may see.")


class CalendarView(_View):
    """The seat's own calendar: structured slots plus the A.1 text render.

    The derived indexes below are computed once per view (views are immutable and shared
    across a seat's turns until its calendar changes); reference protocols query them on
    every plan they score."""

    owner: int
    slots: tuple[SlotView, ...]
    text: str

    @cached_property
    def free_slots(self) -> tuple[int, ...]:
        """Indices of the free slots, ascending."""
        return tuple(s.slot for s in self.slots if s.kind == "free")

    @cached_property
    def meetings(self) -> dict[int, SlotView]:
        """The slot view of each meeting on this calendar, by meeting id."""
        return {s.item_id: s for s in self.slots if s.kind == "meeting" and s.item_id is not None}


class MeetingView(_View):
    """The meeting of the current round as this seat may see it."""

    meeting_id: int
    participants: tuple[int, ...]
    speaker_order: tuple[int, ...]
    cost: int = Field(description="Display cost of moving it once scheduled, per calendar.")
    label: str | None = None


class RefusedAction(_View):
    """A tool call of this seat's previous reply that the engine refused, and why; the
    next observation carries it so the seat is told."""

    action: str = Field(description="The refused tool call's type (dm, schedule, ...).")
    reason: str


class _Observation(_View):
    seat: str
    agent: int
    all_agents: tuple[int, ...]
    num_slots: int
    round: int
    num_rounds: int
    meeting: MeetingView
    is_participant: bool
    calendar: CalendarView
    penalty: int = Field(description="Display cost this seat has paid in earlier rounds.")
    channels: tuple[ChannelName, ...] = Field(description="Channels open in this condition.")
    new_messages: tuple[Message, ...] = ()
    refused: tuple[RefusedAction, ...] = ()


class CheapTalkObservation(_Observation):
    """A CHEAP_TALK turn (A.3 round-start message when `round_start`, else turn message)."""

    phase: Literal["cheap_talk"] = "cheap_talk"
    turn: int
    max_turns: int | None
    round_start: bool


class BatchObservation(_Observation):
    """A VOLUNTARY or DECISION batch request (A.3), or its retry with the conflicts."""

    phase: Literal["voluntary", "decision"]
    attempt: int = Field(description="1 for the first submission, then 2, 3, ...")
    max_attempts: int
    conflicts: tuple[str, ...] = ()


CalendarObservation = CheapTalkObservation | BatchObservation


# -- tool calls ----------------------------------------------------------------------------


class _Tool(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DmCall(_Tool):
    """A private message to one agent (A.4)."""

    type: Literal["dm"] = "dm"
    to: int
    content: str | None = None
    payload: dict[str, Any] | None = None


class ParticipantGroupchatCall(_Tool):
    """A message to the current meeting's participants."""

    type: Literal["participant_groupchat"] = "participant_groupchat"
    content: str | None = None
    payload: dict[str, Any] | None = None


class AllAgentGroupchatCall(_Tool):
    """A message to every agent of the task."""

    type: Literal["all_agent_groupchat"] = "all_agent_groupchat"
    content: str | None = None
    payload: dict[str, Any] | None = None


class ScheduleCall(_Tool):
    """Write the current meeting into `slot` (DECISION only)."""

    type: Literal["schedule"] = "schedule"
    meeting_id: int
    slot: int


class RescheduleCall(_Tool):
    """Move the item `item_id` at `from_slot` to `to_slot`, with the reason the paper
    requires for every move of the user's commitments (section 3)."""

    type: Literal["reschedule"] = "reschedule"
    item_id: int
    from_slot: int
    to_slot: int
    justification: str = ""


MessageCall = DmCall | ParticipantGroupchatCall | AllAgentGroupchatCall
ToolCall = Annotated[
    DmCall | ParticipantGroupchatCall | AllAgentGroupchatCall | ScheduleCall | RescheduleCall,
    Field(discriminator="type"),
]


class Envelope(BaseModel):
    """A seat's response: `{"thinking": ..., "actions": [...]}` (A.2, A.5)."""

    model_config = ConfigDict(extra="forbid")

    thinking: str = ""
    actions: list[ToolCall] = Field(default_factory=list)


def tool_dict(tool: ToolCall) -> dict[str, Any]:
    """A tool call as plain JSON data for the trace (None fields dropped). Read from the
    model's fields rather than serialized: payloads are already JSON data and this runs
    for every tool call of every turn."""
    return {name: value for name, value in tool.__dict__.items() if value is not None}


class Participant(Protocol):
    """A seat of a CalBench game (what a reference protocol, an LLM agent and a custom
    `py:` or plugin participant implement)."""

    name: str

    async def act(self, observation: CalendarObservation) -> Envelope:
        """Answer one observation with an envelope of tool calls."""
        ...
