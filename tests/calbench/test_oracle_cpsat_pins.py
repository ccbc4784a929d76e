"""The oracle's CP-SAT path (envs/calbench/oracle.py, `solve_cpsat`) pinned by behaviour on
small random problems, fast: it returns the search's canonical solution, with prior
meetings to move, and when the tie-break needs more than one lexicographic chunk; the
search's optimum equals a brute force; and a search past its node budget gives up whole."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    26 meetings of one agent each (three chunks), errands of one cost, so many tie."""
    rng = random.Random(3)
    calendars = tuple(
        Calendar(
            a,
            tuple(Errand(a * 100 + s, 1) if rng.random() < 0.5 else None for s in range(32)),
        )
        for a in range(2)
    )
    meetings = tuple(Meeting(m + 1, (m % 2,)) for m in range(26))
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    assert len(oracle._lex_chunks(0, len(groups), 32)) >= 3
    assert _both(calendars, meetings) == 1


def test_a_search_past_its_budget_gives_up_and_never_a_partial_placement() -> None:
    """Every node budget gives either False (hand the problem to CP-SAT) or the canonical
    solution, whichever of the two searches runs out first."""
    second_gave_up = 0
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
            # the second search keeps to the budget too, even when the first fits in it
            costed = [[(oracle._option_cost(g, s, c), s) for s, c in g.options] for g in groups]
            first_fits = oracle._optimum(groups, costed, budget) is not False
            second_gave_up += first_fits and found is False
        assert oracle._optimum(groups, costed, 1) is False  # the first search keeps to it too
    assert second_gave_up > 0


def _brute_force(groups: list[oracle._Group]) -> int | None:
    """The cheapest placement over every combination of options (None: none fits): the
    errands under each meeting, plus every copy's move cost for a prior meeting that moves."""
    best = None
    for combo in itertools.product(*(g.options for g in groups)):
        taken = [(p, s) for g, (s, _) in zip(groups, combo, strict=True) for p in g.participants]
        if len(set(taken)) == len(taken):
            total = sum(
                c + (sum(g.move_costs) if g.origin not in (None, s) else 0)
                for g, (s, c) in zip(groups, combo, strict=True)
            )
            best = total if best is None else min(best, total)
    return best


def test_the_searchs_optimum_equals_a_brute_force_with_prior_meetings() -> None:
    """Seed 27: the cheapest-first descent finds a placement costing 2 before the optimum 1,
    which only a search pruned by a true lower bound still reaches."""
    compared = 0
    for seed in range(40):
        calendars, meetings = _case(random.Random(seed), slots=6, agents=3, meetings=3)
        groups = oracle.placement_groups(calendars, meetings)
        if groups is None:
            continue
        costed = [[(oracle._option_cost(g, s, c), s) for s, c in g.options] for g in groups]
        assert oracle._optimum(groups, costed, 10**7) == _brute_force(groups)
        compared += 1
    assert compared >= 12


def test_meetings_that_fit_alone_but_not_together_are_infeasible_for_both() -> None:
    """Meetings (0, 1) and (0, 2) can each go only to slot 0 (agents 1 and 2 have blocked
    errands elsewhere), and agent 0 has one slot 0: no placement, though capacity fits."""
    blocked = (None, Errand(5, 1, blocked=True), Errand(6, 1, blocked=True))
    calendars = (
        Calendar(0, (None, None, Errand(1, 1))),
        Calendar(1, blocked),
        Calendar(2, (None, Errand(7, 1, blocked=True), Errand(8, 1, blocked=True))),
    )
    meetings = (Meeting(1, (0, 1)), Meeting(2, (0, 2)))
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    assert oracle.search_canonical(groups, 10**7) is None
    assert oracle.solve_cpsat(calendars, groups, 3, canonical=True) is None
    assert oracle.solve_cpsat(calendars, groups, 3, canonical=False) is None


def test_cpsat_keeps_a_prior_meeting_in_place_at_no_bonus() -> None:
    """M9 (agents 0 and 1, cost 1 a copy) at slot 1; incoming M1 = {0, 2}, three slots.

    M1 at slot 0: agent 0's errand, 3. M1 at slot 1: M9 moves to slot 2, 1 + 1 = 2.
    M1 at slot 2: agent 2's errand, 5. Optimum 2 with M9 moved; a model that paid a prior
    meeting for staying put would tie slot 0 with slot 1 and the tie-break would pick 0."""
    m9 = MeetingItem(9, 1, (0, 1))
    calendars = (
        Calendar(0, (Errand(1, 3), m9, None)),
        Calendar(1, (None, m9, None)),
        Calendar(2, (None, None, Errand(2, 5))),
    )
    meetings = (Meeting(1, (0, 2)),)
    assert _both(calendars, meetings) == 1
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    found = oracle.solve_cpsat(calendars, groups, 3, canonical=True)
    assert found is not None
    assert (found.cost, found.assignments, found.prior_moves) == (2, {1: 1}, {9: 2})


def test_a_budget_past_the_small_integers_still_stops_the_search() -> None:
    """Budgets of several hundred nodes (the shipped one is 50,000) stop both searches."""
    calendars, meetings = _case(random.Random(3), slots=10, agents=3, meetings=8)
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    costed = [[(oracle._option_cost(g, s, c), s) for s, c in g.options] for g in groups]
    full = oracle._optimum(groups, costed, 10**7)
    assert full == 4
    assert oracle._optimum(groups, costed, 300) is False
    assert oracle._first_at(groups, costed, full, 300) is False


def test_a_cpsat_solve_leaves_the_interrupt_handler_alone() -> None:
    """The runner's SIGINT handler must survive a solve (confide.runner.interrupt)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        m9 = MeetingItem(9, 1, (0, 1))
        calendars = (Calendar(0, (Errand(1, 3), m9, None)), Calendar(1, (None, m9, None)))
        groups = oracle.placement_groups(calendars, (Meeting(1, (0,)),))
        assert groups is not None
        assert oracle.solve_cpsat(calendars, groups, 3, canonical=True) is not None
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_importing_the_oracle_does_not_load_ortools() -> None:
    """CP-SAT is imported only when a search gives up, so the CLI starts without it."""
    import subprocess
    import sys

    code = "import sys, confide.envs.calbench.oracle; print('ortools' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_oracle_breaks_ties_canonically_by_default_past_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A problem past the search's budget goes to CP-SAT, and the default answer is still
    the canonical one (lowest slot vector among the optima), as the generator and the
    audits rely on: many one-agent meetings over errands of one cost tie everywhere."""
    rng = random.Random(3)
    calendars = tuple(
        Calendar(
            a, tuple(Errand(a * 100 + s, 1) if rng.random() < 0.5 else None for s in range(12))
        )
        for a in range(2)
    )
    meetings = tuple(Meeting(m + 1, (m % 2,)) for m in range(8))
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    chosen = oracle.search_canonical(groups, 10**7)
    assert isinstance(chosen, list)
    canonical = oracle._solution(calendars, groups, chosen)
    monkeypatch.setattr(oracle, "SEARCH_NODES", 0)
    monkeypatch.setattr(oracle._DISK, "get_or_compute", lambda problem, compute: compute())
    oracle._solve_cached.cache_clear()
    try:
        assert oracle.solve_oracle(calendars, meetings) == canonical
    finally:
        oracle._solve_cached.cache_clear()


def test_a_free_problem_with_many_meetings_keeps_the_tie_break_in_range() -> None:
    """Empty calendars: every placement costs 0 (bound 0), and 16 meetings over 32 slots
    would need 32**16 = 2**80 for one tie-break chunk; the chunks stay below 2**50, so
    CP-SAT still returns the lowest slot vector."""
    calendars = tuple(Calendar(a, (None,) * 32) for a in range(2))
    meetings = tuple(Meeting(m + 1, (m % 2,)) for m in range(16))
    assert _both(calendars, meetings) == 1
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None
    found = oracle.solve_cpsat(calendars, groups, 32, canonical=True)
    assert found is not None
    assert found.assignments == {m + 1: m // 2 for m in range(16)}


@given(
    scale=st.integers(min_value=1, max_value=2**40),
    radix=st.integers(min_value=2, max_value=64),
    limit=st.integers(min_value=0, max_value=60),
)
def test_the_fold_width_is_the_largest_that_fits_in_fifty_bits(
    scale: int, radix: int, limit: int
) -> None:
    """`_fit_width`'s contract: the largest L <= limit with scale * radix**L < 2**50."""
    width = oracle._fit_width(scale, radix, limit)
    assert 0 <= width <= limit
    assert width == 0 or scale * radix**width < 2**50
    assert width == limit or scale * radix ** (width + 1) >= 2**50
