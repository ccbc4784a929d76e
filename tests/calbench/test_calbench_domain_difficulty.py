"""Feasible-assignment fraction d: exact counting against CP-SAT enumeration and brute
force, a hand-computed case, degenerate cells, tertile buckets."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from confide.envs.calbench.difficulty import (
    DifficultyTooHardError,
    count_feasible_cpsat,
    count_injective_avoiding,
    feasible_fraction,
    forbidden_slots,
    rook_numbers,
    tertile_buckets,
)
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem, Slot


def test_hand_computed_case() -> None:
    cals = (
        Calendar(0, (Errand(1, 1, blocked=True), None, None)),
        Calendar(1, (None, Errand(2, 1, blocked=True), None)),
    )
    meetings = [Meeting(1, (0,), speaker_order=(0,)), Meeting(2, (0, 1), speaker_order=(0, 1))]
    assert forbidden_slots(cals, meetings) == (frozenset({0}), frozenset({0, 1}))
    # forbidden pairs (M1,0), (M2,0), (M2,1): r = 1, 3, 1 and F = 6 - 3*2 + 1*1 = 1
    assert rook_numbers(3, [frozenset({0}), frozenset({0, 1})]) == (1, 3, 1)
    score = feasible_fraction(cals, meetings)
    assert (score.feasible_count, score.total_count) == (1, 6)
    assert score.fraction == pytest.approx(1 / 6)
    assert count_feasible_cpsat(cals, meetings) == 1


def test_all_movable_is_degenerate_and_capacity_counts() -> None:
    cals = tuple(
        Calendar(a, (Errand(10 * a, 1), None, Errand(10 * a + 1, 2), None)) for a in range(2)
    )
    meetings = [Meeting(1, (0, 1), speaker_order=(0, 1)), Meeting(2, (1,), speaker_order=(1,))]
    assert feasible_fraction(cals, meetings).fraction == 1.0
    too_many = [*meetings, Meeting(3, (1,), speaker_order=(1,))]
    assert feasible_fraction(cals, too_many).feasible_count == 0  # agent 1: 2 errands + 3 meetings
    assert count_feasible_cpsat(cals, too_many) == 0


def test_prior_meeting_slots_are_ruled_out() -> None:
    prior = MeetingItem(9, 1, (0, 1))
    cals = (Calendar(0, (prior, None, None)), Calendar(1, (prior, None, None)))
    meetings = [Meeting(1, (0,), speaker_order=(0,))]
    assert feasible_fraction(cals, meetings).feasible_count == 2
    assert count_feasible_cpsat(cals, meetings) == 2


def _random_case(rng: random.Random) -> tuple[tuple[Calendar, ...], list[Meeting]]:
    n_agents, n_slots = rng.randint(1, 4), rng.randint(1, 7)
    prior_slot = rng.randrange(n_slots) if n_agents > 1 and rng.random() < 0.3 else None
    cals = []
    for a in range(n_agents):
        slots: list[Slot] = []
        for s in range(n_slots):
            if s == prior_slot and a < 2:
                slots.append(MeetingItem(99, 1, (0, 1)))
                continue
            r = rng.random()
            slots.append(None if r < 0.45 else Errand(10 * a + s, 1, blocked=r > 0.8))
        cals.append(Calendar(a, tuple(slots)))
    meetings = []
    for k in range(rng.randint(1, min(4, n_slots))):
        parts = tuple(sorted(rng.sample(range(n_agents), rng.randint(1, n_agents))))
        meetings.append(Meeting(k + 1, parts, speaker_order=parts))
    return tuple(cals), meetings


def test_exact_count_equals_cpsat_enumeration_on_random_small_cases() -> None:
    rng = random.Random(2026)
    nonzero = 0
    for _ in range(120):
        cals, meetings = _random_case(rng)
        exact = feasible_fraction(cals, meetings)
        assert exact.feasible_count == count_feasible_cpsat(cals, meetings)
        assert exact.total_count == math.perm(cals[0].num_slots, len(meetings))
        nonzero += exact.feasible_count > 0
    assert nonzero >= 50


def test_count_matches_brute_force_on_random_boards() -> None:
    rng = random.Random(7)
    for _ in range(200):
        n_slots, n_meetings = rng.randint(1, 7), rng.randint(0, 5)
        board = [
            frozenset(s for s in range(n_slots) if rng.random() < 0.4) for _ in range(n_meetings)
        ]
        brute = sum(
            all(p[m] not in board[m] for m in range(n_meetings))
            for p in itertools.permutations(range(n_slots), n_meetings)
        )
        assert count_injective_avoiding(n_slots, board) == brute


def test_narrow_sweeps_match_brute_force() -> None:
    # max_frontier=2 forces the transposed sweep and the split into components wherever
    # they are narrower; every count that is not refused must still be exact
    rng = random.Random(11)
    counted = 0
    for _ in range(200):
        n_slots, n_meetings = rng.randint(1, 7), rng.randint(0, 5)
        board = [
            frozenset(s for s in range(n_slots) if rng.random() < 0.3) for _ in range(n_meetings)
        ]
        brute = sum(
            all(p[m] not in board[m] for m in range(n_meetings))
            for p in itertools.permutations(range(n_slots), n_meetings)
        )
        try:
            assert count_injective_avoiding(n_slots, board, max_frontier=2) == brute
            counted += 1
        except DifficultyTooHardError:
            pass
    assert counted > 150


def test_one_slot_forbidden_to_many_meetings_is_swept_over_meetings() -> None:
    # the sweep over slots would hold 4 meetings in its frontier, the sweep over meetings 1
    board = [frozenset({0})] * 4
    assert rook_numbers(6, board, max_frontier=1) == (1, 4, 0, 0, 0)
    assert count_injective_avoiding(6, board, max_frontier=1) == math.perm(5, 4)


def test_large_sparse_board_is_exact_and_fast() -> None:
    # 40 meetings, 96 slots: every meeting forbidden on one private slot -> derangement-like
    # closed form: sum_k (-1)^k C(40, k) P(96 - k, 40 - k).
    board = [frozenset({m}) for m in range(40)]
    expected = sum((-1) ** k * math.comb(40, k) * math.perm(96 - k, 40 - k) for k in range(41))
    assert count_injective_avoiding(96, board) == expected


def test_refuses_when_frontier_too_wide() -> None:
    board = [frozenset({0, 1, 2, 3}) for _ in range(4)]
    assert count_injective_avoiding(6, board) == math.perm(2, 4) == 0
    with pytest.raises(DifficultyTooHardError, match="frontier width 4"):
        count_injective_avoiding(8, board, max_frontier=3)


def test_tertile_buckets() -> None:
    split = tertile_buckets([0.9, 0.1, 0.5, 0.4, 0.8, 0.2])
    assert split.buckets == ("easy", "hard", "medium", "medium", "easy", "hard")
    assert not split.degenerate and split.distinct_values == 6 and split.boundary_ties == 0
    tied = tertile_buckets([0.5, 0.5, 0.5, 0.2, 0.9, 0.9])
    assert tied.buckets == ("medium", "medium", "hard", "hard", "easy", "easy")
    assert tied.boundary_ties == 1
    flat = tertile_buckets([1.0, 1.0, 1.0])
    assert flat.degenerate and flat.buckets == (None, None, None)
