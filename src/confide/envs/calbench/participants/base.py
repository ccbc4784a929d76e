"""Shared machinery of the typed-JSON reference protocols (the CalBench paper §D.4).

A protocol seat reads only its observation: its own calendar view and the messages
delivered to it. Its messages are JSON payloads `{"protocol": <name>, "type": <kind>,
"to": [agent ids], ...}` with no natural-language content, so no semantic context can
leak (D.4). `to` names the addressees, which lets the same payload travel over whichever
channel the communication condition opens: one DM per addressee under `dm`, one post to
the participant groupchat when every addressee is a current participant, one post to the
all-agent groupchat otherwise; addressees that the open channel cannot reach are not
contacted. Receivers ignore payloads of other protocols and payloads not addressed to
them (a groupchat also shows them other agents' traffic).

Tool calls and envelopes are built `trusted` (core/trusted.py): a protocol builds them from
its own typed values, so validating them again would only slow every turn; an LLM seat's
replies are parsed and validated at the trust boundary (llm_parse.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from confide.core.trusted import builder
from confide.envs.calbench.actions import (
    AllAgentGroupchatCall,
    BatchObservation,
    CalendarObservation,
    CalendarView,
    CheapTalkObservation,
    DmCall,
    Envelope,
    ParticipantGroupchatCall,
    RescheduleCall,
    ScheduleCall,
    SlotView,
    ToolCall,
    agent_of,
)

Incoming = list[tuple[int, dict[str, Any]]]
_NOTHING = Envelope()
"""The answer of a turn with nothing to say (shared: the engine never mutates envelopes)."""
_envelope = builder(Envelope, "actions")
_dm = builder(DmCall, "to", "content", "payload")
_participant_post = builder(ParticipantGroupchatCall, "content", "payload")
_all_agent_post = builder(AllAgentGroupchatCall, "content", "payload")
_reschedule = builder(RescheduleCall, "item_id", "from_slot", "to_slot", "justification")
_schedule = builder(ScheduleCall, "meeting_id", "slot")


class ProtocolParticipant(ABC):
    """Base class: routes an observation to `cheap_talk` or `batch` with the protocol
    payloads addressed to this seat, and wraps the tool calls in an `Envelope`."""

    protocol: ClassVar[str]

    def __init__(self, seat: str) -> None:
        self.name = self.protocol
        self.seat = seat
        self.agent = agent_of(seat)

    async def act(self, observation: CalendarObservation) -> Envelope:
        return self.respond(observation)

    def respond(self, observation: CalendarObservation) -> Envelope:
        """`act` without the coroutine (a subclass adds to the envelope here)."""
        if observation.phase == "cheap_talk":  # the tag: no isinstance on a pydantic class
            actions = self.cheap_talk(observation, self._incoming(observation))
        else:
            actions = self.batch(observation)
        return _envelope(actions=actions) if actions else _NOTHING

    @abstractmethod
    def cheap_talk(self, obs: CheapTalkObservation, incoming: Incoming) -> list[ToolCall]:
        """Messages to send this CHEAP_TALK turn."""

    @abstractmethod
    def batch(self, obs: BatchObservation) -> list[ToolCall]:
        """The VOLUNTARY or DECISION batch, from what the seat learnt in CHEAP_TALK (the
        batch phases carry no inbox, A.3)."""

    def _incoming(self, obs: CheapTalkObservation) -> Incoming:
        out: Incoming = []
        for message in obs.new_messages:
            payload = message.payload
            if (
                isinstance(payload, dict)
                and payload.get("protocol") == self.protocol
                and isinstance(payload.get("to"), list)
                and self.agent in payload["to"]
            ):
                out.append((agent_of(message.sender), payload))
        return out

    def send(
        self, obs: CalendarObservation, to: Iterable[int], body: dict[str, Any]
    ) -> list[ToolCall]:
        """`body` addressed to agents `to`, over the channel the condition opens."""
        targets = sorted(set(to) - {self.agent})
        if not targets:
            return []
        if "dm" in obs.channels:
            return [
                _dm(
                    to=a,
                    content=None,
                    payload={"protocol": self.protocol, **body, "to": [a]},
                )
                for a in targets
            ]
        payload = {"protocol": self.protocol, **body, "to": targets}
        if (
            "participant_groupchat" in obs.channels
            and obs.is_participant
            and set(targets) <= set(obs.meeting.participants)
        ):
            return [_participant_post(content=None, payload=payload)]
        if "all_agent_groupchat" in obs.channels:
            return [_all_agent_post(content=None, payload=payload)]
        return []


# -- own-calendar helpers ------------------------------------------------------------------


def is_movable_errand(view: CalendarView, slot: SlotView) -> bool:
    """A non-blocked errand that has somewhere to go (some free slot exists)."""
    return slot.kind == "errand" and not slot.blocked and bool(view.free_slots)


def first_usable_slot(view: CalendarView) -> int | None:
    """The first slot of this calendar where the seat can put a meeting without moving
    another meeting: free, or a movable errand. A participant left without an agreed slot
    schedules there, because A.3's decision message asks every participant for "at least
    one schedule call"; the meeting then fails and the batch stands (section 3, A.5)."""
    for slot in view.slots:
        if slot.kind == "free" or is_movable_errand(view, slot):
            return slot.slot
    return None


def slot_of_meeting(view: CalendarView, meeting_id: int) -> int | None:
    item = view.meetings.get(meeting_id)
    return None if item is None else item.slot


Relocation = tuple[int, int, str]
"""(from_slot, to_slot, justification) of one reschedule."""


def plan_batch(
    view: CalendarView,
    *,
    schedule: tuple[int, int] | None = None,
    moves: Sequence[Relocation] = (),
    displace: Sequence[tuple[int, str]] = (),
) -> list[ToolCall] | None:
    """A valid A.5 batch for this calendar, or None if none exists.

    `schedule` is (meeting id, slot); `moves` are (from_slot, to_slot, justification) for
    meeting copies the protocol agreed to move; `displace` are (slot, justification) for
    meeting copies that must leave a slot to any free place. Movable errands found at any
    destination are displaced too. Landing slots are the lowest slots that are free (or
    vacated by this batch) and not destinations.
    """
    relocations = plan_relocations(view, schedule=schedule, moves=moves, displace=displace)
    if relocations is None:
        return None
    slots = view.slots
    actions: list[ToolCall] = [
        _reschedule(
            item_id=slots[src].item_id, from_slot=src, to_slot=dst, justification=why,
        )
        for src, dst, why in relocations
    ]
    if schedule is not None:
        actions.append(_schedule(meeting_id=schedule[0], slot=schedule[1]))
    return actions


def plan_relocations(
    view: CalendarView,
    *,
    schedule: tuple[int, int] | None = None,
    moves: Sequence[Relocation] = (),
    displace: Sequence[tuple[int, str]] = (),
) -> list[Relocation] | None:
    """The reschedules of `plan_batch`'s batch as plain tuples (protocols that only
    evaluate a plan, such as DSM scoring, need no tool calls); None if there is none."""
    slots = view.slots
    destinations = {dst for _, dst, _ in moves}
    if schedule is not None:
        destinations.add(schedule[1])
    moved = {src for src, _, _ in moves} | {src for src, _ in displace}
    evict: list[tuple[int, str]] = list(displace)
    for dst in sorted(destinations):
        if dst in moved:
            continue
        item = slots[dst]
        if item.kind == "free":
            continue
        if item.kind != "errand" or item.blocked:
            return None
        why = f"make room at slot {dst}"
        if schedule is not None and dst == schedule[1]:
            why = f"make room for meeting M{schedule[0]}"
        evict.append((dst, why))
    relocations: list[Relocation] = []
    if evict:  # most batches evict nothing: no landing slots to work out
        vacated = {src for src, _, _ in moves} | {src for src, _ in evict}
        landing = sorted((set(view.free_slots) | vacated) - destinations)
        for src, why in evict:
            land = next((s for s in landing if s != src), None)
            if land is None:
                return None
            landing.remove(land)
            relocations.append((src, land, why))
    relocations.extend(move for move in moves if move[0] != move[1])
    return relocations
