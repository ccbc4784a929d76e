"""The oracle's CP-SAT path (envs/calbench/oracle.py, `solve_cpsat`) pinned by behaviour on
small random problems, fast: it returns the search's canonical solution, with prior
meetings to move, and when the tie-break needs more than one lexicographic chunk; and a
search past its node budget gives up whole."""

from __future__ import annotations

import random

from confide.envs.calbench import oracle
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem


def _case(
    rng: random.Random, slots: int, agents: int, meetings: int
) -> tuple[tuple[Calendar, ...], tuple[Meeting, ...]]:
    """Random errands (costs 1-3, some blocked), a prior meeting of agents 0 and 1 at a
    random slot, and `meetings` incoming meetings of one to three agents."""
    shared = rng.randrange(slots)
    prior = MeetingItem(90, rng.randint(1, 3), (0, 1))
    calendars = []
    serial = 0
    for owner in range(agents):
        row: list[Errand | MeetingItem | None] = []
        for s in range(slots):
            if owner in (0, 1) and s == shared:
                row.append(prior)
            elif rng.random() < 0.5:
                serial += 1
                row.append(Errand(serial, rng.randint(1, 3), blocked=rng.random() < 0.15))
            else:
                row.append(None)
        calendars.append(Calendar(owner, tuple(row)))
    incoming = tuple(
        Meeting(m + 1, tuple(sorted(rng.sample(range(agents), rng.randint(1, min(3, agents))))))
        for m in range(meetings)
    )
    return tuple(calendars), incoming


def _both(calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...]) -> int:
    """Assert CP-SAT equals the search (canonical and not); 1 when a placement exists."""
    n_slots = oracle.check_calendars(calendars)
    groups = oracle.placement_groups(calendars, meetings)
    if groups is None:
        return 0
    chosen = oracle.search_canonical(groups, 10**7)
    assert chosen is not False
    searched = None if chosen is None else oracle._solution(calendars, groups, chosen)
    assert oracle.solve_cpsat(calendars, groups, n_slots, canonical=True) == searched
    fast = oracle.solve_cpsat(calendars, groups, n_slots, canonical=False)
    assert (fast is None) == (searched is None)
    if fast is None or searched is None:
        return 0
    assert fast.cost == searched.cost
    return 1


def test_cpsat_equals_the_search_on_small_problems_with_a_prior_meeting() -> None:
    rng = random.Random(7)
    placed = sum(_both(*_case(rng, slots=6, agents=3, meetings=3)) for _ in range(40))
    assert placed >= 12  # 14 of 40 (blocked errands and full calendars rule out the rest)


def test_cpsat_equals_the_search_when_the_tie_break_spans_several_chunks() -> None:
    """32 slots: a chunk holds at most 10 meetings (32**10 = 2**50), the folded one fewer;
    14 meetings of one agent each, errands of one cost, so many placements tie."""
    rng = random.Random(3)
    calendars = tuple(
        Calendar(
            a,
            tuple(Errand(a * 100 + s, 1) if rng.random() < 0.5 else None for s in range(32)),
        )
        for a in range(2)
    )
    meetings = tuple(Meeting(m + 1, (m % 2,)) for m in range(14))
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    assert len(oracle._lex_chunks(0, len(groups), 32)) >= 2
    assert _both(calendars, meetings) == 1


def test_a_search_past_its_budget_gives_up_and_never_a_partial_placement() -> None:
    """Every node budget gives either False (hand the problem to CP-SAT) or the canonical
    solution, whichever of the two searches runs out first."""
    gave_up = 0
    for seed in range(16):  # seed 12: the first search fits 12 nodes, the second needs 20
        calendars, meetings = _case(random.Random(seed), slots=6, agents=3, meetings=3)
        oracle.check_calendars(calendars)
        groups = oracle.placement_groups(calendars, meetings)
        if groups is None:
            continue
        full = oracle.search_canonical(groups, 10**7)
        assert full is not False
        for budget in range(1, 200):
            found = oracle.search_canonical(groups, budget)
            assert found is False or found == full
            gave_up += found is False
    assert gave_up > 0
