"""CP-SAT oracle and greedy baseline: hand-computed cases, brute-force cross-check with the
canonical tie-break, and agreement with the published optimal costs of both public
fixture files."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest

from confide.envs.calbench.fixtures import load_fixture_file
from confide.envs.calbench.oracle import solve_greedy, solve_oracle
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem, Slot

SHARED = Path(
    os.environ.get("CONFIDE_SHARED") or Path(__file__).resolve().parents[2].parent / "shared"
)
FIXTURES = SHARED / "anchors" / "calbench" / "tasks"


def E(i: int, c: int, blocked: bool = False) -> Errand:
    return Errand(i, c, blocked)


def test_tie_break_prefers_lowest_slot_and_attributes_cost() -> None:
    cals = (
        Calendar(0, (E(1, 1), None, E(2, 3), None)),
        Calendar(1, (None, E(3, 2), E(4, 1, blocked=True), E(5, 1))),
    )
    m = Meeting(1, (0, 1), speaker_order=(0, 1))
    sol = solve_oracle(cals, [m])
    assert sol is not None
    # slot 0 costs 1 (agent 0), slot 1 costs 2, slot 2 is blocked, slot 3 costs 1 (agent 1).
    assert (sol.cost, sol.assignments, sol.per_agent_cost) == (1, {1: 0}, (1, 0))


def test_moving_a_prior_meeting_can_be_optimal() -> None:
    m9 = MeetingItem(9, 1, (0, 1))
    cals = (
        Calendar(0, (m9, E(1, 3), E(2, 3), None)),
        Calendar(1, (m9, None, None, None)),
        Calendar(2, (None, E(3, 3), E(4, 3), E(5, 3))),
    )
    m1 = Meeting(1, (0, 2), speaker_order=(0, 2))
    sol = solve_oracle(cals, [m1])
    assert sol is not None
    # M1 at slot 0 forces M9 away; M9 to slot 3 costs 1 on each of its 2 calendars.
    assert sol.cost == 2 and sol.assignments == {1: 0} and sol.prior_moves == {9: 3}
    assert sol.per_agent_cost == (1, 1, 0)
    greedy = solve_greedy(cals, [m1])  # never bumps: best is slot 3, errand cost 3
    assert (greedy.cost, greedy.assignments, greedy.per_agent_cost) == (3, {1: 3}, (0, 0, 3))


def test_infeasible_cases() -> None:
    full = Calendar(0, (E(1, 1), E(2, 1)))
    other = Calendar(1, (None, None))
    m = Meeting(1, (0, 1), speaker_order=(0, 1))
    assert solve_oracle((full, other), [m]) is None  # no room for the displaced errand
    blocked = Calendar(0, (E(1, 1, True), None))
    blocked_too = Calendar(1, (None, E(2, 1, True)))
    assert solve_oracle((blocked, blocked_too), [m]) is None
    greedy = solve_greedy((blocked, blocked_too), [m])
    assert greedy.cost is None and greedy.failed_meeting == 1


def test_greedy_moves_displaced_errands_to_lowest_free_slot() -> None:
    cals = (
        Calendar(0, (E(1, 1), E(2, 2), None, None)),
        Calendar(1, (E(3, 1), None, E(4, 5), None)),
    )
    meetings = [Meeting(1, (0, 1), speaker_order=(0, 1)), Meeting(2, (0,), speaker_order=(0,))]
    greedy = solve_greedy(cals, meetings)
    # M1: slot 0 costs 2, slot 1 costs 2, slot 2 costs 5, slot 3 costs 0 -> slot 3.
    # M2 (agent 0 only): slot 2 is free -> cost 0.
    assert (greedy.cost, greedy.assignments) == (0, {1: 3, 2: 2})
    oracle = solve_oracle(cals, meetings)
    assert oracle is not None and oracle.cost == 0 and oracle.assignments == {1: 3, 2: 2}


def _random_case(rng: random.Random) -> tuple[tuple[Calendar, ...], list[Meeting]]:
    n_agents, n_slots = rng.randint(1, 3), rng.randint(2, 5)
    cals = []
    for a in range(n_agents):
        slots: list[Slot] = []
        for s in range(n_slots):
            r = rng.random()
            slots.append(None if r < 0.5 else E(10 * a + s, rng.randint(1, 3), r > 0.85))
        cals.append(Calendar(a, tuple(slots)))
    meetings = []
    for k in range(rng.randint(1, 3)):
        parts = tuple(sorted(rng.sample(range(n_agents), rng.randint(1, n_agents))))
        meetings.append(Meeting(k + 1, parts, speaker_order=parts))
    return tuple(cals), meetings


def _brute_force(
    cals: tuple[Calendar, ...], meetings: list[Meeting]
) -> tuple[int, tuple[int, ...]] | None:
    n_slots = cals[0].num_slots
    load = [sum(x is not None for x in c.slots) for c in cals]
    for m in meetings:
        for p in m.participants:
            load[p] += 1
    if any(x > n_slots for x in load):
        return None
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in itertools.product(range(n_slots), repeat=len(meetings)):
        used: set[tuple[int, int]] = set()
        cost = 0
        ok = True
        for m, s in zip(meetings, combo, strict=True):
            for p in m.participants:
                item = cals[p].slots[s]
                if (p, s) in used or (isinstance(item, Errand) and item.blocked):
                    ok = False
                used.add((p, s))
                cost += item.cost if isinstance(item, Errand) else 0
        if ok and (best is None or (cost, combo) < best):
            best = (cost, combo)
    return best


def test_oracle_matches_brute_force_with_canonical_tie_break() -> None:
    rng = random.Random(11)
    feasible = 0
    for _ in range(100):
        cals, meetings = _random_case(rng)
        expected = _brute_force(cals, meetings)
        sol = solve_oracle(cals, meetings)
        if expected is None:
            assert sol is None
            continue
        feasible += 1
        assert sol is not None
        assert sol.cost == expected[0]
        assert tuple(sol.assignments[m.meeting_id] for m in meetings) == expected[1]
        assert sum(sol.per_agent_cost) == sol.cost
        fast = solve_oracle(cals, meetings, canonical=False)
        assert fast is not None and fast.cost == sol.cost
    assert feasible == 54


def test_oracle_is_deterministic() -> None:
    rng = random.Random(5)
    for _ in range(10):
        cals, meetings = _random_case(rng)
        assert solve_oracle(cals, meetings) == solve_oracle(cals, meetings)


def test_inconsistent_calendars_are_refused() -> None:
    cals = (Calendar(0, (MeetingItem(9, 1, (0, 1)), None)), Calendar(1, (None, None)))
    with pytest.raises(ValueError, match="missing from the calendar of agent 1"):
        solve_oracle(cals, [Meeting(1, (0,), speaker_order=(0,))])


@pytest.mark.slow
def test_oracle_equals_published_optimal_cost_on_public_fixtures() -> None:
    files = sorted(FIXTURES.glob("*_full.jsonl"))
    if len(files) < 2:
        pytest.skip(f"public CalBench fixtures not found under {FIXTURES}")
    agree = total = 0
    for path in files:
        for sc in load_fixture_file(path):
            sol = solve_oracle(sc.to_calendars(), sc.to_meetings(), canonical=False)
            assert sc.published is not None and sol is not None
            total += 1
            agree += sol.cost == sc.published.optimal_cost
    print(f"\noracle agrees with published optimal.cost on {agree}/{total} fixture tasks")
    assert (agree, total) == (216, 216)


def test_prior_meeting_copies_are_charged_per_calendar() -> None:
    m9 = (MeetingItem(9, 2, (0, 1)), MeetingItem(9, 1, (0, 1)))
    cals = (
        Calendar(0, (m9[0], None, E(1, 1, True))),
        Calendar(1, (m9[1], None, None)),
        Calendar(2, (None, E(2, 1, True), E(3, 1, True))),
    )
    # M1 can only use slot 0, so M9 moves to slot 1: 2 on agent 0's copy, 1 on agent 1's.
    sol = solve_oracle(cals, [Meeting(1, (0, 2), speaker_order=(0, 2))])
    assert sol is not None
    assert (sol.cost, sol.assignments, sol.prior_moves, sol.per_agent_cost) == (
        3,
        {1: 0},
        {9: 1},
        (2, 1, 0),
    )
    with pytest.raises(ValueError, match="incoming meeting M9 is already on the calendars"):
        solve_oracle(cals, [Meeting(9, (0, 1), speaker_order=(0, 1))])
