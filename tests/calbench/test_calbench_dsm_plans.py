"""DSM plans (the CalBench paper §D.3, cross-meeting displacement) on random calendars: every plan
an initiator builds is a valid A.5 batch for its own calendar at the level it claims, and
every level a seat reports is backed by a batch the calendar accepts (level > 0 exactly
when the batch applies)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from confide.envs.calbench.actions import (
    CalendarView,
    RescheduleCall,
    ScheduleCall,
    SlotView,
    ToolCall,
)
from confide.envs.calbench.participants.dsm_plans import (
    PLAN_STRIDE,
    Move,
    _chains,
    _ranked_chains,
    candidate_plans,
    local_batch,
    score,
)
from confide.envs.calbench.participants.dsm_scoring import satisfaction
from confide.envs.calbench.world import (
    Action,
    Calendar,
    Errand,
    Meeting,
    MeetingItem,
    Reschedule,
    Schedule,
    apply_batch,
    validate_batch,
)

CURRENT = Meeting(50, (0, 1), 1, (0, 1))


@st.composite
def calendars(draw: st.DrawFn) -> Calendar:
    """Agent 0's calendar: free slots, errands (shown costs 1/10/100, some blocked) and
    copies of prior meetings 20, 21, 22 with agent 0 and one or two others."""
    size = draw(st.integers(4, 9))
    slots: list[Errand | MeetingItem | None] = []
    meetings = iter(range(20, 23))
    for i in range(size):
        kind = draw(st.sampled_from(["free", "errand", "blocked", "meeting"]))
        if kind == "free":
            slots.append(None)
        elif kind == "meeting" and (mid := next(meetings, None)) is not None:
            others = draw(st.sampled_from([(1,), (2,), (1, 2), (2, 3)]))
            slots.append(MeetingItem(mid, 1, (0, *others)))
        else:
            cost = draw(st.sampled_from([1, 10, 100]))
            slots.append(Errand(i, cost, blocked=kind == "blocked"))
    return Calendar(0, tuple(slots))


def view_of(cal: Calendar) -> CalendarView:
    slots = []
    for i, item in enumerate(cal.slots):
        if item is None:
            slots.append(SlotView(slot=i, kind="free"))
            continue
        slots.append(
            SlotView(
                slot=i,
                kind="errand" if isinstance(item, Errand) else "meeting",
                item_id=item.item_id,
                cost=item.cost,
                blocked=isinstance(item, Errand) and item.blocked,
                participants=() if isinstance(item, Errand) else item.participants,
            )
        )
    return CalendarView(owner=cal.owner, slots=tuple(slots), text="")


def domain(batch: list[ToolCall]) -> list[Action]:
    out: list[Action] = []
    for tool in batch:
        if isinstance(tool, RescheduleCall):
            out.append(Reschedule(tool.item_id, tool.from_slot, tool.to_slot))
        elif isinstance(tool, ScheduleCall):
            out.append(Schedule(tool.meeting_id, tool.slot))
    return out


@settings(max_examples=150, deadline=None)
@given(calendars(), st.integers(1, 2), st.integers(1, 4))
def test_initiator_plans_are_valid_batches(cal: Calendar, depth: int, targets: int) -> None:
    view = view_of(cal)
    plans = candidate_plans(
        view,
        CURRENT.meeting_id,
        [1],
        cascade_depth=depth,
        displacement_targets=targets,
        reachable=None,
    )
    assert len({p.plan_id for p in plans}) == len(plans)
    for plan in plans:
        assert plan.plan_id // PLAN_STRIDE == plan.slot
        assert 1 in plan.scorers and 0 not in plan.scorers
        batch = local_batch(view, CURRENT.meeting_id, plan.slot, plan.moves)
        assert batch is not None
        assert validate_batch(cal, domain(batch), meeting=CURRENT) == ()
        moved = [view.slots[t.from_slot].cost or 0 for t in batch if isinstance(t, RescheduleCall)]
        assert plan.own_score == satisfaction(moved)
        assert plan.own_score == score(view, CURRENT.meeting_id, plan.slot, plan.moves)
        assert len(plan.moves) <= depth
        sources = {m.from_slot for m in plan.moves}
        assert all(view.slots[m.to_slot].kind == "free" or m.to_slot in sources
                   for m in plan.moves)  # a displaced meeting never lands on an errand
    per_slot: dict[int, int] = {}
    for plan in plans:
        per_slot[plan.slot] = per_slot.get(plan.slot, 0) + 1
    assert all(n <= max(targets, 1) for n in per_slot.values())
    order = [(-p.own_score, p.slot, p.plan_id) for p in plans]
    assert order == sorted(order)


def test_offers_go_by_level_then_slot_whoever_must_agree() -> None:
    """Agent 0 holds [M9 (with agent 2), E1 (cost 1), free]: slot 2 is free (level 11),
    slot 0 moves M9 to slot 2 (level 10, agent 2 scores too), slot 1 moves E1 (level 10).
    Equal levels go by slot, so the displacement plan at slot 0 precedes slot 1 although
    it needs one more scorer."""
    cal = Calendar(0, (MeetingItem(9, 1, (0, 2)), Errand(1, 1), None))
    plans = candidate_plans(view_of(cal), CURRENT.meeting_id, [1], cascade_depth=2,
                            displacement_targets=4, reachable=None)
    assert [(p.plan_id, p.own_score, sorted(p.scorers)) for p in plans] == [
        (200, 11, [1]), (0, 10, [1, 2]), (100, 10, [1]),
    ]
    assert plans[1].moves == (Move(9, 0, 2),)


@settings(max_examples=150, deadline=None)
@given(
    calendars(),
    st.integers(0, 8),
    st.lists(st.tuples(st.integers(20, 22), st.integers(0, 8), st.integers(0, 8)), max_size=2),
    st.booleans(),
)
def test_reported_levels_are_backed_by_batches(
    cal: Calendar, slot: int, raw_moves: list[tuple[int, int, int]], participant: bool
) -> None:
    view = view_of(cal)
    size = len(cal.slots)
    moves = tuple(Move(m, a % size, b % size) for m, a, b in raw_moves)
    target = slot % size if participant else None
    level = score(view, CURRENT.meeting_id, target, moves)
    batch = local_batch(view, CURRENT.meeting_id, target, moves)
    if batch is None:
        assert level == 0
        return
    result = apply_batch(cal, domain(batch), meeting=CURRENT, require_schedule=target is not None)
    assert level == satisfaction([item.cost for item, _, _ in result.moves])
    assert level > 0
    sources = {m.from_slot for m in moves}
    assert all(view.slots[m.to_slot].kind == "free" or m.to_slot in sources for m in moves)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["free", "errand", "m1", "m10", "m100"]), min_size=1, max_size=9
    ),
    st.integers(0, 3),
    st.sampled_from([50, 21]),
)
def test_chains_come_best_first_without_building_them_all(
    kinds: list[str], depth: int, current: int
) -> None:
    """`_ranked_chains` (lazy up to depth 2) yields exactly `_chains` sorted by shown cost,
    length and landing slots: the order candidate_plans keeps the cheapest from."""
    slots: list[Errand | MeetingItem | None] = []
    for i, kind in enumerate(kinds):
        if kind == "free":
            slots.append(None)
        elif kind == "errand":
            slots.append(Errand(i, 1))
        else:
            slots.append(MeetingItem(20 + i, int(kind[1:]), (0, 1)))
    view = view_of(Calendar(0, tuple(slots)))
    for src in range(len(slots)):
        full = sorted(
            _chains(view, src, depth, frozenset(), current),
            key=lambda c: (sum(c[1]), len(c[0]), [m.to_slot for m in c[0]]),
        )
        assert list(_ranked_chains(view, src, depth, current)) == full
