"""The CP-SAT oracle with previously scheduled meetings on the calendars (item
4; the CalBench paper, section 3: moving a prior meeting costs its cost on each participant's
calendar). No shipped task has prior meetings yet, so these are the only checks that the
oracle charges a moved prior meeting the sum of its copies' costs, not their maximum."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from confide.envs.calbench.oracle import Solution, solve_oracle
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem, Slot


def test_three_agents_five_slots_optimum_one_beats_bumping_a_shared_meeting() -> None:
    """M9 (agents 0 and 1, cost 1 on each copy) sits at slot 0; incoming M1 = {0, 2}.

    M1 at slot 0 bumps M9 (to slot 3, the first slot free for both): 1 + 1 = 2.
    M1 at slot 1 or 2: errands 3 + 3 = 6. Slot 3: agent 2's errand, 1. Slot 4: 3.
    Optimum 1 at slot 3, paid by agent 2. Charging M9's move max(1, 1) = 1 would tie slot 0
    with slot 3 and the tie-break (lowest slot vector) would pick the cost-2 placement.
    """
    m9 = MeetingItem(9, 1, (0, 1))
    cals = (
        Calendar(0, (m9, Errand(1, 3), Errand(2, 3), None, None)),
        Calendar(1, (m9, None, None, None, None)),
        Calendar(2, (None, Errand(3, 3), Errand(4, 3), Errand(5, 1), Errand(6, 3))),
    )
    sol = solve_oracle(cals, [Meeting(1, (0, 2), speaker_order=(0, 2))])
    assert sol is not None
    assert (sol.cost, sol.assignments, sol.prior_moves, sol.per_agent_cost) == (
        1, {1: 3}, {}, (0, 0, 1)
    )


def _brute_force(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> Solution | None:
    """Every slot for every meeting (incoming in stream order, then prior meetings by id),
    in lexicographic order; the first cheapest feasible vector wins (the canonical
    tie-break). Feasible: no agent holds two meetings in one slot, no meeting sits on a
    blocked errand, and every agent's items plus its incoming meetings fit its calendar
    (displaced errands need a landing slot)."""
    n_slots = calendars[0].num_slots
    for cal in calendars:
        own = sum(m.participants.count(cal.owner) for m in meetings)
        if sum(item is not None for item in cal.slots) + own > n_slots:
            return None
    prior: dict[int, tuple[int, tuple[int, ...]]] = {}
    for cal in calendars:
        for s, item in enumerate(cal.slots):
            if isinstance(item, MeetingItem):
                prior[item.meeting_id] = (s, item.participants)
    groups: list[tuple[int, tuple[int, ...], int | None]] = [
        (m.meeting_id, m.participants, None) for m in meetings
    ]
    groups += [(mid, parts, origin) for mid, (origin, parts) in sorted(prior.items())]
    best: Solution | None = None
    for combo in itertools.product(range(n_slots), repeat=len(groups)):
        used: set[tuple[int, int]] = set()
        paid = [0] * len(calendars)
        feasible = True
        for (_, parts, origin), s in zip(groups, combo, strict=True):
            for p in parts:
                item = calendars[p].slots[s]
                if (p, s) in used or (isinstance(item, Errand) and item.blocked):
                    feasible = False
                used.add((p, s))
                if isinstance(item, Errand):
                    paid[p] += item.cost
                if origin is not None and s != origin:
                    copy = calendars[p].slots[origin]
                    assert isinstance(copy, MeetingItem)
                    paid[p] += copy.cost
        if feasible and (best is None or sum(paid) < best.cost):
            placed = [(mid, origin, s) for (mid, _, origin), s in zip(groups, combo, strict=True)]
            best = Solution(
                cost=sum(paid),
                assignments={mid: s for mid, origin, s in placed if origin is None},
                per_agent_cost=tuple(paid),
                prior_moves={
                    mid: s for mid, origin, s in placed if origin is not None and s != origin
                },
            )
    return best


@st.composite
def _instances(draw: st.DrawFn) -> tuple[tuple[Calendar, ...], list[Meeting]]:
    """2-3 agents, 3-5 slots; 1-2 prior meetings, each shared by at least two agents (cost
    1-2 per copy); 1-2 incoming meetings, each attended by some prior meeting's
    participant (so it competes for that meeting's slot); then errands (cost 1-3, one in
    six blocked) on about 60% of the free slots, only while the agent's items and
    incoming meetings still fit its calendar (most instances are feasible)."""
    n_agents = draw(st.integers(2, 3))
    n_slots = draw(st.integers(3, 5))
    agents = st.integers(0, n_agents - 1)
    grid: list[list[Slot]] = [[None] * n_slots for _ in range(n_agents)]
    shared: list[int] = []
    for mid in range(9, 9 + draw(st.integers(1, 2))):
        parts = tuple(sorted(draw(st.sets(agents, min_size=2))))
        free = [s for s in range(n_slots) if all(grid[p][s] is None for p in parts)]
        if not free:
            continue
        s = draw(st.sampled_from(free))
        shared.extend(parts)
        for p in parts:
            grid[p][s] = MeetingItem(mid, draw(st.integers(1, 2)), parts)
    meetings = []
    for mid in range(1, 1 + draw(st.integers(1, 2))):
        parts = tuple(sorted(draw(st.sets(agents)) | {draw(st.sampled_from(shared))}))
        meetings.append(Meeting(mid, parts, speaker_order=parts))
    errand_id = 0
    for a in range(n_agents):
        room = n_slots - sum(a in m.participants for m in meetings)
        room -= sum(item is not None for item in grid[a])
        for s in range(n_slots):
            if grid[a][s] is None and room > 0 and draw(st.integers(0, 4)) < 3:
                errand_id += 1
                room -= 1
                cost, blocked = draw(st.integers(1, 3)), draw(st.integers(0, 5)) == 0
                grid[a][s] = Errand(errand_id, cost, blocked)
    return tuple(Calendar(a, tuple(row)) for a, row in enumerate(grid)), meetings


@settings(max_examples=200, deadline=None)
@given(_instances())
def test_oracle_with_shared_prior_meetings_equals_brute_force(
    case: tuple[tuple[Calendar, ...], list[Meeting]],
) -> None:
    calendars, meetings = case
    assert solve_oracle(calendars, meetings) == _brute_force(calendars, meetings)


def test_a_prior_meeting_moved_to_an_earlier_slot_is_recorded_as_moved() -> None:
    """M9 (agents 0 and 1, cost 1 on each copy) sits at slot 3; incoming M1 = {0, 2}.

    Agent 2 is free only at slot 3 (errands of cost 5 elsewhere), agent 0 holds errands of
    cost 3 at slots 1, 2 and 4. M1 at slot 3 bumps M9 to slot 0, the only slot free for
    both of its agents: 1 + 1 = 2. Every other slot costs M1 at least 5. The move goes to
    a lower slot than its origin, and the solution must still report it."""
    m9 = MeetingItem(9, 1, (0, 1))
    cals = (
        Calendar(0, (None, Errand(1, 3), Errand(2, 3), m9, Errand(3, 3))),
        Calendar(1, (None, None, None, m9, None)),
        Calendar(2, (Errand(4, 5), Errand(5, 5), Errand(6, 5), None, Errand(7, 5))),
    )
    meetings = [Meeting(1, (0, 2), speaker_order=(0, 2))]
    sol = solve_oracle(cals, meetings)
    assert sol is not None
    assert (sol.cost, sol.assignments, sol.prior_moves, sol.per_agent_cost) == (
        2, {1: 3}, {9: 0}, (1, 1, 0)
    )
    assert sol == _brute_force(cals, meetings)
