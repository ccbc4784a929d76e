"""Per-agent calendars and atomic action batches (the CalBench paper §3, A.1, A.5).

A calendar is a fixed-length tuple of slots; each slot is free (`None`), an `Errand`
(id, displacement cost, optional `blocked` flag, optional private label id) or a
`MeetingItem` (meeting id, per-calendar displacement cost, participants, label id). All
types are frozen slotted dataclasses: this module is on the hot path of reference-protocol
games, so it never touches pydantic (scenario.py converts at the file boundary).

Rendering (A.1) keeps the paper's information content, one line per slot, in our wording:

    Slot 0: free
    Slot 1: errand #3 (cost 10)
    Slot 2: errand #7 (cost 100, blocked: cannot be moved)
    Slot 3: meeting M2 (cost 1) with agents [0, 2]

and, when a private label is visible to the owner, ` | note: <label>` is appended. Costs
are printed through an optional display map (internal 1/2/3 -> shown 1/10/100, §3).
Label visibility follows A.1: an agent sees the labels of its own errands and the label of
a meeting only if it is a participant (`label_visible`).

Batch validation (A.5) checks the seven rules below, in this order, and returns every
conflict found as an exact, human-readable string (empty tuple = valid). Actions are
numbered from 1 in the order given; `<item>` is `errand #7`, `blocked errand #7` or
`meeting M2`.

1. Slot bounds -- `Action {i} ({kind}): {field}={value!r} is not a slot index in [0, {S})`
   (`kind` is `reschedule` or `schedule`, `field` is `from_slot`, `to_slot` or `slot`;
   booleans and non-integers fail too).
2. Item identity -- `Action {i} (reschedule): from_slot {s} is free, there is no item
   {item_id!r} to move`, or `Action {i} (reschedule): item_id={item_id!r} does not match
   the item at slot {s} ({item})`, or (one item moved twice) `Action {i} (reschedule):
   from_slot {s} is already moved by action {j}`.
3. No blocked moves -- `Action {i} (reschedule): blocked errand #{id} at slot {s} cannot
   be moved`.
4. No destination conflicts -- `Action {i} ({kind}): destination slot {s} is already
   targeted by action {j}` (the schedule slot counts as a destination).
5. Freeness after batch -- `Action {i} (reschedule): to_slot {s} is occupied by {item} and
   no other action in the batch moves it away`.
6. Exactly one schedule -- `Batch must contain exactly 1 schedule action, found {n}`
   (DECISION, `require_schedule=True`), or `Batch must contain no schedule action in this
   phase, found {n}` (VOLUNTARY). Two further checks belong to this rule: `Action {i}
   (schedule): meeting_id={x!r} is not the meeting being scheduled (M{id})` and `Action {i}
   (schedule): meeting M{id} is already on the calendar at slot {s}`.
7. Schedule slot free -- `Action {i} (schedule): slot {s} is occupied by {item} and no
   action in the batch moves it away`.

Moves are simultaneous (swaps and cycles are allowed: a destination may be a slot another
action vacates). `apply_batch` is transactional: it validates first and either returns a
new calendar or raises `BatchRejected`, leaving the input untouched (it is immutable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast


@dataclass(frozen=True, slots=True)
class Errand:
    """A private commitment; moving it costs `cost` unless it is `blocked` (immovable)."""

    errand_id: int
    cost: int
    blocked: bool = False
    label_id: str | None = None

    @property
    def item_id(self) -> int:
        return self.errand_id

    def describe(self) -> str:
        return f"{'blocked ' if self.blocked else ''}errand #{self.errand_id}"


@dataclass(frozen=True, slots=True)
class MeetingItem:
    """One participant's copy of a scheduled meeting; moving it costs `cost` per calendar."""

    meeting_id: int
    cost: int
    participants: tuple[int, ...]
    label_id: str | None = None

    @property
    def item_id(self) -> int:
        return self.meeting_id

    def describe(self) -> str:
        return f"meeting M{self.meeting_id}"


Item = Errand | MeetingItem
Slot = Item | None


@dataclass(frozen=True, slots=True)
class Meeting:
    """An incoming meeting of the stream: who must attend, its cost once scheduled (the
    price of moving it later, per calendar), the cheap-talk speaker order and label."""

    meeting_id: int
    participants: tuple[int, ...]
    cost: int = 1
    speaker_order: tuple[int, ...] = ()
    label_id: str | None = None

    def as_item(self) -> MeetingItem:
        return MeetingItem(self.meeting_id, self.cost, self.participants, self.label_id)


def label_visible(viewer: int, owner: int, item: Item | Meeting) -> bool:
    """A.1 hydration rule: errand labels only to the calendar owner, meeting labels only
    to the meeting's participants."""
    if isinstance(item, Errand):
        return viewer == owner
    return viewer in item.participants


def display_cost(cost: int, cost_display: Mapping[int, int] | None) -> int:
    """The cost shown to agents (e.g. internal 2 -> 10); unmapped costs are shown as is."""
    if cost_display is None:
        return cost
    return cost_display.get(cost, cost)


@dataclass(frozen=True, slots=True)
class Calendar:
    """One agent's private calendar."""

    owner: int
    slots: tuple[Slot, ...]
    _meeting_index: dict[int, int] | None = field(
        default=None, init=False, repr=False, compare=False, hash=False
    )
    """meeting id -> slot, built on first lookup (the engine checks every prior meeting's
    consistency after every round)."""

    @property
    def num_slots(self) -> int:
        return len(self.slots)

    def free_slots(self) -> tuple[int, ...]:
        return tuple(i for i, item in enumerate(self.slots) if item is None)

    def slot_of_meeting(self, meeting_id: int) -> int | None:
        index = self._meeting_index
        if index is None:
            index = {}
            for i, item in enumerate(self.slots):
                if isinstance(item, MeetingItem):
                    index.setdefault(item.meeting_id, i)
            object.__setattr__(self, "_meeting_index", index)
        return index.get(meeting_id)

    def render(
        self,
        *,
        cost_display: Mapping[int, int] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> str:
        """The owner's view, one line per slot (format in the module docstring)."""
        return "\n".join(
            render_slot(i, item, self.owner, cost_display=cost_display, labels=labels)
            for i, item in enumerate(self.slots)
        )


def render_slot(
    index: int,
    item: Slot,
    owner: int,
    *,
    cost_display: Mapping[int, int] | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    """One line of `Calendar.render` for slot `index` of `owner`'s calendar."""
    if item is None:
        return f"Slot {index}: free"
    shown = display_cost(item.cost, cost_display)
    if isinstance(item, Errand):
        extra = ", blocked: cannot be moved" if item.blocked else ""
        text = f"Slot {index}: errand #{item.errand_id} (cost {shown}{extra})"
    else:
        who = ", ".join(str(p) for p in item.participants)
        text = f"Slot {index}: meeting M{item.meeting_id} (cost {shown}) with agents [{who}]"
    if labels and item.label_id is not None and label_visible(owner, owner, item):
        note = labels.get(item.label_id)
        if note:
            text += f" | note: {note}"
    return text


@dataclass(frozen=True, slots=True)
class Reschedule:
    """Move the owner's item at `from_slot` to `to_slot` (A.5); `justification` is the
    short reason the paper requires for every reschedule."""

    item_id: int
    from_slot: int
    to_slot: int
    justification: str = ""


@dataclass(frozen=True, slots=True)
class Schedule:
    """Write the incoming meeting into `slot`."""

    meeting_id: int
    slot: int


Action = Reschedule | Schedule


class BatchRejected(Exception):
    """A batch failed A.5 validation; `conflicts` holds the exact conflict strings."""

    def __init__(self, conflicts: Sequence[str]) -> None:
        self.conflicts = tuple(conflicts)
        super().__init__("; ".join(self.conflicts))


@dataclass(frozen=True, slots=True)
class BatchResult:
    """A successfully applied batch: the new calendar, the displacement cost the owner paid
    (sum of moved items' costs) and the moves as (item, from_slot, to_slot)."""

    calendar: Calendar
    cost: int
    moves: tuple[tuple[Item, int, int], ...]


def _is_slot(value: object, num_slots: int) -> bool:
    return type(value) is int and 0 <= value < num_slots


def _kind(action: Action) -> str:
    return "reschedule" if isinstance(action, Reschedule) else "schedule"


def _slot_fields(action: Action) -> tuple[tuple[str, int], ...]:
    if isinstance(action, Reschedule):
        return (("from_slot", action.from_slot), ("to_slot", action.to_slot))
    return (("slot", action.slot),)


def validate_batch(
    calendar: Calendar,
    actions: Sequence[Action],
    *,
    meeting: Meeting | None = None,
    require_schedule: bool = True,
) -> tuple[str, ...]:
    """All A.5 conflicts of `actions` against `calendar`, in rule order; () means valid.

    `meeting` is the meeting being scheduled (needed whenever a schedule action may
    appear); `require_schedule=False` is the VOLUNTARY phase, where no schedule is allowed.
    """
    if require_schedule and meeting is None:
        raise ValueError("validate_batch: require_schedule=True needs the meeting being scheduled")
    slots = calendar.slots
    n_slots = len(slots)
    conflicts: list[str] = []
    numbered = list(enumerate(actions, start=1))

    # Rule 1: slot bounds.
    in_bounds: set[int] = set()
    for i, action in numbered:
        ok = True
        for name, value in _slot_fields(action):
            if not _is_slot(value, n_slots):
                ok = False
                conflicts.append(
                    f"Action {i} ({_kind(action)}): {name}={value!r} is not a slot index "
                    f"in [0, {n_slots})"
                )
        if ok:
            in_bounds.add(i)
    moves = [(i, a) for i, a in numbered if isinstance(a, Reschedule) and i in in_bounds]
    schedules = [(i, a) for i, a in numbered if isinstance(a, Schedule)]

    # Rule 2: item identity (and no item moved twice).
    mover_of: dict[int, int] = {}
    for i, move in moves:
        item = slots[move.from_slot]
        if move.from_slot in mover_of:
            conflicts.append(
                f"Action {i} (reschedule): from_slot {move.from_slot} is already moved by "
                f"action {mover_of[move.from_slot]}"
            )
            continue
        mover_of[move.from_slot] = i
        if item is None:
            conflicts.append(
                f"Action {i} (reschedule): from_slot {move.from_slot} is free, there is no "
                f"item {move.item_id!r} to move"
            )
        elif type(move.item_id) is not int or move.item_id != item.item_id:
            conflicts.append(
                f"Action {i} (reschedule): item_id={move.item_id!r} does not match the item "
                f"at slot {move.from_slot} ({item.describe()})"
            )

    # Rule 3: blocked items never move.
    for i, move in moves:
        item = slots[move.from_slot]
        if isinstance(item, Errand) and item.blocked:
            conflicts.append(
                f"Action {i} (reschedule): {item.describe()} at slot {move.from_slot} cannot "
                "be moved"
            )

    # Rule 4: no two actions target the same destination.
    target_of: dict[int, int] = {}
    for i, action in numbered:
        if i not in in_bounds:
            continue
        dest = action.to_slot if isinstance(action, Reschedule) else action.slot
        if dest in target_of:
            conflicts.append(
                f"Action {i} ({_kind(action)}): destination slot {dest} is already targeted "
                f"by action {target_of[dest]}"
            )
        else:
            target_of[dest] = i

    # Rule 5: every destination is free or vacated by another action of the batch.
    for i, move in moves:
        occupant = slots[move.to_slot]
        vacated_by = mover_of.get(move.to_slot)
        if occupant is not None and (vacated_by is None or vacated_by == i):
            conflicts.append(
                f"Action {i} (reschedule): to_slot {move.to_slot} is occupied by "
                f"{occupant.describe()} and no other action in the batch moves it away"
            )

    # Rule 6: exactly one schedule in DECISION, none in VOLUNTARY; the right meeting, once.
    if require_schedule and len(schedules) != 1:
        conflicts.append(f"Batch must contain exactly 1 schedule action, found {len(schedules)}")
    if not require_schedule and schedules:
        conflicts.append(
            f"Batch must contain no schedule action in this phase, found {len(schedules)}"
        )
    if meeting is not None:
        for i, sched in schedules:
            if sched.meeting_id != meeting.meeting_id or type(sched.meeting_id) is not int:
                conflicts.append(
                    f"Action {i} (schedule): meeting_id={sched.meeting_id!r} is not the meeting "
                    f"being scheduled (M{meeting.meeting_id})"
                )
        existing = calendar.slot_of_meeting(meeting.meeting_id)
        if existing is not None:
            for i, _ in schedules:
                conflicts.append(
                    f"Action {i} (schedule): meeting M{meeting.meeting_id} is already on the "
                    f"calendar at slot {existing}"
                )

    # Rule 7: the schedule slot is free once the reschedules are applied.
    for i, sched in schedules:
        if i not in in_bounds:
            continue
        occupant = slots[sched.slot]
        if occupant is not None and sched.slot not in mover_of:
            conflicts.append(
                f"Action {i} (schedule): slot {sched.slot} is occupied by "
                f"{occupant.describe()} and no action in the batch moves it away"
            )
    return tuple(conflicts)


def apply_batch(
    calendar: Calendar,
    actions: Sequence[Action],
    *,
    meeting: Meeting | None = None,
    require_schedule: bool = True,
) -> BatchResult:
    """Validate, then apply all moves simultaneously and write the meeting; all or nothing.

    Raises `BatchRejected` with the exact conflicts when any A.5 rule fails."""
    conflicts = validate_batch(
        calendar, actions, meeting=meeting, require_schedule=require_schedule
    )
    if conflicts:
        raise BatchRejected(conflicts)
    slots = list(calendar.slots)
    moves: list[tuple[Item, int, int]] = []
    for action in actions:
        if isinstance(action, Reschedule):
            item = cast(Item, calendar.slots[action.from_slot])  # not None: rule 2
            moves.append((item, action.from_slot, action.to_slot))
            slots[action.from_slot] = None
    for item, _, to_slot in moves:
        slots[to_slot] = item
    for action in actions:
        if isinstance(action, Schedule):
            slots[action.slot] = cast(Meeting, meeting).as_item()  # not None: rule 6
    return BatchResult(
        Calendar(calendar.owner, tuple(slots)),
        sum(item.cost for item, _, _ in moves),
        tuple(moves),
    )


def find_inconsistencies(calendars: Sequence[Calendar]) -> tuple[str, ...]:
    """Cross-calendar meeting consistency (A.5 resolution): every meeting on any calendar
    sits at one slot on exactly its participants' calendars. Returns exact descriptions:

    - `Meeting M{id} appears twice on the calendar of agent {a} (slots {s} and {t})`
    - `Meeting M{id} is at slot {s} for agent {a} but at slot {t} for agent {b}`
    - `Meeting M{id} is on the calendar of agent {a}, who is not a participant`
    - `Meeting M{id} lists participants {P} but is missing from the calendar of agent {a}`
    - `Meeting M{id} lists participants {P} for agent {a} but {Q} for agent {b}`
    """
    seen: dict[int, list[tuple[int, int, MeetingItem]]] = {}
    problems: list[str] = []
    for cal in calendars:
        first_slot: dict[int, int] = {}
        for s, item in enumerate(cal.slots):
            if not isinstance(item, MeetingItem):
                continue
            if item.meeting_id in first_slot:
                problems.append(
                    f"Meeting M{item.meeting_id} appears twice on the calendar of agent "
                    f"{cal.owner} (slots {first_slot[item.meeting_id]} and {s})"
                )
                continue
            first_slot[item.meeting_id] = s
            seen.setdefault(item.meeting_id, []).append((cal.owner, s, item))
    known = {cal.owner for cal in calendars}
    for mid in sorted(seen):
        copies = seen[mid]
        owner0, slot0, item0 = copies[0]
        for owner, slot, item in copies[1:]:
            if slot != slot0:
                problems.append(
                    f"Meeting M{mid} is at slot {slot0} for agent {owner0} but at slot {slot} "
                    f"for agent {owner}"
                )
            if item.participants != item0.participants:
                problems.append(
                    f"Meeting M{mid} lists participants {list(item0.participants)} for agent "
                    f"{owner0} but {list(item.participants)} for agent {owner}"
                )
        holders = {owner for owner, _, _ in copies}
        for owner in sorted(holders - set(item0.participants)):
            problems.append(
                f"Meeting M{mid} is on the calendar of agent {owner}, who is not a participant"
            )
        for agent in item0.participants:
            if agent in known and agent not in holders:
                problems.append(
                    f"Meeting M{mid} lists participants {list(item0.participants)} but is "
                    f"missing from the calendar of agent {agent}"
                )
    return tuple(problems)
