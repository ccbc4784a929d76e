"""DSM offers ("plans") and their local evaluation on one seat's own calendar
(the CalBench paper §D.3, cross-meeting displacement).

A plan puts the round's meeting at `slot`; when the initiator's copy of `slot` holds a
prior multi-agent meeting, the plan also carries a displacement chain: moves (meeting id,
from slot, to slot) that clear it, where a move lands on a free slot or on another prior
meeting that is moved in turn, up to the preset's cascade depth. Every participant of a
moved meeting must agree, so they score the plan as additional responders (Modi and
Veloso 2004).

A seat evaluates a plan only on its own calendar: the plan is feasible for it when every
move of a meeting it holds lands on a slot that is free there or vacated by another of
those moves, and a valid A.5 batch exists that applies them and, for a participant of the
round's meeting, schedules the meeting at `slot` (an errand at `slot` is evicted to the
lowest free slot, as every reference protocol does); its satisfaction level comes from
the shown costs of the items that batch moves.

Choices the text does not decide, taken from the published engine (D.3 says only that
"the initiator can attach a proposed displacement plan" which the bumped meeting's
participants score): a displaced meeting never lands on an errand (the chain would move
a third party's errand that nobody offered to move), and the alternatives for one slot
are ranked by the shown cost of the meetings they move, then chain length, then landing
slots; the initiator offers its plans by its own level, then slot, then plan id. With
the level mapping of dsm_scoring.py these choices took DSM-Welfare's agreement with the
published engine (bench/calbench_peer_parity.py, 4 sweeps) from 35/36 uniform and 29/36
varied public fixtures to 36/36 and 36/36.

Plan ids are `slot * 100 + k`, with k = 0 for a slot that needs no displacement and
otherwise the rank (from 0) of the chain among the slot's alternatives: unique within a
meeting and meaningless beyond the slot they name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeGuard

from confide.envs.calbench.actions import CalendarView, ToolCall
from confide.envs.calbench.participants.base import (
    is_movable_errand,
    plan_batch,
    plan_relocations,
)
from confide.envs.calbench.participants.dsm_scoring import D_LEVELS, satisfaction

PLAN_STRIDE = 100
"""Plan ids per slot; bounds the displacement alternatives per slot."""


@dataclass(frozen=True, slots=True)
class Move:
    """Move the copy of prior meeting `meeting_id` from `from_slot` to `to_slot`."""

    meeting_id: int
    from_slot: int
    to_slot: int

    def to_json(self) -> dict[str, int]:
        return {"meeting_id": self.meeting_id, "from_slot": self.from_slot, "to_slot": self.to_slot}


@dataclass(frozen=True, slots=True)
class Plan:
    """One offer: the meeting at `slot`, after `moves`; `scorers` are the agents other
    than the initiator who must agree (current responders plus the moved meetings'
    participants)."""

    plan_id: int
    slot: int
    moves: tuple[Move, ...]
    scorers: frozenset[int]
    own_score: int


def parse_moves(raw: Any, num_slots: int) -> tuple[Move, ...] | None:
    """Moves from a payload; None when any entry is malformed."""
    if not isinstance(raw, list):
        return None
    moves = []
    for entry in raw:
        if not isinstance(entry, dict):
            return None
        mid, src, dst = entry.get("meeting_id"), entry.get("from_slot"), entry.get("to_slot")
        if not (type(mid) is int and _slot(src, num_slots) and _slot(dst, num_slots)):
            return None
        moves.append(Move(mid, src, dst))
    return tuple(moves)


def _slot(value: object, num_slots: int) -> TypeGuard[int]:
    return type(value) is int and 0 <= value < num_slots


def held_moves(view: CalendarView, moves: Iterable[Move]) -> tuple[Move, ...]:
    """The moves of meetings this calendar holds a copy of."""
    moves = tuple(moves)
    if not moves:
        return ()
    return tuple(m for m in moves if m.meeting_id in view.meetings)


def local_batch(
    view: CalendarView, meeting_id: int, slot: int | None, moves: Sequence[Move]
) -> list[ToolCall] | None:
    """The A.5 batch that applies `moves` (all of meetings on this calendar) and, when
    `slot` is given, schedules the round's meeting there; None when there is none (also
    for moves that stay in place, share a source or a destination, or land on `slot`: no
    DSM chain does)."""
    if not _well_formed(view, slot, moves):
        return None
    return plan_batch(
        view,
        schedule=None if slot is None else (meeting_id, slot),
        moves=[(m.from_slot, m.to_slot, _why(m, meeting_id)) for m in moves],
    )


def _well_formed(view: CalendarView, slot: int | None, moves: Sequence[Move]) -> bool:
    """Every move takes a meeting this calendar holds to a slot that is free or vacated by
    another of the moves, from distinct sources to distinct destinations other than its
    source and `slot`."""
    sources = {m.from_slot for m in moves}
    for move in moves:
        item = view.slots[move.from_slot]
        if item.kind != "meeting" or item.item_id != move.meeting_id:
            return False
        if view.slots[move.to_slot].kind != "free" and move.to_slot not in sources:
            return False
    return not (
        any(m.from_slot == m.to_slot or m.to_slot == slot for m in moves)
        or len({m.from_slot for m in moves}) != len(moves)
        or len({m.to_slot for m in moves}) != len(moves)
    )


def _why(move: Move, meeting_id: int) -> str:
    return f"agreed DSM displacement of M{move.meeting_id} to make room for M{meeting_id}"


def score(view: CalendarView, meeting_id: int, slot: int | None, moves: Sequence[Move]) -> int:
    """This seat's satisfaction level for a plan (0 = infeasible): from the shown costs of
    the items `local_batch` would move. A plan without moves needs only the slot itself:
    free, or a movable errand (the hot path of every offer)."""
    if not moves:
        if slot is None:
            return D_LEVELS - 1
        item = view.slots[slot]
        if item.kind == "free":
            return D_LEVELS - 1
        return satisfaction([item.cost or 0]) if is_movable_errand(view, item) else 0
    if not _well_formed(view, slot, moves):
        return 0
    relocations = plan_relocations(
        view,
        schedule=None if slot is None else (meeting_id, slot),
        moves=[(m.from_slot, m.to_slot, "") for m in moves],
    )
    if relocations is None:
        return 0
    return satisfaction([view.slots[src].cost or 0 for src, _, _ in relocations])


def participants_of(view: CalendarView, meeting_id: int) -> tuple[int, ...]:
    item = view.meetings.get(meeting_id)
    return () if item is None else item.participants


Chain = tuple[tuple[Move, ...], tuple[int, ...]]
"""Moves that clear a slot, with the shown cost of each meeting they move on the
builder's calendar."""


def _chains(
    view: CalendarView, src: int, depth: int, used: frozenset[int], current: int
) -> list[Chain]:
    """Displacement chains that clear `src` (a prior meeting) within `depth` moves. Each
    move lands on a free slot or on another prior meeting that the next move clears, so
    every chain is a valid batch for the calendar it was built from."""
    item = view.slots[src]
    if depth <= 0 or item.kind != "meeting" or item.item_id is None or item.item_id == current:
        return []
    used = used | {src}
    cost = item.cost or 0
    out: list[Chain] = []
    for dst, target in enumerate(view.slots):
        if dst in used:
            continue
        move = Move(item.item_id, src, dst)
        if target.kind == "free":
            out.append(((move,), (cost,)))
        elif target.kind == "meeting":
            out.extend(
                ((move, *moves), (cost, *costs))
                for moves, costs in _chains(view, dst, depth - 1, used, current)
            )
    return out


def _ranked_chains(view: CalendarView, src: int, depth: int, current: int) -> Iterator[Chain]:
    """The chains of `_chains(view, src, depth, ...)` best first: by the shown cost of the
    meetings they move, then length, then landing slots. Lazily, without building and
    sorting them all, up to depth 2 (the presets' depths): shown costs are never negative,
    so a chain of two moves costs at least the single move of the same meeting and ranks
    after every single move; single moves rank by landing slot, and chains of two by the
    second meeting's cost, its slot, then the landing slot."""
    item = view.slots[src]
    if depth <= 0 or item.kind != "meeting" or item.item_id is None or item.item_id == current:
        return
    if depth > 2:
        chains = _chains(view, src, depth, frozenset(), current)
        yield from sorted(chains, key=lambda c: (sum(c[1]), len(c[0]), [m.to_slot for m in c[0]]))
        return
    free, cost = view.free_slots, item.cost or 0
    for dst in free:
        yield (Move(item.item_id, src, dst),), (cost,)
    if depth < 2 or not free:
        return
    seconds = sorted(  # slots are unique, so the meeting ids are never compared
        (s.cost or 0, mid, s.item_id)
        for mid, s in enumerate(view.slots)
        if mid != src and s.kind == "meeting" and s.item_id is not None and s.item_id != current
    )
    for second_cost, mid, second_id in seconds:
        first = Move(item.item_id, src, mid)
        for dst in free:
            yield (first, Move(second_id, mid, dst)), (cost, second_cost)


def candidate_plans(
    view: CalendarView,
    meeting_id: int,
    responders: Iterable[int],
    *,
    cascade_depth: int,
    displacement_targets: int,
    reachable: frozenset[int] | None,
) -> list[Plan]:
    """Every plan the initiator could take itself, best first for it: by its own
    satisfaction (high first), then slot, plan id (the published engine's order). Displacement
    alternatives per slot are the `displacement_targets` cheapest feasible chains for the
    initiator (ties: shorter chain, lower landing slots) whose scorers are all `reachable`
    (None = everyone can be reached)."""
    base = frozenset(responders)
    me = view.owner
    direct = base - {me}
    plans: list[Plan] = []
    for slot, item in enumerate(view.slots):
        if item.kind == "free":  # `score` of a free slot: nothing to move
            plans.append(Plan(slot * PLAN_STRIDE, slot, (), direct, D_LEVELS - 1))
            continue
        if item.kind != "meeting":
            own = score(view, meeting_id, slot, ())
            if own > 0:
                plans.append(Plan(slot * PLAN_STRIDE, slot, (), direct, own))
            continue
        kept = 0
        for chain, costs in _ranked_chains(view, slot, cascade_depth, meeting_id):
            if kept == displacement_targets:
                break
            extra = {a for m in chain for a in participants_of(view, m.meeting_id)}
            scorers = (base | extra) - {me}
            if reachable is not None and not scorers <= reachable:
                continue
            own = satisfaction(costs)
            plans.append(Plan(slot * PLAN_STRIDE + kept, slot, chain, frozenset(scorers), own))
            kept += 1
    # made in slot then plan-id order, so a stable sort by level alone gives that order
    plans.sort(key=attrgetter("own_score"), reverse=True)
    return plans
