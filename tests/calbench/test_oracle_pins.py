"""The oracle's building blocks (envs/calbench/oracle.py) pinned on hand-computed cases:
what placing a meeting at a slot costs (the task generator prices witness slots with
it), the calendars it refuses, and where the greedy baseline sends a displaced errand."""

from __future__ import annotations

import pytest

from confide.envs.calbench.oracle import check_calendars, placement_cost, solve_greedy
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem

PRIOR = MeetingItem(9, 2, (0, 1))
CALENDARS = (
    Calendar(0, (Errand(1, 2), None, PRIOR, Errand(2, 1, blocked=True))),
    Calendar(1, (Errand(3, 3), None, PRIOR, None)),
)


def test_placement_cost_sums_the_errands_under_the_meeting() -> None:
    """Slot 0: errands of 2 and 3; slot 1: free; slot 2: a prior meeting (charged when it
    moves, not here); slot 3: agent 0's errand there is blocked."""
    assert placement_cost(CALENDARS, (0, 1), 0) == 5
    assert placement_cost(CALENDARS, (1,), 0) == 3
    assert placement_cost(CALENDARS, (0, 1), 1) == 0
    assert placement_cost(CALENDARS, (0, 1), 2) == 0
    assert placement_cost(CALENDARS, (0, 1), 3) is None
    assert placement_cost(CALENDARS, (1,), 3) == 0


def test_calendars_of_different_lengths_or_out_of_order_are_refused() -> None:
    assert check_calendars(CALENDARS) == 4
    with pytest.raises(ValueError, match=r"different lengths \[2, 3\]"):
        check_calendars((Calendar(0, (None, None)), Calendar(1, (None, None, None))))
    with pytest.raises(ValueError, match="agent order"):
        check_calendars((Calendar(1, (None,)), Calendar(0, (None,))))
    with pytest.raises(ValueError, match="agent order"):  # two calendars of agent 0
        check_calendars((Calendar(0, (None,)), Calendar(0, (None,))))
    with pytest.raises(ValueError, match="at least one"):
        check_calendars(())


def test_the_refusal_names_the_first_inconsistency() -> None:
    """Two prior meetings, M8 and M9, each missing from agent 1's calendar: M8 comes first."""
    cals = (
        Calendar(0, (MeetingItem(8, 1, (0, 1)), MeetingItem(9, 1, (0, 1)))),
        Calendar(1, (None, None)),
    )
    with pytest.raises(ValueError, match=r"inconsistent calendars: Meeting M8 lists"):
        check_calendars(cals)


def test_greedy_sends_a_displaced_errand_to_a_free_slot_after_the_meeting() -> None:
    """A meeting of agents 0 and 1: slot 0 costs 1 (agent 0's errand), slot 1 costs 2,
    slot 2 is blocked for agent 1. Greedy takes slot 0 and the errand lands in agent 0's
    only free slot, 2."""
    cals = (
        Calendar(0, (Errand(1, 1), Errand(2, 2), None)),
        Calendar(1, (None, None, Errand(3, 1, blocked=True))),
    )
    greedy = solve_greedy(cals, [Meeting(1, (0, 1))])
    assert (greedy.cost, greedy.assignments, greedy.per_agent_cost) == (1, {1: 0}, (1, 0))


def test_greedy_places_a_meeting_on_a_single_calendar() -> None:
    greedy = solve_greedy((Calendar(0, (Errand(1, 2), None)),), [Meeting(1, (0,))])
    assert (greedy.cost, greedy.assignments, greedy.per_agent_cost) == (0, {1: 1}, (0,))


def test_greedy_breaks_a_tie_at_the_lowest_slot() -> None:
    greedy = solve_greedy((Calendar(0, (Errand(1, 1), None, None)),), [Meeting(1, (0,))])
    assert (greedy.cost, greedy.assignments) == (0, {1: 1})
