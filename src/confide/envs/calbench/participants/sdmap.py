"""SD-MAP, Scheduling-Difficulty MAP: the low-disclosure, feasibility-first reference
protocol (the CalBench paper, section 3.1, D.2; Modi and Veloso 2004).

Meetings are handled in stream order. The lowest-id participant initiates: it walks its
own calendar in slot order and, for the first untried slot it could use itself, sends a
`propose` (meeting id and slot only) to every other participant. A responder answers
`reply` with status PENDING when the slot is free, holds a movable errand, or holds a prior
meeting that the scheduling-difficulty rule lets the new meeting bump (the bump is then
recorded as tentative); otherwise IMPOSSIBLE. All PENDING -> `confirm` to everyone;
otherwise the next slot; no slot left -> `fail` and the meeting is unresolved. No costs or
cost vectors are ever sent (D.2 footprint).

Bumping rule (D.2): with Delta(M) = sum of sigma(a) over M's participants other than the
evaluating agent, a prior meeting M_old may be bumped by M_new iff Delta(M_old) <
Delta(M_new). sigma comes from `sd_model` (agent id -> difficulty), default 1 for every
agent, which reduces the rule to "the prior meeting has strictly fewer other
participants".

Bump repair (D.2): a participant whose confirmed slot held a bumpable prior meeting moves
its copy of that meeting to its lowest free slot in the same DECISION batch that
schedules the new meeting. In the cheap talk of its next round it sends a
`reschedule_request` to the bumped meeting's initiator (its lowest-id participant; the
bumper itself when it is that agent). The initiator searches a repair slot like a normal
negotiation with `propose_reschedule` to every other participant of the bumped meeting,
who answer `reschedule_reply` (PENDING if they can put their copy there: the slot is free,
holds their copy, or holds a movable errand); all PENDING -> `confirm_reschedule`, none
left -> `fail_reschedule`. Agreed moves are applied in the same round: current
participants in their DECISION batch, everyone else in VOLUNTARY (they were activated by
the repair messages). A failed repair leaves the bumped meeting where each calendar has it
(the pre-bump slot everywhere except on the bumper's calendar, where the new meeting now
sits), so it stays inconsistent and counts as not scheduled.

Short budgets (the paper configuration's 4 sweeps cut negotiations off). A
participant left without an agreed slot (every slot IMPOSSIBLE, or a confirm the budget
cut off) first submits no schedule: D.2 leaves the meeting unresolved ("If no slot
succeeds, the initiator sends a fail DM and the meeting is unresolved"). A.5 rule 6
("exactly one schedule action") rejects that batch and A.3's retry message asks for a
complete batch again (its example conflict is exactly "Expected exactly 1 schedule
action, got 0"), so the DECISION phase does not end there. Which slot a retry names the
text does not say; we follow the published engine, which produced the paper's numbers:
retry k (attempt k + 1) schedules at the k-th slot, counting from 0, of those the seat
could take without moving a meeting (free, or a movable errand) and does not hold for a
negotiation. The first such slot is never used, since the count starts at retry 1. The
copies rarely agree, so the meeting stays unresolved, and the valid batches stand (section
3, A.5).

Holds (not decided by the text: D.2 says what a PENDING reply answers, not how long it
binds; we follow the published engine). A PENDING reply holds its slot until that
negotiation's confirm or fail reaches the seat, not when the initiator moves on (responders
are not told), so a negotiation the budget cut off keeps its holds into later rounds; an
initiator holds the slot it is proposing until it moves on. Held slots are answered
IMPOSSIBLE, never proposed and never taken by a retry. A message the budget left unread is
drained at the seat's next turn (A.4), in a later round too: a late propose is answered
like any other, against the seat's current calendar, and holds its slot; a late
confirm or fail ends that negotiation's holds. Here we depart from the published client on
purpose. It also takes a late confirm's slot as the agreed slot of the current round's
meeting; D.2's confirm agrees the slot of the meeting it names ("the slot is agreed"), so
we do not. On the canonical suite at 4 sweeps this changes the paid cost of 4 of 90 games
and no meeting count.

Decided by the text: "movable errand" means not blocked (section 3) and displaceable to a
free slot (D.1's local check, "a movable errand can be displaced to a known free slot";
A.5 rule 5); a repair whose participants the open channel cannot reach is abandoned (A.4:
"Participant-only groupchat does not activate non-participants", so under the
participant groupchat the bumped meeting's other participants never hear of it).
Not decided by it (D.2 describes one negotiation at a time and says nothing of two
running in one round): a seat promises each slot to at most one negotiation at a time (the
holds above), so concurrent meeting and repair negotiations never double-book a slot; a
repair's responder holds the proposed slot until the repair moves on, and unfinished repair
negotiations restart at the repair initiator's next cheap-talk turn in a later round. D.2
says a failed repair "falls back to its pre-bump slot", which the bumper's calendar cannot
do (the new meeting holds that slot), hence the reading above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    CalendarView,
    CheapTalkObservation,
    ToolCall,
)
from confide.envs.calbench.participants.base import (
    Incoming,
    ProtocolParticipant,
    is_movable_errand,
    plan_batch,
    slot_of_meeting,
)

PENDING = "PENDING"
IMPOSSIBLE = "IMPOSSIBLE"

Key = tuple[str, int]
"""A negotiation: ("meeting", id) for the round's meeting, ("repair", id) for a bump repair."""

_KINDS = {
    "meeting": ("propose", "reply", "confirm", "fail"),
    "repair": ("propose_reschedule", "reschedule_reply", "confirm_reschedule", "fail_reschedule"),
}


@dataclass
class _Search:
    """A slot search run by its initiator: one proposal at a time to `expected`."""

    key: Key
    expected: tuple[int, ...]
    tried: set[int] = field(default_factory=set)
    active: int | None = None
    replies: dict[int, str] = field(default_factory=dict)
    done: bool = False


class SdmapParticipant(ProtocolParticipant):
    """An SD-MAP seat (module docstring)."""

    protocol = "sdmap"

    def __init__(self, seat: str, sd_model: Mapping[int, float] | None = None) -> None:
        super().__init__(seat)
        self.sd_model = dict(sd_model or {})
        self._meeting_id = -1
        self._agreed: int | None = None
        self._tentative: dict[int, int] = {}  # slot -> prior meeting it would bump
        self._reserved: dict[int, Key] = {}
        self._open: set[Key] = set()  # meeting negotiations this seat holds slots for
        self._known: dict[int, tuple[int, ...]] = {}  # meeting id -> its participants
        self._search: _Search | None = None
        self._repairs: dict[int, _Search] = {}
        self._moves: dict[int, int] = {}  # prior meeting -> agreed repair slot
        self._bumps: list[tuple[int, int, int]] = []  # (bumped, new meeting, slot)
        self._requests: set[int] = set()  # bumped meetings to ask a repair for
        self._to_repair: set[int] = set()  # bumped meetings this seat must repair

    # -- round bookkeeping ----------------------------------------------------------------

    def _sync(self, obs: CalendarObservation) -> None:
        """Reset per-round state when a new round starts and turn applied bumps into
        repair requests."""
        if obs.meeting.meeting_id == self._meeting_id:
            return
        self._meeting_id = obs.meeting.meeting_id
        self._known[self._meeting_id] = obs.meeting.participants
        self._agreed = None
        self._tentative = {}
        self._reserved = {s: k for s, k in self._reserved.items() if k in self._open}
        self._search = None
        self._repairs = {}
        self._moves = {}
        view = obs.calendar
        for bumped, new, slot in self._bumps:
            mine = slot_of_meeting(view, bumped)
            if slot_of_meeting(view, new) == slot and mine is not None and mine != slot:
                self._requests.add(bumped)
        self._bumps = []

    def _reserve(self, key: Key, slot: int | None) -> None:
        for s in [s for s, k in self._reserved.items() if k == key]:
            del self._reserved[s]
        if slot is not None:
            self._reserved[slot] = key

    def _close(self, key: Key) -> None:
        """A negotiation ended (confirm or fail): its holds end with it."""
        self._reserve(key, None)
        self._open.discard(key)

    def _free_for(self, key: Key, slot: int) -> bool:
        return self._reserved.get(slot, key) == key

    def _difficulty(self, participants: tuple[int, ...]) -> float:
        return sum(self.sd_model.get(a, 1.0) for a in participants if a != self.agent)

    # -- local feasibility checks ----------------------------------------------------------

    def _meeting_check(
        self, obs: CalendarObservation, slot: int, meeting_id: int | None = None
    ) -> tuple[bool, int | None]:
        """(PENDING?, prior meeting it would bump) for meeting `meeting_id` (default: the
        round's) at `slot`."""
        mid = self._meeting_id if meeting_id is None else meeting_id
        if not 0 <= slot < obs.num_slots or not self._free_for(("meeting", mid), slot):
            return False, None
        item = obs.calendar.slots[slot]
        if item.kind == "free" or is_movable_errand(obs.calendar, item):
            return True, None
        if (
            item.kind == "meeting"
            and item.item_id is not None
            and item.item_id != mid
            and self._difficulty(item.participants) < self._difficulty(self._known.get(mid, ()))
        ):
            return True, item.item_id
        return False, None

    def _repair_check(self, view: CalendarView, bumped: int, slot: int) -> bool:
        """Can this seat put its copy of `bumped` at `slot`?"""
        if not 0 <= slot < len(view.slots) or not self._free_for(("repair", bumped), slot):
            return False
        if slot_of_meeting(view, bumped) is None:
            return False
        item = view.slots[slot]
        return (
            item.kind == "free"
            or (item.kind == "meeting" and item.item_id == bumped)
            or is_movable_errand(view, item)
        )

    # -- CHEAP_TALK -------------------------------------------------------------------------

    def cheap_talk(self, obs: CheapTalkObservation, incoming: Incoming) -> list[ToolCall]:
        self._sync(obs)
        out: list[ToolCall] = []
        for sender, payload in incoming:
            out += self._receive(obs, sender, payload)
        for bumped in sorted(self._requests):
            initiator = _initiator(obs.calendar, bumped)
            if initiator == self.agent:
                self._to_repair.add(bumped)
            elif initiator is not None:
                out += self.send(
                    obs, [initiator], {"type": "reschedule_request", "meeting_id": bumped}
                )
        self._requests.clear()
        meeting = obs.meeting
        if obs.is_participant and self.agent == min(meeting.participants) and self._search is None:
            others = tuple(a for a in meeting.participants if a != self.agent)
            self._search = _Search(("meeting", meeting.meeting_id), others)
        if self._search is not None:
            out += self._progress(obs, self._search, lambda s: self._meeting_check(obs, s)[0])
        for bumped in sorted(self._to_repair):
            search = self._repairs.get(bumped)
            if search is None:
                item_participants = _participants(obs.calendar, bumped)
                others = tuple(a for a in item_participants if a != self.agent)
                search = self._repairs[bumped] = _Search(("repair", bumped), others)
            out += self._progress(obs, search, partial(self._repair_check, obs.calendar, bumped))
        return out

    def _receive(
        self, obs: CalendarObservation, sender: int, payload: dict[str, Any]
    ) -> list[ToolCall]:
        kind, mid, slot = payload.get("type"), payload.get("meeting_id"), payload.get("slot")
        if type(mid) is not int:
            return []
        current = mid == self._meeting_id
        if kind == "propose" and type(slot) is int:
            ok, bumped = self._meeting_check(obs, slot, mid)
            if current:
                self._tentative = {slot: bumped} if bumped is not None else {}
            return self._answer(obs, sender, ("meeting", mid), slot, ok)
        if kind == "confirm" and current and type(slot) is int:
            self._confirmed_meeting(slot)
        elif kind in ("confirm", "fail"):
            self._close(("meeting", mid))
        elif kind == "reschedule_request":
            if _initiator(obs.calendar, mid) == self.agent and mid not in self._repairs:
                self._to_repair.add(mid)
        elif kind == "propose_reschedule" and type(slot) is int:
            ok = self._repair_check(obs.calendar, mid, slot)
            return self._answer(obs, sender, ("repair", mid), slot, ok)
        elif kind == "confirm_reschedule" and type(slot) is int:
            self._reserve(("repair", mid), slot)
            self._moves[mid] = slot
        elif kind == "fail_reschedule":
            self._reserve(("repair", mid), None)
        elif kind in ("reply", "reschedule_reply"):
            if kind == "reply":
                search = self._search if current else None
            else:
                search = self._repairs.get(mid)
            status = payload.get("status")
            if search is not None and slot == search.active and sender in search.expected:
                search.replies[sender] = PENDING if status == PENDING else IMPOSSIBLE
        return []

    def _confirmed_meeting(self, slot: int) -> None:
        self._agreed = slot
        self._close(("meeting", self._meeting_id))
        self._reserve(("meeting", self._meeting_id), slot)
        bumped = self._tentative.get(slot)
        if bumped is not None:
            self._bumps.append((bumped, self._meeting_id, slot))

    def _answer(
        self, obs: CalendarObservation, proposer: int, key: Key, slot: int, ok: bool
    ) -> list[ToolCall]:
        """Answer a proposal of search `key` PENDING or IMPOSSIBLE. A PENDING meeting
        reply adds a hold on the slot (earlier holds stay until a confirm or fail); a
        repair responder holds only the slot under discussion."""
        role, ident = key
        if role == "repair":
            self._reserve(key, slot if ok else None)
        elif ok:
            self._reserved[slot] = key
            self._open.add(key)
        status = PENDING if ok else IMPOSSIBLE
        body = {"type": _KINDS[role][1], "meeting_id": ident, "slot": slot, "status": status}
        return self.send(obs, [proposer], body)

    def _progress(
        self, obs: CheapTalkObservation, search: _Search, usable: Callable[[int], bool]
    ) -> list[ToolCall]:
        """Advance one slot search as its initiator."""
        if search.done:
            return []
        role, ident = search.key
        propose, _, confirm, fail = _KINDS[role]
        if search.active is not None and set(search.replies) >= set(search.expected):
            if all(v == PENDING for v in search.replies.values()):
                search.done = True
                self._settle(search.key, search.active)
                body = {"type": confirm, "meeting_id": ident, "slot": search.active}
                return self.send(obs, search.expected, body)
            self._reserve(search.key, None)
            search.active = None
        if search.active is not None:
            return []
        slot = next((s for s in range(obs.num_slots) if s not in search.tried and usable(s)), None)
        if slot is None:
            self._abandon(search)
            return self.send(obs, search.expected, {"type": fail, "meeting_id": ident})
        search.tried.add(slot)
        search.active = slot
        search.replies = {}
        if role == "meeting":
            _, bumped = self._meeting_check(obs, slot)
            self._tentative = {slot: bumped} if bumped is not None else {}
        self._reserve(search.key, slot)
        if role == "meeting":
            self._open.add(search.key)
        if not search.expected:
            return self._progress(obs, search, usable)
        calls = self.send(
            obs, search.expected, {"type": propose, "meeting_id": ident, "slot": slot}
        )
        if not calls:  # the open channel cannot reach these participants: give up quietly
            self._abandon(search)
        return calls

    def _abandon(self, search: _Search) -> None:
        search.done = True
        self._close(search.key)
        if search.key[0] == "repair":
            self._to_repair.discard(search.key[1])

    def _settle(self, key: Key, slot: int) -> None:
        role, ident = key
        if role == "meeting":
            self._confirmed_meeting(slot)
        else:
            self._moves[ident] = slot
            self._to_repair.discard(ident)

    # -- VOLUNTARY / DECISION ---------------------------------------------------------------

    def batch(self, obs: BatchObservation) -> list[ToolCall]:
        self._sync(obs)
        view = obs.calendar
        if obs.phase == "decision" and obs.attempt > 1:
            return self._retry(obs)
        moves = []
        for bumped, target in sorted(self._moves.items()):
            src = slot_of_meeting(view, bumped)
            if src is not None:
                moves.append((src, target, f"agreed repair slot for bumped meeting M{bumped}"))
        schedule: tuple[int, int] | None = None
        displace: list[tuple[int, str]] = []
        if obs.phase == "decision" and self._agreed is not None:
            schedule = (self._meeting_id, self._agreed)
            item = view.slots[self._agreed]
            if item.kind == "meeting" and self._agreed not in {src for src, _, _ in moves}:
                why = f"bumped by meeting M{self._meeting_id} (scheduling-difficulty rule)"
                displace.append((self._agreed, why))
        if schedule is None and not moves:
            return []
        plan = plan_batch(view, schedule=schedule, moves=moves, displace=displace)
        return plan if plan is not None else []

    def _retry(self, obs: BatchObservation) -> list[ToolCall]:
        """Retry k of a rejected DECISION batch (attempt k + 1): the meeting at the k-th
        slot, from 0, that this seat can take without moving a meeting and does not hold
        (module docstring, "Short budgets")."""
        view = obs.calendar
        usable = [
            s.slot
            for s in view.slots
            if (s.kind == "free" or is_movable_errand(view, s)) and s.slot not in self._reserved
        ]
        k = obs.attempt - 1
        if k >= len(usable):
            return []
        return plan_batch(view, schedule=(self._meeting_id, usable[k])) or []


def _participants(view: CalendarView, meeting_id: int) -> tuple[int, ...]:
    for slot in view.slots:
        if slot.kind == "meeting" and slot.item_id == meeting_id:
            return slot.participants
    return ()


def _initiator(view: CalendarView, meeting_id: int) -> int | None:
    """The lowest-id participant of a meeting this seat holds a copy of."""
    participants = _participants(view, meeting_id)
    return min(participants) if participants else None
