"""The oracle's search gives exactly CP-SAT's canonical solution (oracle.py: search first,
CP-SAT past the node budget), on every shipped task and on the public fixtures, for the
full stream and for scheduled subsets, on every cost scale a run solves on; and the
shipped suites never need CP-SAT (nor, so, its import)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from confide.envs.calbench import oracle
from confide.envs.calbench.env import load_tasks
from confide.envs.calbench.metrics import metric_scale, scaled_calendars
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem

SHARED = Path(
    os.environ.get("CONFIDE_SHARED") or Path(__file__).resolve().parents[2].parent / "shared"
)
FIXTURES = SHARED / "anchors" / "calbench" / "tasks"


def _problems(
    tasks: list[Scenario], subsets: int, seed: int
) -> list[tuple[tuple[Calendar, ...], tuple[Meeting, ...]]]:
    """Per task and cost scale (original, metric, display): the full stream and `subsets`
    random subsets of it (what a game's scheduled meetings can be)."""
    rng = random.Random(seed)
    out = []
    for task in tasks:
        meetings = task.to_meetings()
        for scale in {None: None, "m": metric_scale(task), "d": task.cost_display}.values():
            calendars = scaled_calendars(task, scale or None)
            out.append((calendars, meetings))
            out.extend(
                (calendars, tuple(m for m in meetings if rng.random() < 0.7))
                for _ in range(subsets)
            )
    return out


def _assert_search_equals_cpsat(
    problems: list[tuple[tuple[Calendar, ...], tuple[Meeting, ...]]],
) -> int:
    searched = 0
    for calendars, meetings in problems:
        n_slots = oracle.check_calendars(calendars)
        groups = oracle.placement_groups(calendars, meetings)
        if groups is None:
            continue
        chosen = oracle.search_canonical(groups, oracle.SEARCH_NODES)
        assert chosen is not False  # the benchmark's tasks never need CP-SAT
        found = None if chosen is None else oracle._solution(calendars, groups, chosen)
        assert found == oracle.solve_cpsat(calendars, groups, n_slots, canonical=True)
        searched += 1
    return searched


def test_search_equals_cpsat_on_the_shipped_suites() -> None:
    tasks = [*load_tasks("tiny", None), *load_tasks("canonical", None)]
    assert _assert_search_equals_cpsat(_problems(tasks, subsets=1, seed=3)) >= 500


@pytest.mark.slow
def test_search_equals_cpsat_on_the_public_fixtures() -> None:
    files = sorted(FIXTURES.glob("*_full.jsonl"))
    if len(files) < 2:
        pytest.skip(f"public CalBench fixtures not found under {FIXTURES}")
    tasks = [t for f in files for t in load_tasks(None, str(f))]
    assert len(tasks) == 216
    assert _assert_search_equals_cpsat(_problems(tasks, subsets=1, seed=4)) >= 1200


def test_past_the_node_budget_cpsat_gives_the_same_solution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m9 = MeetingItem(9, 1, (0, 1))
    calendars = (
        Calendar(0, (m9, Errand(1, 3), Errand(2, 1), None)),
        Calendar(1, (m9, None, Errand(3, 2), None)),
        Calendar(2, (None, Errand(4, 3), Errand(5, 3), Errand(6, 1))),
    )
    meetings = (Meeting(1, (0, 2), speaker_order=(0, 2)), Meeting(2, (1,), speaker_order=(1,)))
    groups = oracle.placement_groups(calendars, meetings)
    assert groups is not None and oracle.search_canonical(groups, 1) is False
    searched = oracle.solve_oracle(calendars, meetings)
    oracle._solve_cached.cache_clear()
    monkeypatch.setattr(oracle, "SEARCH_NODES", 0)
    assert oracle.solve_oracle(calendars, meetings) == searched
    oracle._solve_cached.cache_clear()
    # M1 at slot 3 (agent 2's errand costs 1) and M2 at slot 1: 1 in all; M9 stays
    assert searched is not None
    assert (searched.cost, searched.assignments, searched.prior_moves) == (1, {1: 3, 2: 1}, {})


def test_the_shipped_suites_never_reach_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("CP-SAT was needed")

    monkeypatch.setattr(oracle, "solve_cpsat", refuse)
    oracle._solve_cached.cache_clear()
    try:
        for task in [*load_tasks("tiny", None), *load_tasks("canonical", None)]:
            assert oracle.solve_oracle(task.to_calendars(), task.to_meetings()) is not None
    finally:
        oracle._solve_cached.cache_clear()
