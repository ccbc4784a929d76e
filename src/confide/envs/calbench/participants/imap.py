"""IMAP, Incremental MAP: the full-disclosure, low-cost reference protocol (the CalBench paper
section 3.1, D.1).

For each meeting the lowest-id participant is the initiator. On its first turn it sends
one `cost_request` to every other participant listing every slot index. Each responder
answers with one `costs` message: for every requested slot its local insertion cost -- 0
if the slot is free, the errand's (display) cost if it holds a movable errand and the
calendar has a free slot to move it to, None (infeasible) otherwise; prior meetings are
hard commitments (IMAP never bumps). When every vector is in, the initiator adds its own
vector, picks the slot with the minimum total over slots feasible for everybody (ties:
lowest slot index) and sends a `decision` to every responder (slot None when no slot is
feasible). In DECISION every participant moves the errand at the agreed slot, if any, to
its lowest free slot and schedules the meeting there.

Payloads: `{"type": "cost_request", "meeting_id", "slots"}`, `{"type": "costs",
"meeting_id", "slots", "costs"}`, `{"type": "decision", "meeting_id", "slot"}` (plus
`protocol` and `to`, see base.py). Under DMs that is exactly two messages per responder
plus one decision per responder, i.e. 6 messages for a 3-participant meeting and 2.00
messages per successful participant-meeting (D.1 footprint).

Decided by the text: the cost vector uses the display costs the agent is shown (section
3: "agents are shown a logarithmic scale {1,10,100}"; D.1's "local insertion cost" can
only be what the agent sees); a participant left without an agreed slot (no jointly
feasible slot, or a decision that never reached it) still schedules the meeting, at the
first slot it can take itself, since A.3's decision message asks for "at least one
schedule call" (base.py `first_usable_slot`); the meeting then fails (section 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarView,
    CheapTalkObservation,
    ToolCall,
)
from confide.envs.calbench.participants.base import (
    Incoming,
    ProtocolParticipant,
    first_usable_slot,
    plan_batch,
)


def insertion_costs(view: CalendarView) -> list[int | None]:
    """D.1 local insertion cost of every slot (None = infeasible)."""
    movable = bool(view.free_slots)
    costs: list[int | None] = []
    for slot in view.slots:
        if slot.kind == "free":
            costs.append(0)
        elif movable and slot.kind == "errand" and not slot.blocked:
            costs.append(slot.cost)
        else:
            costs.append(None)
    return costs


def choose_slot(vectors: list[list[int | None]]) -> int | None:
    """The slot with the minimum total cost over slots feasible in every vector (ties:
    lowest index); None when no slot is feasible for all."""
    best: tuple[int, int] | None = None
    for slot, column in enumerate(zip(*vectors, strict=True)):
        if any(c is None for c in column):
            continue
        total = sum(c for c in column if c is not None)
        if best is None or total < best[0]:
            best = (total, slot)
    return None if best is None else best[1]


@dataclass
class _RoundState:
    meeting_id: int
    requested: bool = False
    decided: bool = False
    costs: dict[int, list[int | None]] = field(default_factory=dict)
    agreed: int | None = None


class ImapParticipant(ProtocolParticipant):
    """An IMAP seat (module docstring)."""

    protocol = "imap"

    def __init__(self, seat: str) -> None:
        super().__init__(seat)
        self._state = _RoundState(meeting_id=-1)
        self._costs_of: tuple[CalendarView | None, list[int | None]] = (None, [])

    def _costs(self, view: CalendarView) -> list[int | None]:
        """`insertion_costs(view)`, kept while the seat's calendar view is the same object
        (views are immutable; the engine reuses one until the calendar changes)."""
        if view is not self._costs_of[0]:
            self._costs_of = (view, insertion_costs(view))
        return self._costs_of[1]

    def _round(self, meeting_id: int) -> _RoundState:
        if self._state.meeting_id != meeting_id:
            self._state = _RoundState(meeting_id=meeting_id)
        return self._state

    def cheap_talk(self, obs: CheapTalkObservation, incoming: Incoming) -> list[ToolCall]:
        meeting = obs.meeting
        state = self._round(meeting.meeting_id)
        out: list[ToolCall] = []
        for sender, payload in incoming:
            if payload.get("meeting_id") != meeting.meeting_id:
                continue
            kind = payload.get("type")
            if kind == "cost_request" and obs.is_participant:
                slots = [
                    s for s in payload.get("slots", []) if type(s) is int and 0 <= s < obs.num_slots
                ]
                own = self._costs(obs.calendar)
                out += self.send(
                    obs,
                    [sender],
                    {
                        "type": "costs",
                        "meeting_id": meeting.meeting_id,
                        "slots": slots,
                        "costs": [own[s] for s in slots],
                    },
                )
            elif kind == "costs" and _valid_costs(payload, obs.num_slots):
                vector: list[int | None] = [None] * obs.num_slots
                for slot, cost in zip(payload["slots"], payload["costs"], strict=True):
                    vector[slot] = cost
                state.costs[sender] = vector
            elif kind == "decision":
                slot = payload.get("slot")
                state.agreed = slot if type(slot) is int else None
        if obs.is_participant and self.agent == min(meeting.participants):
            responders = [a for a in meeting.participants if a != self.agent]
            if not state.requested:
                state.requested = True
                out += self.send(
                    obs,
                    responders,
                    {
                        "type": "cost_request",
                        "meeting_id": meeting.meeting_id,
                        "slots": list(range(obs.num_slots)),
                    },
                )
            if not state.decided and all(a in state.costs for a in responders):
                state.decided = True
                vectors = [self._costs(obs.calendar)] + [state.costs[a] for a in responders]
                state.agreed = choose_slot(vectors)
                out += self.send(
                    obs,
                    responders,
                    {
                        "type": "decision",
                        "meeting_id": meeting.meeting_id,
                        "slot": state.agreed,
                    },
                )
        return out

    def batch(self, obs: BatchObservation) -> list[ToolCall]:
        if obs.phase == "voluntary":
            return []
        state = self._round(obs.meeting.meeting_id)
        slot = state.agreed if state.agreed is not None else first_usable_slot(obs.calendar)
        if slot is None:
            return []
        plan = plan_batch(obs.calendar, schedule=(state.meeting_id, slot))
        return plan if plan is not None else []


def _valid_costs(payload: dict[str, object], num_slots: int) -> bool:
    slots, costs = payload.get("slots"), payload.get("costs")
    return (
        isinstance(slots, list)
        and isinstance(costs, list)
        and len(slots) == len(costs)
        and all(type(s) is int and 0 <= s < num_slots for s in slots)
        and all(c is None or type(c) is int for c in costs)
    )
